// Issue 11 part B on a real ComputerCraft runtime (CraftOS-PC: CC:Tweaked's own ROM, multishell,
// window, read(), keys, periphemu peripherals) against the real bridge (dist/), over MCP. Runs when
// the runtime is on this machine (see craftos.js); otherwise skipped with one line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeCraftos, useLinkedCraftos } from './craftos.js';
import { callTool, textOf as text, untilDone as until } from './mcp-helpers.js';

const T = { timeout: 60000 };

const screenWith = (bridge, id, pattern) =>
  until(async () => {
    const r = await callTool(bridge, 'read-screen', { computerId: id });
    assert.equal(r.isError, undefined, text(r));
    return { done: r.structuredContent.lines.some((l) => pattern.test(l)), value: r.structuredContent };
  }, `a screen row matching ${pattern}`);

describeCraftos('CraftOS-PC: background mode in a multishell tab, the screen and keyboard, peripherals, programs, jobs', () => {
  const ctx = useLinkedCraftos({
    id: 12,
    pre: 'periphemu.create("right", "chest")\nperiphemu.create("top", "modem")\n',
    flags: ['--background'],
    post: '',
    files: { 'ask.lua': 'write("Name? ") local name = read() print("hi " .. name .. "!")\n' },
    ready: ({ bridge }) => until(async () => ({ done: /pong/.test(text(await callTool(bridge, 'probe-computers'))) }), 'the link answers'),
  });

  test('read-screen and send-input drive read() in the shell tab (window, real keys)', T, async () => {
    let s = await screenWith(ctx.bridge, 12, /^> /);
    assert.equal(s.width, 51);
    assert.equal(s.height, 18, 'the tab bar takes a row');
    assert.ok(s.lines.some((l) => /^mcp-computer: linking to ws:/.test(l)), s.lines.join('\n'));
    assert.equal(s.cursorX, 3);
    await callTool(ctx.bridge, 'send-input', { computerId: 12, text: 'ask\n' });
    await screenWith(ctx.bridge, 12, /^Name\? +$/);
    await callTool(ctx.bridge, 'send-input', { computerId: 12, text: 'Stevx', keys: ['backspace', 'e', 'enter'] });
    s = await screenWith(ctx.bridge, 12, /^hi Steve!/);
    const row = s.lines.findIndex((l) => l.startsWith('hi Steve!'));
    assert.equal(s.lines[row - 1].trimEnd(), 'Name? Steve');
    assert.equal(s.foreground[row + 1][0], '4', 'the shell prompt is yellow');
    await callTool(ctx.bridge, 'send-input', { computerId: 12, text: 'ask\n' });
    await screenWith(ctx.bridge, 12, /^Name\? +$/);
    await callTool(ctx.bridge, 'send-input', { computerId: 12, keys: ['ctrl+t'] });
    await screenWith(ctx.bridge, 12, /Terminated/);
  });

  test('peripherals from periphemu: listed with their types and methods, called, errors without ROM positions', T, async () => {
    const list = await callTool(ctx.bridge, 'list-peripherals', { computerId: 12 });
    const byName = Object.fromEntries(list.structuredContent.peripherals.map((p) => [p.name, p]));
    assert.ok(byName.right.types.includes('inventory'), JSON.stringify(byName.right));
    assert.ok(byName.right.methods.includes('pushItems'));
    assert.ok(byName.top.types.includes('modem'));
    const size = await callTool(ctx.bridge, 'call-peripheral', { computerId: 12, name: 'right', method: 'size' });
    assert.deepEqual(size.structuredContent.returns, [{ type: 'number', value: 27 }]);
    const bad = await callTool(ctx.bridge, 'call-peripheral', { computerId: 12, name: 'top', method: 'open', args: [70000] });
    assert.equal(bad.isError, true);
    assert.equal(text(bad), 'bad argument #1 (channel out of range)');
    assert.doesNotMatch(text(bad), /rom\//);
  });

  test('run-program, check-lua and a detached job on the real shell', T, async () => {
    const ls = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'ls rom' });
    assert.equal(ls.structuredContent.success, true);
    assert.match(ls.structuredContent.output, /programs/);
    const ask = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'ask' });
    assert.equal(ask.structuredContent.success, false);
    assert.equal(ask.isError, undefined, 'a program that runs and fails is a failed program, not an error');
    assert.match(ask.structuredContent.output, /read\(\) has no input here/);
    // run-program-missing: CC's shell prints "No such program" and returns false; the tool names it
    const missing = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'no-such-program x' });
    assert.equal(missing.isError, true);
    assert.equal(text(missing), 'No such program: no-such-program');
    const alias = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'dir rom' });
    assert.equal(alias.structuredContent.success, true, 'an alias (dir = ls) resolves as the shell resolves it');
    // detached (bug: it answered success:true with a job): the start is the same error, and no job is made
    const before = (await callTool(ctx.bridge, 'job-status', { computerId: 12 })).structuredContent.jobs.length;
    const missingJob = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'no-such-program x', detach: true });
    assert.equal(missingJob.isError, true, JSON.stringify(missingJob));
    assert.equal(text(missingJob), 'No such program: no-such-program');
    assert.equal((await callTool(ctx.bridge, 'job-status', { computerId: 12 })).structuredContent.jobs.length, before);
    const aliasJob = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'dir rom', detach: true });
    assert.equal(aliasJob.structuredContent.success, true, 'an alias starts a job');
    assert.match(aliasJob.structuredContent.job, /./);
    const check = await callTool(ctx.bridge, 'check-lua', { computerId: 12, code: 'local x = = 1' });
    assert.deepEqual(check.structuredContent.errors, [{ line: 1, message: "unexpected symbol near '='" }]);
    const job = (await callTool(ctx.bridge, 'exec-lua', { computerId: 12, code: 'for i = 1, 3 do print("s" .. i) sleep(0.1) end return 7', detach: true })).structuredContent.job;
    const done = await until(async () => {
      const r = await callTool(ctx.bridge, 'job-status', { computerId: 12, job });
      return { done: r.structuredContent.state === 'done', value: r.structuredContent };
    }, 'the job is done');
    assert.equal(done.output, 's1\ns2\ns3\n');
    assert.deepEqual(done.returns, [{ type: 'number', value: 7 }]);
  });

  test('bug: with the link\'s own tab focused, send-input answered ok and CC\'s multishell gave its keys to that tab, not to the shell read-screen reads', T, async () => {
    const focus = async (n) => {
      const r = await callTool(ctx.bridge, 'exec-lua', { computerId: 12, code: `return multishell.setFocus(${n}), multishell.getFocus()` });
      assert.deepEqual(r.structuredContent.returns.map((d) => d.value), [true, n]);
    };
    await focus(2);
    const refused = await callTool(ctx.bridge, 'send-input', { computerId: 12, text: 'ask\n' });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /the focused tab is tab 2 "mcp[^"]*", mcp-computer's own, not the shell tab \(tab 1\) that read-screen reads/);
    await focus(1);
    await callTool(ctx.bridge, 'send-input', { computerId: 12, text: 'ask\n' });
    await screenWith(ctx.bridge, 12, /^Name\? +$/);
    await callTool(ctx.bridge, 'send-input', { computerId: 12, keys: ['ctrl+t'] });
  });

  test('mcp-computer status reads the link\'s state from _G (CC\'s own multishell: the tabs share it)', T, async () => {
    const status = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'mcp-computer status' });
    assert.match(status.structuredContent.output, /^background link: linked, bridge\s+ws:\/\/\S+\s+\(v[\d.]+\)\n/);
  });

  test('a label set by exec-lua or run-program (label set) is the bridge\'s when the call answers, not up to 2 s later', T, async () => {
    const listed = async () => (await callTool(ctx.bridge, 'list-computers')).structuredContent.computers.find((c) => c.computerId === 12).label;
    await callTool(ctx.bridge, 'exec-lua', { computerId: 12, code: 'os.setComputerLabel("relabelled-12")' });
    assert.equal(await listed(), 'relabelled-12');
    const set = await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'label set by-label-program' });
    assert.equal(set.structuredContent.success, true, JSON.stringify(set));
    assert.equal(await listed(), 'by-label-program');
    await callTool(ctx.bridge, 'list-files', { computer: 'by-label-program' }).then((r) => assert.equal(r.isError, undefined, JSON.stringify(r)));
    await callTool(ctx.bridge, 'run-program', { computerId: 12, command: 'label clear' });
    assert.equal(await listed(), null);
  });
});
