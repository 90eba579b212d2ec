// read-file and write-file end to end: the real bridge, mcp-computer in the Lua 5.2 harness, MCP
// over HTTP. Content moves in frame-sized base64 pieces with a running Adler-32 on both sides; a
// write is read back from the disk. Tests make real corruption with patched copies of the program.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { describeLua } from './lua-env.js';
import { PROGRAM } from './computer.js';
import { bridgeFor, callError, callOk, linkedComputer, programWithout, textOf } from './mcp-helpers.js';

const T = { timeout: 120000 };
const BIG = { MCP_MAX_BODY_BYTES: String(4 * 1024 * 1024) };

/** 1 MiB holding every byte value, in an order that is not a plain repetition. */
function allBytes(size = 1024 * 1024) {
  const buf = Buffer.alloc(size);
  let x = 12345;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    buf[i] = i < 256 ? i : (x >> 8) & 255;
  }
  return buf;
}

/** The Adler-32 of RFC 1950, written out here independently of the bridge's. */
function adler(buf) {
  let a = 1;
  let b = 0;
  for (const byte of buf) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return `adler32:${(b * 65536 + a).toString(16).padStart(8, '0')}`;
}

/** The program with `from` replaced by `to` (exactly once): a computer that corrupts data. */
function patched(from, to) {
  const source = readFileSync(PROGRAM, 'utf8');
  assert.equal(source.split(from).length, 2, `the program contains ${from} once`);
  return source.replace(from, to);
}

describeLua('files: read-file and write-file', () => {
  test('1 MiB of all 256 byte values written and read back, checksum checked on both sides', T, async (t) => {
    const bridge = await bridgeFor(t, { ...BIG, CC_EXEC_LUA: 'off', CC_EXEC_TIMEOUT_MS: '60000' });
    const c = await linkedComputer(t, bridge, { id: 1 });
    const data = allBytes();
    const wrote = await callOk(bridge, 'write-file', { computerId: 1, path: 'data/blob.bin', content: data.toString('base64'), encoding: 'base64' });
    assert.equal(wrote.structuredContent.bytes, data.length);
    assert.equal(wrote.structuredContent.checksum, adler(data));
    assert.match(textOf(wrote), /^wrote 1048576 bytes to data\/blob\.bin on computer 1 \(Label: null\); read back and checked \(adler32:[0-9a-f]{8}\)\.$/);
    assert.ok(readFileSync(path.join(c.root, 'data/blob.bin')).equals(data), 'the file on the computer holds exactly the bytes');
    const read = await callOk(bridge, 'read-file', { computerId: 1, path: 'data/blob.bin' });
    assert.equal(read.structuredContent.encoding, 'base64');
    assert.equal(read.structuredContent.size, data.length);
    assert.equal(read.structuredContent.checksum, adler(data));
    assert.ok(Buffer.from(read.structuredContent.content, 'base64').equals(data), 'read back byte for byte');
    // every frame the computer sent fit CC's 128 KiB limit
    for (const frame of c.sent) assert.ok(Buffer.byteLength(frame) <= 131072, `a frame of ${Buffer.byteLength(frame)} bytes`);
    assert.ok(c.sent.filter((f) => f.includes('"data"')).length >= 10, 'the read came in pieces');
  });

  test('text: parents created, overwrite, append, read as text; a small --max-frame gets small pieces', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await linkedComputer(t, bridge, { id: 2, args: ['--max-frame', '4096'] });
    const line = 'Grüße aus dem Nether 🐢\n';
    await callOk(bridge, 'write-file', { computerId: 2, path: 'a/b/c/notes.txt', content: line.repeat(400) });
    await callOk(bridge, 'write-file', { computerId: 2, path: 'a/b/c/notes.txt', content: 'first\n' });
    const appended = await callOk(bridge, 'write-file', { computerId: 2, path: 'a/b/c/notes.txt', content: line.repeat(300), append: true });
    assert.equal(appended.structuredContent.append, true);
    const expected = `first\n${line.repeat(300)}`;
    assert.equal(readFileSync(path.join(c.root, 'a/b/c/notes.txt'), 'utf8'), expected);
    const read = await callOk(bridge, 'read-file', { computerId: 2, path: '/a/b/c/notes.txt' });
    assert.equal(read.structuredContent.encoding, 'text');
    assert.equal(textOf(read), expected);
    assert.equal(read.structuredContent.checksum, adler(Buffer.from(expected)));
    for (const frame of c.sent) assert.ok(Buffer.byteLength(frame) <= 4096, `a frame of ${Buffer.byteLength(frame)} bytes`);
    // an empty file, and a binary one asked for as text
    await callOk(bridge, 'write-file', { computerId: 2, path: 'empty', content: '' });
    assert.equal(readFileSync(path.join(c.root, 'empty'), 'utf8'), '');
    assert.equal(textOf(await callOk(bridge, 'read-file', { computerId: 2, path: 'empty' })), '');
    writeFileSync(path.join(c.root, 'bin'), Buffer.from([0xff, 0xfe, 0x00]));
    assert.match(await callError(bridge, 'read-file', { computerId: 2, path: 'bin', encoding: 'text' }), /^bin is not valid UTF-8 text \(3 bytes\); read it with "encoding": "base64"\.$/);
    assert.equal((await callOk(bridge, 'read-file', { computerId: 2, path: 'bin' })).structuredContent.content, '//4A');
  });

  test('CC\'s rules and messages: rom/ is read-only, .. cannot escape, a missing file, a folder', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_EXEC_LUA: 'off' });
    const c = await linkedComputer(t, bridge, { id: 3, files: { 'rom/startup.lua': 'x', 'dir/f': 'y' } });
    assert.equal(await callError(bridge, 'write-file', { computerId: 3, path: 'rom/evil.lua', content: 'x' }), '/rom/evil.lua: Access denied');
    assert.equal(await callError(bridge, 'write-file', { computerId: 3, path: 'rom/startup.lua', content: 'x', append: true }), '/rom/startup.lua: Access denied');
    // CC:Tweaked's fs.open answers nil, "/<path>: Invalid Path" above the root (FileSystem.getMount);
    // CraftOS-PC says "No such file" there (craftos-files.test.js)
    assert.equal(await callError(bridge, 'write-file', { computerId: 3, path: '../escape.txt', content: 'x' }), '/../escape.txt: Invalid Path');
    assert.equal(await callError(bridge, 'read-file', { computerId: 3, path: '../../etc/passwd' }), '/../../etc/passwd: Invalid Path');
    assert.ok(!existsSync(path.join(c.root, '..', 'escape.txt')), 'nothing was written outside the computer');
    assert.equal(await callError(bridge, 'read-file', { computerId: 3, path: 'nope.txt' }), '/nope.txt: No such file');
    assert.equal(await callError(bridge, 'read-file', { computerId: 3, path: 'dir' }), '/dir: Not a file');
    assert.equal(textOf(await callOk(bridge, 'read-file', { computerId: 3, path: 'rom/startup.lua' })), 'x');
  });

  test('a computer that corrupts what it writes: the read-back checksum says so, nothing is accepted', T, async (t) => {
    const bridge = await bridgeFor(t);
    const program = patched('local ok, err = pcall(h.write, data)', 'local ok, err = pcall(h.write, (data:gsub("^.", "#")))');
    await linkedComputer(t, bridge, { id: 4, files: { 'mcp-computer.lua': program } });
    const text = await callError(bridge, 'write-file', { computerId: 4, path: 'f.txt', content: 'hello world' });
    assert.match(text, /^checksum mismatch on computer 4 \(Label: null\): f\.txt read back from the disk after writing 11 bytes: the bridge computed adler32:[0-9a-f]{8}, the computer adler32:[0-9a-f]{8}\./);
  });

  test('a computer that corrupts what it sends: the piece\'s checksum does not match', T, async (t) => {
    const bridge = await bridgeFor(t);
    const program = patched('result.data = files.encode(data)', 'result.data = files.encode(data:reverse())');
    await linkedComputer(t, bridge, { id: 5, files: { 'mcp-computer.lua': program, 'f.txt': 'abcdef' } });
    const text = await callError(bridge, 'read-file', { computerId: 5, path: 'f.txt' });
    assert.match(text, /^checksum mismatch on computer 5 \(Label: null\): reading f\.txt bytes 0-6: the bridge computed adler32:[0-9a-f]{8}, the computer adler32:[0-9a-f]{8}\./);
  });

  test('a program too old for read-file / write-file: the update error', T, async (t) => {
    const bridge = await bridgeFor(t);
    await linkedComputer(t, bridge, { id: 6, files: { 'mcp-computer.lua': programWithout('read-file', 'write-file') } });
    for (const [tool, args] of [['read-file', { path: 'x' }], ['write-file', { path: 'x', content: 'y' }]]) {
      assert.match(await callError(bridge, tool, { computerId: 6, ...args }), new RegExp(`^computer 6 \\(Label: null\\) runs mcp-computer 0\\.1\\.0, which is too old to know "${tool}"; update it from the bridge: .*wget http://<bridge-host>:<link port>/mcp-computer\\.lua mcp-computer\\.lua`));
    }
  });

  test('mcp.readonly: read-file works, write-file is refused', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await linkedComputer(t, bridge, { id: 7, settings: { 'mcp.readonly': true }, files: { 'f.txt': 'keep' } });
    assert.equal(textOf(await callOk(bridge, 'read-file', { computerId: 7, path: 'f.txt' })), 'keep');
    assert.match(await callError(bridge, 'write-file', { computerId: 7, path: 'f.txt', content: 'x' }), /refused: write-file changes the computer/);
    assert.equal(readFileSync(path.join(c.root, 'f.txt'), 'utf8'), 'keep');
  });
});
