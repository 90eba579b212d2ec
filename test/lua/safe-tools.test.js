// The safe-tool framework end to end: the real bridge, mcp-computer in the Lua 5.2 harness, MCP over
// HTTP. Tools work with exec-lua off; the owner's settings mcp.tools / mcp.readonly refuse with a
// clear message; a program too old for a method gets the update instructions; CC's fs rules apply.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { describeLua } from './lua-env.js';
import { bridgeFor, callError, callOk, callTool, linkedComputer, programWithout, textOf } from './mcp-helpers.js';

const T = { timeout: 60000 };

describeLua('safe tools: the framework', () => {
  test('list-files works with exec-lua off: names, sizes, folders, read-only flags, free space', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_EXEC_LUA: 'off' });
    const c = await linkedComputer(t, bridge, { id: 3, label: 'store', files: { 'notes/a.txt': 'hello', 'notes/sub/b.txt': '', 'rom/x.lua': 'x' } });
    const result = await callOk(bridge, 'list-files', { computerId: 3, path: 'notes' });
    assert.deepEqual(result.structuredContent.entries, [
      { name: 'a.txt', isDir: false, isReadOnly: false, size: 5 },
      { name: 'sub', isDir: true, isReadOnly: false },
    ]);
    assert.equal(result.structuredContent.path, '/notes');
    assert.equal(result.structuredContent.freeSpace, 1000000);
    assert.equal(result.structuredContent.drive, 'hdd');
    assert.equal(textOf(result), '/notes: 2 entries, drive hdd, 1000000 bytes free\na.txt  5 bytes\nsub/');
    const rom = await callOk(bridge, 'list-files', { computer: 'store', path: '/rom' });
    assert.deepEqual(rom.structuredContent.entries, [{ name: 'x.lua', isDir: false, isReadOnly: true, size: 1 }]);
    assert.equal(rom.structuredContent.isReadOnly, true);
    assert.ok(existsSync(path.join(c.root, 'notes/a.txt')));
  });

  test('a big folder comes in several pieces, each fitting the frame limit', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await linkedComputer(t, bridge, { id: 4, args: ['--max-frame', '4096'] });
    mkdirSync(path.join(c.root, 'many'));
    for (let i = 0; i < 300; i++) writeFileSync(path.join(c.root, 'many', `file-${String(i).padStart(3, '0')}.txt`), 'x'.repeat(i));
    const result = await callOk(bridge, 'list-files', { computerId: 4, path: 'many' });
    const entries = result.structuredContent.entries;
    assert.equal(entries.length, 300);
    assert.deepEqual(entries[299], { name: 'file-299.txt', isDir: false, isReadOnly: false, size: 299 });
    assert.equal(result.structuredContent.truncated, false);
    const sent = c.sent.filter((f) => f.includes('"entries"'));
    assert.ok(sent.length > 1, `several pieces (${sent.length})`);
    for (const frame of sent) assert.ok(Buffer.byteLength(frame) <= 4096, `a piece is ${Buffer.byteLength(frame)} bytes`);
  });

  test('delete-file and move-file; CC\'s own errors for rom/, .. and missing files', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_EXEC_LUA: 'off' });
    const c = await linkedComputer(t, bridge, { id: 5, files: { 'a.txt': 'A', 'dir/b.txt': 'B', 'rom/r.lua': 'r' } });
    await callOk(bridge, 'move-file', { computerId: 5, from: 'a.txt', to: 'moved/a2.txt' });
    assert.ok(existsSync(path.join(c.root, 'moved/a2.txt')));
    assert.equal(await callError(bridge, 'move-file', { computerId: 5, from: 'dir/b.txt', to: 'moved/a2.txt' }), '/moved/a2.txt: File exists');
    assert.equal(await callError(bridge, 'delete-file', { computerId: 5, path: 'rom/r.lua' }), '/rom/r.lua: Access denied');
    assert.equal(await callError(bridge, 'move-file', { computerId: 5, from: 'dir/b.txt', to: 'rom/b.txt' }), '/rom/b.txt: Access denied');
    // CC's fs.exists is false above the root (FSAPI catches getMount's Invalid Path), so the
    // program's own 'No such file' answers, as it does on CraftOS-PC (craftos-files.test.js)
    assert.equal(await callError(bridge, 'delete-file', { computerId: 5, path: '../outside' }), '/../outside: No such file');
    assert.equal(await callError(bridge, 'move-file', { computerId: 5, from: 'dir/b.txt', to: '../b.txt' }), '/../b.txt: Invalid Path');
    assert.ok(existsSync(path.join(c.root, 'dir/b.txt')));
    assert.equal(await callError(bridge, 'delete-file', { computerId: 5, path: 'nothing' }), '/nothing: No such file');
    assert.match(await callError(bridge, 'delete-file', { computerId: 5, path: 'dir' }), /^\/dir: Directory not empty/);
    assert.ok(existsSync(path.join(c.root, 'dir/b.txt')));
    const done = await callOk(bridge, 'delete-file', { computerId: 5, path: 'dir', recursive: true });
    assert.equal(textOf(done), 'deleted folder /dir on computer 5 (Label: null)');
    assert.ok(!existsSync(path.join(c.root, 'dir')));
  });

  test('mcp.tools: a tool the owner did not list is refused, the listed ones work', T, async (t) => {
    const bridge = await bridgeFor(t);
    await linkedComputer(t, bridge, { id: 6, settings: { 'mcp.tools': 'list-files, move-file' }, files: { 'a.txt': 'A' } });
    await callOk(bridge, 'list-files', { computerId: 6 });
    const result = await callTool(bridge, 'delete-file', { computerId: 6, path: 'a.txt' });
    assert.equal(result.isError, true);
    assert.equal(
      textOf(result),
      'computer 6 (Label: null) refused: delete-file is not allowed on this computer: its owner allows only list-files, move-file (setting mcp.tools)',
    );
    assert.match(textOf(await callTool(bridge, 'exec-lua', { computerId: 6, code: 'return 1' })), /exec-lua is not allowed on this computer/);
  });

  test('mcp.readonly: reading tools work, changing ones (and exec-lua) are refused', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await linkedComputer(t, bridge, { id: 7, settings: { 'mcp.readonly': true }, files: { 'a.txt': 'A' } });
    await callOk(bridge, 'list-files', { computerId: 7 });
    assert.equal(
      await callError(bridge, 'delete-file', { computerId: 7, path: 'a.txt' }),
      'computer 7 (Label: null) refused: delete-file changes the computer, and its owner made it read-only (setting mcp.readonly)',
    );
    assert.match(textOf(await callTool(bridge, 'exec-lua', { computerId: 7, code: 'return 1' })), /exec-lua changes the computer/);
    assert.ok(existsSync(path.join(c.root, 'a.txt')));
  });

  test('REST: a refusal by the owner is 403-like "disabled", not a bridge failure', T, async (t) => {
    const bridge = await bridgeFor(t);
    await linkedComputer(t, bridge, { id: 8, settings: { 'mcp.readonly': true } });
    const res = await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/tools/delete-file'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ computerId: 8, path: 'x' }),
    });
    const body = await res.json();
    assert.equal(body.error.code, 'disabled', JSON.stringify(body));
  });

  test('a program too old to know a method: the error says to update it and how', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_EXEC_LUA: 'off' });
    await linkedComputer(t, bridge, { id: 9, label: 'old', files: { 'mcp-computer.lua': programWithout('list-files') } });
    const text = await callError(bridge, 'list-files', { computerId: 9 });
    assert.equal(
      text,
      `computer 9 (Label: old) runs mcp-computer 0.1.0, which is too old to know "list-files"; update it from the bridge: ` +
        `on the computer run "mcp-computer stop" (if it runs in the background), "rm mcp-computer.lua", ` +
        `"wget http://<bridge-host>:<link port>/mcp-computer.lua mcp-computer.lua", then start it again (or reboot).`,
    );
  });
});
