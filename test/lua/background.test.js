// Background mode (issue 11, part 1): the link runs beside a shell, prints
// nothing over it, logs to /.mcp-computer.log, survives Ctrl+T in the shell,
// and is reached with `mcp-computer status` / `mcp-computer stop`. Driven
// against the real bridge (dist/) over MCP.
//
// The harness has no multishell, so this is the basic-computer path
// (shell and link side by side, as parallel gives). The shell is a small
// stand-in at /shell.lua that runs commands queued as test_run events.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { useComputer } from './computer.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };

const SHELL = `
print("shell ready")
while true do
    local ev = { os.pullEventRaw() }
    if ev[1] == "terminate" then
        print("shell: Terminated")
    elseif ev[1] == "test_run" then
        shell.run(ev[2])
        print("shell: ran " .. ev[2])
    elseif ev[1] == "test_exit" then
        print("shell: exit")
        return
    end
end
`;

// What CC's rom/startup.lua does with /startup, then the shell.
const BOOT = `
for _, name in ipairs(fs.list("/startup")) do shell.run(fs.combine("/startup", name)) end
print("boot: startup files done")
shell.run("shell")
`;

async function bridgeFor(t) {
  const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error' }));
  t.after(() => bridge.close(100));
  return bridge;
}

let rpcId = 1;
async function callTool(bridge, name, args = {}) {
  const res = await fetch(bridge.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  const json = await res.json();
  assert.equal(json.error, undefined, JSON.stringify(json.error));
  return json.result;
}

const probeText = async (bridge) => (await callTool(bridge, 'probe-computers')).content[0].text;

/** Polls probe-computers until it shows `want` (the link is in the background, so nothing shows on screen). */
async function waitForProbe(bridge, want) {
  for (let i = 0; i < 400; i++) {
    const text = await probeText(bridge);
    if (want.test(text)) return text;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`probe never showed ${want}: ${await probeText(bridge)}`);
}

const logOf = (c) => {
  const file = path.join(c.root, '.mcp-computer.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

describeLua('background mode', () => {
  test('--background: shell beside the link, nothing printed over it, Ctrl+T for the shell, status and stop', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 7, label: 'bg', url: bridge.linkUrl, args: ['--background'], files: { 'shell.lua': SHELL } });
    await c.waitForOutput('shell ready');
    assert.equal(await waitForProbe(bridge, /pong/), 'pong from 7 (Label: bg)');
    assert.doesNotMatch(c.output, /linked as|waiting for requests|connecting to/, 'the link printed over the shell');
    assert.match(c.output, /^mcp-computer: linking to ws:\/\/[^ ]+ in the background;\nsee "mcp-computer status" and "mcp-computer stop"\.\n/);
    assert.match(logOf(c), /\] mcp-computer v[\d.]+ in the background \(computer 7\)\n/);
    assert.match(logOf(c), /\] linked as 7 \(Label: bg\)\n/);
    // Ctrl+T goes to the shell here, so the log names the way that does stop the link.
    assert.match(logOf(c), /\] waiting for requests\.\.\. mcp-computer stop ends the link\.\n/);
    assert.doesNotMatch(logOf(c), /Ctrl\+T/);

    // exec-lua still works, its output captured as usual.
    const exec = await callTool(bridge, 'exec-lua', { computerId: 7, code: 'print("hi from bg") return 6 * 7' });
    assert.equal(exec.isError, undefined, JSON.stringify(exec));
    assert.match(JSON.stringify(exec), /hi from bg/);
    assert.doesNotMatch(c.output, /hi from bg/);

    // Ctrl+T reaches the shell; the link keeps answering.
    c.queueEvent('terminate');
    await c.waitForOutput('shell: Terminated');
    assert.equal(await probeText(bridge), 'pong from 7 (Label: bg)');

    // status from the shell while the link runs.
    let mark = c.output.length;
    c.queueEvent('test_run', 'mcp-computer status');
    await c.waitForOutput('shell: ran mcp-computer status', 10000, mark);
    const status = c.output.slice(mark);
    assert.match(status, /^background link: linked, bridge ws:\/\/[^ ]+ \(v[\d.]+\)\nLast lines of \/\.mcp-computer\.log:\n/);
    assert.match(status, /linked as 7 \(Label: bg\)/);

    // stop ends the link, not the shell.
    mark = c.output.length;
    c.queueEvent('test_run', 'mcp-computer stop');
    await c.waitForOutput('shell: ran mcp-computer stop', 10000, mark);
    assert.match(c.output.slice(mark), /^Stopped the background link\.\n/);
    await waitForProbe(bridge, /^No computers/);
    assert.match(logOf(c), /\] mcp-computer stopped\.\n/);

    mark = c.output.length;
    c.queueEvent('test_run', 'mcp-computer status');
    await c.waitForOutput('shell: ran mcp-computer status', 10000, mark);
    assert.match(c.output.slice(mark), /^No background link is running on this computer\.\nLast lines/);

    // Exiting the shell ends the program.
    c.queueEvent('test_exit');
    assert.equal((await c.waitForExit()).code, 0);
  });

  test('startup installs background mode; a later startup file runs and the link answers', T, async (t) => {
    const bridge = await bridgeFor(t);
    const files = {
      'shell.lua': SHELL,
      'boot.lua': BOOT,
      'startup/00-early.lua': 'print("early startup file ran")\n',
      'startup/zz-later.lua': 'print("later startup file ran")\n',
    };
    const setup = useComputer(t, { args: ['startup', bridge.linkUrl], files });
    const { code, output } = await setup.waitForExit();
    assert.equal(code, 0, output);
    assert.match(output, /at boot it runs \/mcp-computer\.lua ws:\/\/[^ ]+ --background --from-startup\n$/);
    files['startup/mcp-computer.lua'] = readFileSync(path.join(setup.root, 'startup', 'mcp-computer.lua'), 'utf8');

    const c = useComputer(t, { id: 8, command: 'boot', files });
    await c.waitForOutput('shell ready');
    const order = c.output.split('\n').filter((l) => /startup file ran|shell ready/.test(l));
    assert.deepEqual(order, ['early startup file ran', 'later startup file ran', 'shell ready']);
    assert.equal(await waitForProbe(bridge, /pong/), 'pong from 8 (Label: null)');

    // The player's exit shuts the computer down (as the top-level shell
    // does), so rom/startup.lua never runs the later files a second time.
    c.queueEvent('test_exit');
    const end = await c.waitForExit();
    assert.equal(end.code, 0);
    assert.equal(end.output.match(/later startup file ran/g).length, 1);
    assert.doesNotMatch(end.output, /boot: startup files done/);
  });

  test('bug: in background mode a chunk\'s os.queueEvent("terminate") went to the player\'s shell as a Ctrl+T and never to the chunk, which waited on', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 11, url: bridge.linkUrl, args: ['--background'], files: { 'shell.lua': SHELL } });
    await c.waitForOutput('shell ready');
    await waitForProbe(bridge, /pong/);
    const res = await callTool(bridge, 'exec-lua', { computerId: 11, code: 'os.queueEvent("terminate") os.pullEvent() return "not reached"', timeoutMs: 5000 });
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.equal(res.content[0].text, 'error: Terminated');
    // the player's Ctrl+T still goes to the shell, and only it reached the shell
    c.queueEvent('terminate');
    await c.waitForOutput('shell: Terminated');
    assert.equal(c.output.split('shell: Terminated').length, 2, c.output);
    assert.equal(await probeText(bridge), 'pong from 11 (Label: null)');
  });

  test('status and stop with no background link say so', T, async (t) => {
    for (const cmd of ['status', 'stop']) {
      const c = useComputer(t, { args: [cmd] });
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.equal(output, 'No background link is running on this computer.\n');
    }
  });
});

describeLua('background mode: status while CC\'s event queue is full', () => {
  // Tab 1 (where the player ran --background) then runs a program that keeps CC's queue full: it
  // fills it to 256 once, then queues one event for each it takes (as any program reacting to every
  // event may), so the place an event leaves is taken again before the tabs after it run.
  const BOOT = (url) => `
shell.run("mcp-computer", ${JSON.stringify(url)}, "--background")
shell.switchTab(shell.openTab("shell"))
local left = 0
while true do
    local e = os.pullEventRaw()
    if e == "fill_on" then
        for i = 1, 255 do os.queueEvent("filler") end
        left = 400
    elseif left > 0 then
        left = left - 1
        os.queueEvent("filler")
    end
end
`;
  const word = (s) => `s:${Buffer.from(s).toString('hex')}`;

  test('bug: `mcp-computer status` said no background link was running when CC dropped the link\'s reply (its queue full)', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 9, command: 'boot', multishell: true, files: { 'boot.lua': BOOT(bridge.linkUrl), 'shell.lua': SHELL } });
    await waitForProbe(bridge, /pong/);
    const mark = c.output.length;
    // status first, then the program in tab 1 fills the queue: the link takes the status ask with 255
    // events behind it, and tab 1 queues one more before the link's tab runs.
    c.send(['batch 2', `ev ${word('test_run')} ${word('mcp-computer status')}`, `ev ${word('fill_on')}`].join('\n'));
    await c.waitForOutput('shell: ran mcp-computer status', 20000, mark);
    assert.match(c.output.slice(mark), /background link: linked, bridge ws:\/\/[^ ]+ \(v[\d.]+\)/);
  });

  test('bug: `mcp-computer stop` said no background link was running when CC dropped the link\'s "stopped" event (its queue full)', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 10, command: 'boot', multishell: true, files: { 'boot.lua': BOOT(bridge.linkUrl), 'shell.lua': SHELL } });
    await waitForProbe(bridge, /pong/);
    const mark = c.output.length;
    c.send(['batch 2', `ev ${word('test_run')} ${word('mcp-computer stop')}`, `ev ${word('fill_on')}`].join('\n'));
    await c.waitForOutput('shell: ran mcp-computer stop', 20000, mark);
    assert.match(c.output.slice(mark), /^Stopped the background link\.\n/);
    await waitForProbe(bridge, /^No computers/);
  });
});
