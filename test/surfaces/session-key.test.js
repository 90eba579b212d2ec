// MCP_SESSION_KEY_FILE over real HTTP with the bridge process really restarted (node dist/index.js,
// twice). The bug: session ids (2025 revisions) were signed with a key made at each start, so after a
// restart Claude Code 2.1.197 and opencode 1.18.33 reconnected their GET /mcp stream with the old id,
// got 404, and opened no stream again: tools/list_changed after the restart never reached them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { rpc, until } from '../helpers.js';
import { SessionKeyFileError, loadSessionKey } from '../../dist/surfaces/session-key.js';
import { LIST_CHANGED, VERSION, initialize, luaTool, openStream, spawnBridge, startProcess, stop, tempDir } from './bridge-process.js';

test('bug: after a restart a 2025 client\'s GET /mcp got 404 and it stopped listening; with MCP_SESSION_KEY_FILE the old id gets its stream and the list_changed after the restart (real process, real file)', async (t) => {
  const space = tempDir(t);
  const keyFile = join(space.dir, 'session.key');
  const config = join(space.dir, 'bridge.json');
  writeFileSync(config, JSON.stringify({ tools: [luaTool('one')] }));
  const env = { MCP_SESSION_KEY_FILE: keyFile, CC_CONFIG: config };

  const first = await startProcess(space, env);
  assert.match(first.out.stdout + first.out.stderr, /session ids signed with the key made now in \S+session\.key \(MCP_SESSION_KEY_FILE\)/);
  const text = readFileSync(keyFile, 'latin1');
  assert.match(text, /^[0-9a-f]{64}\n$/);
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(space.dir).sort(), ['bridge.json', 'session.key'], 'no temporary file is left');
  const id = await initialize(first.mcpUrl);
  const before = await openStream(first.mcpUrl, id);
  assert.equal(before.status, 200);
  before.close();
  const r1 = await stop(first);

  const second = await startProcess(space, env);
  assert.match(second.out.stdout + second.out.stderr, /session ids signed with the key read from \S+session\.key/);
  // the client reconnects its stream with the id it had: the stream opens, no new initialize
  const after = await openStream(second.mcpUrl, id);
  assert.equal(after.status, 200, after.body);
  // and a tool change after the restart reaches it
  writeFileSync(config, JSON.stringify({ tools: [luaTool('one'), luaTool('two')] }));
  assert.equal((await fetch(new URL('/reload', second.mcpUrl), { method: 'POST' })).status, 200);
  await until(() => after.events.length === 1);
  assert.deepEqual(after.events[0].json, LIST_CHANGED);
  // POST with the old id is a session too (not the 404 a stale id gets)
  const list = await rpc(second.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': VERSION, 'mcp-session-id': id });
  assert.equal(list.status, 200, list.text);
  assert.ok(list.json.result.tools.some((tool) => tool.name === 'two'));
  // a forged id still gets 404
  const forged = await openStream(second.mcpUrl, `${id.slice(0, 33)}${id[33] === '0' ? '1' : '0'}${id.slice(34)}`);
  assert.equal(forged.status, 404);
  after.close();
  const r2 = await stop(second);
  assert.equal(readFileSync(keyFile, 'latin1'), text, 'the key file is read, never rewritten');
  for (const r of [r1, r2]) assert.ok(!r.stdout.includes(text.trim()) && !r.stderr.includes(text.trim()), 'the key is never logged');

  // without the file (as before): the id from before the restart is 404, so the client must initialize again
  const plain = await startProcess(space, { CC_CONFIG: config });
  assert.doesNotMatch(plain.out.stdout + plain.out.stderr, /session ids signed/);
  const stale = await openStream(plain.mcpUrl, id);
  assert.equal(stale.status, 404);
  assert.match(stale.body, /Session not found: this Mcp-Session-Id was not issued by this bridge \(it restarted without MCP_SESSION_KEY_FILE, its key changed, or the id is made up\)/);
  const staleAgain = await initialize(plain.mcpUrl);
  await stop(plain);
  const third = await startProcess(space, {});
  assert.equal((await openStream(third.mcpUrl, staleAgain)).status, 404, 'each start without the file makes a new key');
  await stop(third);
});

test('a bad MCP_SESSION_KEY_FILE stops the start (exit 2) naming the file and why; never a fresh key instead, never the contents', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'session.key');
  const secret = 'hunter2!'.repeat(8);
  const good = `${'ab'.repeat(32)}\n`;
  const cases = [
    [secret.slice(0, 64), 0o600, /does not hold 64 lowercase hex digits/],
    [`${'AB'.repeat(32)}\n`, 0o600, /does not hold 64 lowercase hex digits/],
    [good.slice(0, 40), 0o600, /is 40 bytes; expected 64 lowercase hex digits and a newline/],
    ['', 0o600, /is 0 bytes/],
    [`${good}\n`, 0o600, /is 66 bytes/],
    [good, 0o644, /its mode 0644 lets group or others at the key .*chmod 600 it/],
    [good, 0o620, /its mode 0620 lets group or others/],
  ];
  for (const [text, mode, reason] of cases) {
    rmSync(file, { force: true });
    writeFileSync(file, text, { mode });
    chmodSync(file, mode);
    const r = await spawnBridge({ MCP_SESSION_KEY_FILE: file }).exited;
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^cc-mcp-bridge: invalid session key file: MCP_SESSION_KEY_FILE \S+session\.key: /);
    assert.match(r.stderr, reason);
    assert.doesNotMatch(r.stdout, /MCP endpoint/);
    assert.ok(!r.stderr.includes('hunter2') && !r.stderr.includes('abab'), 'the contents are never echoed');
    assert.equal(readFileSync(file, 'latin1'), text, 'a bad file is left as it is');
  }
  const missingDir = await spawnBridge({ MCP_SESSION_KEY_FILE: join(space.dir, 'nowhere', 'session.key') }).exited;
  assert.equal(missingDir.code, 2);
  assert.match(missingDir.stderr, /nowhere\/session\.key: cannot make the file: its directory \S+nowhere does not exist/);
  const isDir = await spawnBridge({ MCP_SESSION_KEY_FILE: space.dir }).exited;
  assert.equal(isDir.code, 2);
  assert.match(isDir.stderr, /: is not a file/);
  // the empty value is "no file" (a new key each start), as for the other file variables
  const empty = await startProcess(space, { MCP_SESSION_KEY_FILE: '' });
  assert.doesNotMatch(empty.out.stdout + empty.out.stderr, /session ids signed/);
  await stop(empty);
});

test('session key file (in process): a good file without its newline is read; a path through a file, a new file made, and (not as root) unreadable or unwritable places throw with the errno', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'session.key');
  writeFileSync(file, 'cd'.repeat(32), { mode: 0o600 });
  const loaded = loadSessionKey(file);
  assert.equal(loaded.key.toString('hex'), 'cd'.repeat(32));
  assert.equal(loaded.made, false);
  const isKeyError = (pattern) => (err) => err instanceof SessionKeyFileError && err.code === 'ERR_SESSION_KEY_FILE' && pattern.test(err.message);
  assert.throws(() => loadSessionKey(join(file, 'inner')), isKeyError(/session\.key\/inner: cannot read the file \(ENOTDIR\)/));
  const fresh = join(space.dir, 'fresh.key');
  const made = loadSessionKey(fresh);
  assert.equal(made.made, true);
  assert.deepEqual(readdirSync(space.dir).sort(), ['fresh.key', 'session.key'], 'no temp file stays');
  assert.equal(readFileSync(fresh, 'latin1'), `${made.key.toString('hex')}\n`);
  assert.equal(statSync(fresh).mode & 0o777, 0o600);
  assert.equal(loadSessionKey(fresh).key.toString('hex'), made.key.toString('hex'));
  if (process.getuid?.() === 0) return; // root reads and writes any file: the EACCES cases cannot happen
  const locked = join(space.dir, 'locked');
  mkdirSync(locked, { mode: 0o700 });
  const inner = join(locked, 'session.key');
  writeFileSync(inner, 'cd'.repeat(32), { mode: 0o600 });
  chmodSync(inner, 0o200);
  assert.throws(() => loadSessionKey(inner), isKeyError(/cannot read the file \(EACCES\)/));
  t.after(() => chmodSync(locked, 0o700));
  chmodSync(locked, 0o500);
  assert.throws(() => loadSessionKey(join(locked, 'new.key')), isKeyError(/new\.key: cannot make the file \(EACCES\)/));
  chmodSync(locked, 0o000);
  assert.throws(() => loadSessionKey(inner), isKeyError(/cannot read the file \(EACCES\)/));
});

test('bug: a leftover temporary key file of a bridge that crashed under the same pid (PID 1 in a container, every start) stopped every later start with EEXIST; the temporary name is random now', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'session.key');
  // what a crash between making the temporary file and linking it leaves (the name before the fix)
  writeFileSync(`${file}.${process.pid}.tmp`, 'ab'.repeat(10));
  const made = loadSessionKey(file);
  assert.equal(made.made, true);
  assert.equal(readFileSync(file, 'latin1'), `${made.key.toString('hex')}\n`);
  assert.deepEqual(readdirSync(space.dir).sort(), ['session.key', `session.key.${process.pid}.tmp`], 'the leftover is left alone, no new temporary file stays');
});

test('session key file at its edges (found by mutation testing): 65 bytes with a stray first character, or a mode only others may read, are refused; a file another process made and removed again is an error, not an endless retry', (t) => {
  const space = tempDir(t);
  const isKeyError = (pattern) => (err) => err instanceof SessionKeyFileError && pattern.test(err.message);
  const file = join(space.dir, 'session.key');
  // the right size for a key and its newline, but a character before the 64 digits
  writeFileSync(file, `g${'cd'.repeat(32)}`, { mode: 0o600 });
  assert.throws(() => loadSessionKey(file), isKeyError(/does not hold 64 lowercase hex digits/));
  writeFileSync(file, `${'cd'.repeat(32)}\n`, { mode: 0o600 });
  chmodSync(file, 0o604);
  assert.throws(() => loadSessionKey(file), isKeyError(/its mode 0604 lets group or others at the key/));
  chmodSync(file, 0o600);
  assert.equal(loadSessionKey(file).key.toString('hex'), 'cd'.repeat(32));
  // link() says the path exists (another bridge won the race), but the file is gone when read
  const gone = join(space.dir, 'gone.key');
  let links = 0;
  const taken = () => {
    links++;
    throw Object.assign(new Error('EEXIST: file already exists'), { code: 'EEXIST' });
  };
  assert.throws(() => loadSessionKey(gone, taken), isKeyError(/gone\.key: was made by another process and is gone again/));
  assert.equal(links, 2, 'made once, read again, made once more, then given up');
  assert.deepEqual(readdirSync(space.dir).sort(), ['session.key'], 'no temporary file stays');
});
