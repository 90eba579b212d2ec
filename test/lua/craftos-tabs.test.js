// send-input in background mode when multishell renumbers its tabs, on a real ComputerCraft runtime
// (CraftOS-PC: CC:Tweaked's own multishell). Tabs are numbered by position: when one closes, the
// tabs after it shift down. Runs when the runtime is on this machine (see craftos.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeCraftos, useLinkedCraftos } from './craftos.js';
import { callTool, textOf as text, untilDone as until } from './mcp-helpers.js';

const T = { timeout: 90000 };

describeCraftos('CraftOS-PC: send-input after tabs before the link\'s close', () => {
  const ctx = useLinkedCraftos({
    id: 14,
    // tab 1: the shell that runs startup; tab 2: a program that ends on an event; tab 3: the link
    pre: 'shell.openTab("wait")\n',
    flags: ['--background'],
    post: '',
    files: {
      'wait.lua': 'os.pullEvent("mcp_test_end")\n',
      'ask.lua': 'write("Name? ") local name = read() local f = fs.open("/got.txt", "w") f.write(name) f.close() sleep(60)\n',
    },
    ready: ({ bridge }) => until(async () => ({ done: /pong/.test(text(await callTool(bridge, 'probe-computers'))) }), 'the link answers'),
  });

  const lua = async (code) => {
    const r = await callTool(ctx.bridge, 'exec-lua', { computerId: 14, code });
    assert.equal(r.isError, undefined, text(r));
    return r.structuredContent.returns.map((d) => d.value);
  };
  const tabs = () => lua('local t = {} for i = 1, multishell.getCount() do t[i] = multishell.getTitle(i) end return multishell.getCurrent(), multishell.getFocus(), t');

  test('bug: once a tab before the link\'s closed, send-input sent keys to whichever tab had the focus, and after the shell tab closed too (and read-screen showed the closed tab\'s last screen)', T, async () => {
    assert.deepEqual((await tabs()).slice(0, 2), [3, 1], 'the link is tab 3, the shell (tab 1) has the focus');
    // tab 2 ends (multishell keeps a tab that was never focused open until a key: focus it once)
    await lua('multishell.setFocus(2) multishell.setFocus(1) os.queueEvent("mcp_test_end")');
    await until(async () => ({ done: (await tabs())[0] === 2 }), 'tab 2 closed, the link is tab 2');
    await lua('shell.openTab("ask")');
    const [own, , titles] = await tabs();
    assert.equal(own, 2);
    assert.equal(titles.length, 3);
    await lua('multishell.setFocus(3)');
    const refused = await callTool(ctx.bridge, 'send-input', { computerId: 14, text: 'Bob\n' });
    assert.equal(refused.isError, true, 'keys for the shell would have gone to the ask tab');
    assert.match(text(refused), /^the focused tab is tab 3 "[^"]*", not the shell tab \(tab 1\) that read-screen reads/);
    await lua('multishell.setFocus(2)');
    assert.match(text(await callTool(ctx.bridge, 'send-input', { computerId: 14, text: 'x' })), /^the focused tab is tab 2 "[^"]*", mcp-computer's own, not the shell tab \(tab 1\)/);
    // the shell tab has the focus: keys go there; its shell exits and the tab closes
    await lua('multishell.setFocus(1)');
    const sent = await callTool(ctx.bridge, 'send-input', { computerId: 14, text: 'exit\n' });
    assert.equal(sent.isError, undefined, text(sent));
    await until(async () => ({ done: (await tabs())[0] === 1 }), 'the shell tab closed, the link is tab 1');
    await lua('multishell.setFocus(2)');
    const gone = await callTool(ctx.bridge, 'send-input', { computerId: 14, text: 'Bob\n' });
    assert.equal(gone.isError, true, 'keys for the shell would have gone to the ask tab');
    assert.match(text(gone), /^the shell tab that read-screen reads \(the one that ran mcp-computer --background\) has closed: read-screen would show its last screen, and send-input's keys would go to whichever tab has the focus/);
    const stale = await callTool(ctx.bridge, 'read-screen', { computerId: 14 });
    assert.equal(stale.isError, true, 'the closed tab\'s last screen is not shown as the shell\'s');
    assert.match(text(stale), /^the shell tab that read-screen reads \(the one that ran mcp-computer --background\) has closed/);
    // nothing reached the ask tab: it still waits in read()
    assert.deepEqual(await lua('return fs.exists("/got.txt"), multishell.getCount()'), [false, 2]);
  });
});

describeCraftos('CraftOS-PC: send-input after the shell tab exits while a tab before the link\'s stays', () => {
  const ctx = useLinkedCraftos({
    id: 13,
    // tab 1: the shell that runs startup; tab 2: a program that waits; tab 3: the link
    pre: 'shell.openTab("wait")\n',
    flags: ['--background'],
    post: '',
    files: { 'wait.lua': 'os.pullEvent("mcp_test_end")\n' },
    ready: ({ bridge }) => until(async () => ({ done: /pong/.test(text(await callTool(bridge, 'probe-computers'))) }), 'the link answers'),
  });
  const lua = async (code) => {
    const r = await callTool(ctx.bridge, 'exec-lua', { computerId: 13, code });
    assert.equal(r.isError, undefined, text(r));
    return r.structuredContent.returns.map((d) => d.value);
  };

  test('bug: once the shell tab had exited, with the tab before it left, send-input gave its keys to that tab (now tab 1, where the shell was)', T, async () => {
    assert.deepEqual(await lua('return multishell.getCurrent(), multishell.getFocus()'), [3, 1]);
    const sent = await callTool(ctx.bridge, 'send-input', { computerId: 13, text: 'exit\n' });
    assert.equal(sent.isError, undefined, text(sent));
    await until(async () => ({ done: (await lua('return multishell.getCurrent()'))[0] === 2 }), 'the shell tab closed, the link is tab 2');
    assert.deepEqual(await lua('return multishell.getFocus(), multishell.getTitle(1)'), [1, 'wait']);
    const refused = await callTool(ctx.bridge, 'send-input', { computerId: 13, text: 'x' });
    assert.equal(refused.isError, true, 'the keys would have gone to the wait tab');
    assert.match(text(refused), /^the shell tab that read-screen reads \(the one that ran mcp-computer --background\) has closed/);
    assert.match(text(await callTool(ctx.bridge, 'read-screen', { computerId: 13 })), /^the shell tab that read-screen reads .* has closed/);
  });
});

describeCraftos('CraftOS-PC: send-input and read-screen once the tab the launcher ran in ended without exit', () => {
  const ctx = useLinkedCraftos({
    id: 15,
    // tab 1: the shell that runs startup, which opens tab 2 for "mcp-computer <url> --background" alone
    // (that tab's shell ends once the launcher returns, as a tab opened for one program does); tab 3: the link
    pre: 'local run = shell.run shell.run = function(...) shell.run = run return shell.openTab(...) end\n',
    flags: ['--background'],
    post: '',
    ready: ({ bridge }) => until(async () => ({ done: /pong/.test(text(await callTool(bridge, 'probe-computers'))) }), 'the link answers'),
  });
  const lua = async (code) => {
    const r = await callTool(ctx.bridge, 'exec-lua', { computerId: 15, code });
    assert.equal(r.isError, undefined, text(r));
    return r.structuredContent.returns.map((d) => d.value);
  };

  test('bug: once the tab the launcher ran in had ended (its program returned), send-input gave its keys to tab 1 and read-screen showed the ended tab\'s last screen', T, async () => {
    assert.deepEqual(await lua('return multishell.getCurrent(), multishell.getCount()'), [3, 3]);
    // tab 2 waits for a key ("Press any key to continue"); with it focused, send-input's key ends it
    await lua('multishell.setFocus(2)');
    assert.match(text(await callTool(ctx.bridge, 'read-screen', { computerId: 15 })), /Press any key to continue/);
    const sent = await callTool(ctx.bridge, 'send-input', { computerId: 15, text: 'x' });
    assert.equal(sent.isError, undefined, text(sent));
    await until(async () => ({ done: (await lua('return multishell.getCurrent()'))[0] === 2 }), 'tab 2 closed, the link is tab 2');
    assert.deepEqual(await lua('return multishell.getFocus(), multishell.getTitle(1)'), [1, 'shell']);
    const refused = await callTool(ctx.bridge, 'send-input', { computerId: 15, text: 'x' });
    assert.equal(refused.isError, true, 'the keys would have gone to tab 1, a shell read-screen does not read');
    assert.match(text(refused), /^the shell tab that read-screen reads \(the one that ran mcp-computer --background\) has closed/);
    const stale = await callTool(ctx.bridge, 'read-screen', { computerId: 15 });
    assert.equal(stale.isError, true, 'the ended tab\'s last screen is not shown as the shell\'s');
    assert.match(text(stale), /^the shell tab that read-screen reads .* has closed/);
  });
});
