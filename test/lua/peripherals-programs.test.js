// Issue 11 part B against the real bridge (dist/), over MCP, with mcp-computer under the Lua 5.2
// harness: peripherals (an emulated monitor, chest, barrel and modem) listed and called; run-program
// (output, success, failure, timeout, cancel); check-lua.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { rpc, session } from '../helpers.js';
import { describeLua } from './lua-env.js';
import { bridgeFor, callError, callOk, callTool, linkedComputer as computer, textOf as text } from './mcp-helpers.js';

const T = { timeout: 60000 };

/** Waits until the computer's file system has `name` (a program wrote it: it is running). */
async function waitForFile(c, name) {
  for (let i = 0; i < 1000 && !existsSync(path.join(c.root, name)); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(existsSync(path.join(c.root, name)), `${name} never appeared`);
}

const PERIPHERALS = { left: 'monitor', right: 'chest', back: 'barrel', top: 'modem' };

describeLua('peripherals (lua-tools)', () => {
  test('list-peripherals: names, types and methods of each', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 3, peripherals: PERIPHERALS });
    const r = await callTool(bridge, 'list-peripherals', { computerId: 3 });
    assert.equal(r.isError, undefined, text(r));
    const byName = Object.fromEntries(r.structuredContent.peripherals.map((p) => [p.name, p]));
    assert.deepEqual(Object.keys(byName), ['back', 'left', 'right', 'top']);
    assert.deepEqual(byName.right.types, ['minecraft:chest', 'inventory']);
    assert.deepEqual(byName.left.types, ['monitor']);
    assert.ok(byName.left.methods.includes('setTextScale'));
    assert.deepEqual(byName.right.methods, ['getItemDetail', 'list', 'pushItems', 'size']);
    assert.match(text(r), /^right \(minecraft:chest, inventory\): getItemDetail, list, pushItems, size$/m);
  });

  test('no peripherals: says so', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 4 });
    const r = await callTool(bridge, 'list-peripherals', { computerId: 4 });
    assert.equal(text(r), 'No peripherals are attached to computer 4 (Label: null).');
    assert.deepEqual(r.structuredContent.peripherals, []);
  });

  test('call-peripheral: inventory calls that wait for the main thread, a monitor, a modem, and errors', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await computer(t, bridge, { id: 3, peripherals: PERIPHERALS });
    const call = (name, method, args) => callTool(bridge, 'call-peripheral', { computerId: 3, name, method, ...(args ? { args } : {}) });

    const list = await call('right', 'list');
    assert.equal(list.isError, undefined, text(list));
    assert.deepEqual(list.structuredContent.returns, [
      { type: 'table', value: { 1: { count: 64, name: 'minecraft:cobblestone' }, 5: { count: 12, name: 'minecraft:torch' } } },
    ]);
    const detail = await call('right', 'getItemDetail', [5]);
    assert.deepEqual(detail.structuredContent.returns[0].value, { name: 'minecraft:torch', count: 12, maxCount: 64, displayName: 'Torch' });
    const empty = await call('right', 'getItemDetail', [2]);
    assert.deepEqual(empty.structuredContent.returns, [{ type: 'nil' }]);
    assert.equal(text(empty), '=> nil');

    // Move 10 torches into the barrel: both sides see it.
    const moved = await call('right', 'pushItems', ['back', 5, 10]);
    assert.equal(text(moved), '=> 10');
    const barrel = await call('back', 'list');
    assert.deepEqual(barrel.structuredContent.returns[0].value, [{ count: 10, name: 'minecraft:torch' }]);
    assert.equal((await call('right', 'getItemDetail', [5])).structuredContent.returns[0].value.count, 2);

    // Monitor: write moves its cursor; several values come back as several descriptors.
    await call('left', 'setCursorPos', [2, 3]);
    await call('left', 'write', ['hello']);
    const pos = await call('left', 'getCursorPos');
    assert.deepEqual(pos.structuredContent.returns, [{ type: 'number', value: 7 }, { type: 'number', value: 3 }]);
    assert.equal(text(pos), '=> 7, 3');

    // Modem: JSON arguments arrive as Lua values (a table message is serialised by the emulator's modem).
    await call('top', 'open', [42]);
    assert.equal(text(await call('top', 'isOpen', [42])), '=> true');
    await call('top', 'transmit', [42, 43, 'ping']);
    assert.deepEqual(c.transmitted, [{ channel: 42, replyChannel: 43, message: 'ping' }]);

    // Errors: the peripheral's own message, an unknown method, an unknown peripheral, a bad argument.
    const range = await call('top', 'open', [70000]);
    assert.equal(range.isError, true);
    assert.match(text(range), /Channel out of range/);
    const noMethod = await call('top', 'explode');
    assert.equal(noMethod.isError, true);
    assert.match(text(noMethod), /Peripheral top has no method explode/);
    const noPeripheral = await call('bottom', 'list');
    assert.match(text(noPeripheral), /No peripheral named bottom is attached/);
    const scale = await call('left', 'setTextScale', [9]);
    assert.match(text(scale), /Expected number in range 0\.5-5/);
    const tooMany = await call('left', 'write', Array.from({ length: 65 }, () => 'x'));
    assert.match(text(tooMany), /at most 64 are allowed/);
  });

  test('peripheral tools work with exec-lua switched off on the computer and the bridge', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_EXEC_LUA: 'off' });
    await computer(t, bridge, { id: 3, peripherals: PERIPHERALS, settings: { 'mcp.exec': false } });
    const r = await callTool(bridge, 'call-peripheral', { computerId: 3, name: 'right', method: 'size' });
    assert.equal(text(r), '=> 27');
    const exec = await callTool(bridge, 'exec-lua', { computerId: 3, code: 'return 1' });
    assert.equal(exec.isError, true);
  });
});

const PROGRAMS = {
  'hello.lua': 'print("hello " .. (... or "nobody")) print("second line")\n',
  'fail.lua': 'print("about to fail") error("it broke", 0)\n',
  'forever.lua': 'local f = fs.open("running", "w") f.close() local n = 0 while true do n = n + 1 sleep(1) if n % 50 == 0 then print("tick " .. n) end end\n',
  'ask.lua': 'write("Name? ") local name = read() print("hi " .. name)\n',
  'bad.lua': 'local x = = 1\n',
};

describeLua('the owner\'s settings and part B (lua-tools)', () => {
  test('mcp.readonly: the reading tools work, call-peripheral and run-program are refused; mcp.tools limits the rest', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 3, peripherals: PERIPHERALS, settings: { 'mcp.readonly': true } });
    assert.equal((await callTool(bridge, 'list-peripherals', { computerId: 3 })).isError, undefined);
    assert.equal((await callTool(bridge, 'check-lua', { computerId: 3, code: 'return 1' })).structuredContent.ok, true);
    for (const [name, args] of [['call-peripheral', { name: 'right', method: 'size' }], ['run-program', { command: 'ls' }], ['job-cancel', { job: 'x' }]]) {
      const r = await callTool(bridge, name, { computerId: 3, ...args });
      assert.equal(r.isError, true, name);
      assert.match(text(r), new RegExp(`refused: ${name} changes the computer, and its owner made it read-only \\(setting mcp\\.readonly\\)`));
    }

    const bridge2 = await bridgeFor(t);
    await computer(t, bridge2, { id: 4, peripherals: PERIPHERALS, settings: { 'mcp.tools': 'list-peripherals,call-peripheral' } });
    assert.equal(text(await callTool(bridge2, 'call-peripheral', { computerId: 4, name: 'right', method: 'size' })), '=> 27');
    const refused = await callTool(bridge2, 'check-lua', { computerId: 4, code: 'x' });
    assert.match(text(refused), /check-lua is not allowed on this computer: its owner allows only list-peripherals,call-peripheral/);
  });
});

describeLua('programs (lua-tools)', () => {
  test('run-program: output captured, success and failure, a program waiting for input', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await computer(t, bridge, { id: 5, files: PROGRAMS });
    const screenBefore = c.output;
    const ok = await callTool(bridge, 'run-program', { computerId: 5, command: 'hello world' });
    assert.equal(ok.isError, undefined, text(ok));
    assert.deepEqual(ok.structuredContent, { computerId: 5, success: true, output: 'hello world\nsecond line\n', truncated: false });
    assert.equal(text(ok), 'hello world\nsecond line\n[program succeeded]');

    const failed = await callTool(bridge, 'run-program', { computerId: 5, command: 'fail' });
    assert.equal(failed.structuredContent.success, false);
    assert.equal(failed.structuredContent.output, 'about to fail\nit broke\n');
    assert.match(text(failed), /\[program failed\]$/);

    const ask = await callTool(bridge, 'run-program', { computerId: 5, command: 'ask' });
    assert.equal(ask.structuredContent.success, false);
    assert.match(ask.structuredContent.output, /^Name\? .*read\(\) has no input here/);
    assert.equal(c.output, screenBefore, 'nothing reached the real screen');
  });

  test('bug: a program run by run-program that called read() was told "an exec-lua chunk gets no keyboard"; the message now names what the bridge runs, not exec-lua alone', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 5, files: PROGRAMS });
    const ask = await callTool(bridge, 'run-program', { computerId: 5, command: 'ask' });
    assert.match(ask.structuredContent.output, /read\(\) has no input here: what the bridge runs \(exec-lua, run-program, a job\) gets no keyboard/);
    assert.doesNotMatch(ask.structuredContent.output, /exec-lua chunk/);
  });

  // shell.run prints "No such program" and returns false, as a program that ran and failed does:
  // a missing program is told apart and named, on the call and on a detached start (no job).
  test('run-program-missing: a program that does not exist is an error naming it, not a program that failed', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 5, files: PROGRAMS });
    assert.equal(await callError(bridge, 'run-program', { computerId: 5, command: 'nosuchthing now' }), 'No such program: nosuchthing');
    assert.equal(await callError(bridge, 'run-program', { computerId: 5, command: '  "no such" x' }), 'No such program: no such');

    const job = async (command) => {
      const id = (await callOk(bridge, 'run-program', { computerId: 5, command, detach: true })).structuredContent.job;
      for (;;) {
        const sc = (await callOk(bridge, 'job-status', { computerId: 5, job: id })).structuredContent;
        if (sc.state !== 'running') return sc;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    // A program that runs and fails still ends as "done" with false: the shell's own answer.
    const failed = await job('fail');
    assert.equal(failed.state, 'done');
    assert.deepEqual(failed.returns, [{ type: 'boolean', value: false }]);
    assert.equal(failed.output, 'about to fail\nit broke\n');
    const ran = await job('hello');
    assert.equal(ran.state, 'done');
    assert.deepEqual(ran.returns, [{ type: 'boolean', value: true }]);
  });

  test('bug: run-program with detach:true answered success:true (a started job) for a program that does not exist; the start is now an error naming it, and no job is made', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 5, files: PROGRAMS });
    const missing = await callTool(bridge, 'run-program', { computerId: 5, command: 'nosuchthing now', detach: true });
    assert.equal(missing.isError, true, JSON.stringify(missing));
    assert.equal(text(missing), 'No such program: nosuchthing');
    assert.notEqual(missing.structuredContent?.success, true);
    assert.equal(await callError(bridge, 'run-program', { computerId: 5, command: '"no such" x', detach: true }), 'No such program: no such');
    // nothing was started: the computer lists no job, and a program that exists still starts one
    assert.deepEqual((await callOk(bridge, 'job-status', { computerId: 5 })).structuredContent.jobs, []);
    const started = await callOk(bridge, 'run-program', { computerId: 5, command: 'hello', detach: true });
    assert.equal(started.structuredContent.success, true);
    assert.match(started.structuredContent.job, /./);
    assert.deepEqual((await callOk(bridge, 'job-status', { computerId: 5 })).structuredContent.jobs.map((j) => j.job), [started.structuredContent.job]);
  });

  test('run-program: a timeout stops the program on the computer; so does cancelling the call', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await computer(t, bridge, { id: 5, files: PROGRAMS });
    const timedOut = await callTool(bridge, 'run-program', { computerId: 5, command: 'forever', timeoutMs: 300 });
    assert.equal(timedOut.isError, true);
    assert.match(text(timedOut), /did not answer run-program within 300 ms; cancel sent/);
    await c.waitForOutput(/cancelled exec-lua/);

    // notifications/cancelled for the call (in its session): the bridge stops waiting and tells the computer.
    const mark = c.output.length;
    const s = await session(bridge.mcpUrl);
    const body = { jsonrpc: '2.0', id: 'run-forever', method: 'tools/call', params: { name: 'run-program', arguments: { computerId: 5, command: 'forever', timeoutMs: 60000 } } };
    const pending = rpc(bridge.mcpUrl, body, s).then((r) => r.json);
    await waitForFile(c, 'running');
    const cancel = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'run-forever' } }, s);
    assert.equal(cancel.status, 202);
    const cancelled = await pending;
    assert.match(JSON.stringify(cancelled), /cancel/);
    await c.waitForOutput(/cancelled exec-lua/, 10000, mark);
    // The computer still answers afterwards.
    const again = await callTool(bridge, 'run-program', { computerId: 5, command: 'hello' });
    assert.equal(again.structuredContent.success, true);
  });

  test('check-lua: compiles without running; the syntax error with its line; a file on the computer', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 6, files: PROGRAMS });
    const good = await callTool(bridge, 'check-lua', { computerId: 6, code: 'error("never runs")' });
    assert.deepEqual(good.structuredContent, { computerId: 6, ok: true, errors: [] });
    assert.equal(text(good), 'the code compiles: no syntax errors.');

    const bad = await callTool(bridge, 'check-lua', { computerId: 6, code: 'local a = 1\nlocal b = (\nprint(a' });
    assert.equal(bad.structuredContent.ok, false);
    assert.equal(bad.structuredContent.errors.length, 1);
    assert.equal(bad.structuredContent.errors[0].line, 3);
    assert.match(text(bad), /^line 3: /);

    const file = await callTool(bridge, 'check-lua', { computerId: 6, path: 'bad.lua' });
    assert.deepEqual(file.structuredContent.errors, [{ line: 1, message: "unexpected symbol near '='" }]);
    const missing = await callTool(bridge, 'check-lua', { computerId: 6, path: 'nope.lua' });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /\/nope\.lua: No such file/);
    const both = await callTool(bridge, 'check-lua', { computerId: 6, path: 'bad.lua', code: 'x' });
    assert.match(text(both), /Give either "code"/);
  });
});
