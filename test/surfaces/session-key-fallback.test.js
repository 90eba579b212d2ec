// MCP_SESSION_KEY_FILE on a file system without hard links (FAT, exFAT, some network and FUSE mounts):
// link() fails there with EPERM (or ENOTSUP, EOPNOTSUPP, ENOSYS) and the key file is put under its
// name with rename() instead. No such file system can be mounted unprivileged in CI, so link()'s
// failure comes through loadSessionKey's `link` seam (src/surfaces/session-key.ts); everything else
// (the temporary file, its mode, the rename, the directory sync, reading the file back) is the real
// file system.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SessionKeyFileError, loadSessionKey } from '../../dist/surfaces/session-key.js';
import { tempDir } from './bridge-process.js';

/** A link() that fails as on a file system without hard links, counting its calls. */
function noHardLinks(code) {
  const calls = [];
  const link = (existing, path) => {
    calls.push([existing, path]);
    throw Object.assign(new Error(`${code}: operation not permitted, link '${existing}' -> '${path}'`), { code, syscall: 'link' });
  };
  return { link, calls };
}

for (const code of ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']) {
  test(`session key file without hard links (link: ${code}): the key file is made by rename, whole, mode 0600, no temporary file left; the next start reads it`, (t) => {
    const space = tempDir(t);
    const file = join(space.dir, 'session.key');
    const { link, calls } = noHardLinks(code);
    const made = loadSessionKey(file, link);
    assert.equal(made.made, true);
    assert.equal(calls.length, 1, 'link() was tried first');
    assert.equal(calls[0][1], file);
    assert.match(calls[0][0], /session\.key\.\d+\.[0-9a-f]{12}\.tmp$/);
    assert.equal(readFileSync(file, 'latin1'), `${made.key.toString('hex')}\n`);
    assert.equal(made.key.length, 32);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(space.dir), ['session.key'], 'the temporary file was renamed, none stays');
    // the next start (same file system) reads the file: no link() needed
    const again = loadSessionKey(file, link);
    assert.deepEqual(again, { key: made.key, made: false });
    assert.equal(calls.length, 1);
  });
}

test('session key file without hard links: a rename that fails stops the start with its errno and leaves no temporary file; a link() error that is not "no hard links" is not taken for one', (t) => {
  const space = tempDir(t);
  const isKeyError = (pattern) => (err) => err instanceof SessionKeyFileError && pattern.test(err.message);
  // the path turns up as a directory between the check and the rename: rename() of a file onto it fails
  const file = join(space.dir, 'session.key');
  assert.throws(
    () =>
      loadSessionKey(file, () => {
        mkdirSync(file);
        throw Object.assign(new Error('EPERM'), { code: 'EPERM' });
      }),
    isKeyError(/session\.key: cannot make the file \(EISDIR\)/),
  );
  assert.deepEqual(readdirSync(space.dir), ['session.key']);
  assert.ok(statSync(file).isDirectory(), 'nothing was put in its place');
  // EIO from link() is a failure, not a file system without hard links: no rename
  const other = join(space.dir, 'other.key');
  assert.throws(
    () =>
      loadSessionKey(other, () => {
        throw Object.assign(new Error('EIO'), { code: 'EIO' });
      }),
    isKeyError(/other\.key: cannot make the file \(EIO\)/),
  );
  assert.deepEqual(readdirSync(space.dir), ['session.key'], 'no key file made, no temporary file left');
});
