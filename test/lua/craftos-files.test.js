// The file tools and identity on a real ComputerCraft runtime (CraftOS-PC: CC:Tweaked's own fs and
// ROM): the real bridge, MCP over HTTP. Checks that the errors are CC's own words and that binary
// content survives. Skipped with one line when CraftOS-PC is not on this machine.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeCraftos, useLinkedCraftos } from './craftos.js';
import { CC_ANSWERS, CRAFTOS_PC_DIFFERS, FS_PATHS_CODE } from './fs-paths.js';
import { callError, callOk, textOf } from './mcp-helpers.js';

const T = { timeout: 120000 };

describeCraftos('CraftOS-PC: file tools and identity', () => {
  const ctx = useLinkedCraftos({ id: 8, env: { MCP_MAX_BODY_BYTES: String(2 * 1024 * 1024), CC_EXEC_TIMEOUT_MS: '30000' } });

  test('list-computers: what CraftOS-PC says it is', T, async () => {
    const [me] = (await callOk(ctx.bridge, 'list-computers')).structuredContent.computers;
    assert.equal(me.computerId, 8);
    assert.equal(me.kind, 'computer');
    assert.equal(typeof me.advanced, 'boolean');
    assert.match(me.host, /^ComputerCraft /);
    assert.match(me.ccVersion, /^\d+\.\d+/);
    assert.ok(Array.isArray(me.peripherals));
  });

  test('256 KiB of every byte value written, read back and checked', T, async () => {
    const data = Buffer.alloc(256 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 8)) & 255;
    const wrote = await callOk(ctx.bridge, 'write-file', { computerId: 8, path: 'tmp/blob.bin', content: data.toString('base64'), encoding: 'base64' });
    assert.equal(wrote.structuredContent.bytes, data.length);
    const read = await callOk(ctx.bridge, 'read-file', { computerId: 8, path: 'tmp/blob.bin', encoding: 'base64' });
    assert.ok(Buffer.from(read.structuredContent.content, 'base64').equals(data));
    assert.equal(read.structuredContent.checksum, wrote.structuredContent.checksum);
    const listed = await callOk(ctx.bridge, 'list-files', { computerId: 8, path: 'tmp' });
    assert.deepEqual(listed.structuredContent.entries, [{ name: 'blob.bin', isDir: false, isReadOnly: false, size: data.length }]);
    await callOk(ctx.bridge, 'delete-file', { computerId: 8, path: 'tmp', recursive: true });
  });

  // The harness runs the same chunk (emulator.test.js) and must give CC_ANSWERS exactly.
  test('fs on paths above the root: CraftOS-PC agrees with CC:Tweaked except where pinned', T, async () => {
    const res = await callOk(ctx.bridge, 'exec-lua', { computerId: 8, code: FS_PATHS_CODE });
    const got = res.structuredContent.returns[0].value;
    assert.deepEqual(got, { ...CC_ANSWERS, ...CRAFTOS_PC_DIFFERS });
  });

  test('CC\'s own errors: rom/ read-only, .. cannot escape, missing files', T, async () => {
    const rom = await callError(ctx.bridge, 'write-file', { computerId: 8, path: 'rom/evil.lua', content: 'x' });
    assert.match(rom, /Access denied/);
    assert.match(await callError(ctx.bridge, 'delete-file', { computerId: 8, path: 'rom/startup.lua' }), /Access denied/);
    // a path above the root: CraftOS-PC's fs.open says "No such file" where CC:Tweaked's says
    // "Invalid Path" (FileSystem.getMount; the harness follows CC); delete-file's answer comes
    // from the program (fs.exists is false on both)
    assert.equal(await callError(ctx.bridge, 'write-file', { computerId: 8, path: '../escape.txt', content: 'x' }), '/../escape.txt: No such file');
    assert.equal(await callError(ctx.bridge, 'delete-file', { computerId: 8, path: '../outside' }), '/../outside: No such file');
    assert.equal(await callError(ctx.bridge, 'read-file', { computerId: 8, path: 'no/such/file' }), '/no/such/file: No such file');
    assert.equal(await callError(ctx.bridge, 'read-file', { computerId: 8, path: 'rom' }), '/rom: Not a file');
    assert.equal(await callError(ctx.bridge, 'write-file', { computerId: 8, path: 'rom/evil.lua', content: 'x' }), '/rom/evil.lua: Access denied');
    const romList = await callOk(ctx.bridge, 'list-files', { computerId: 8, path: 'rom' });
    assert.equal(romList.structuredContent.isReadOnly, true);
    assert.equal(romList.structuredContent.drive, 'rom');
    assert.ok(textOf(romList).startsWith('/rom: '));
  });
});
