// MCP_SESSION_KEY_FILE named through a symlink whose target does not exist (a secrets volume not
// mounted yet, a link made before its file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSessionKey } from '../../dist/surfaces/session-key.js';

test('bug: an MCP_SESSION_KEY_FILE that is a symlink to a missing file made and dropped a key file thousands of times until the stack overflowed (RangeError, after ~5 s here); now it is a SessionKeyFileError naming the link and its target', () => {
  const dir = mkdtempSync(join(tmpdir(), 'session-key-link-'));
  try {
    const path = join(dir, 'key');
    symlinkSync('not-mounted/key', path);
    assert.throws(() => loadSessionKey(path), (err) => {
      assert.equal(err.code, 'ERR_SESSION_KEY_FILE', String(err));
      assert.equal(err.message, `MCP_SESSION_KEY_FILE ${path}: is a symbolic link to not-mounted/key, which does not exist: make that file (or let the bridge make it by naming it in MCP_SESSION_KEY_FILE), or remove the link`);
      return true;
    });
    // nothing left beside it
    assert.deepEqual(readdirSync(dir), ['key']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
