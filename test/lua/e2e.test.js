// End to end: the real bridge (dist/, built by `npm run build`) with
// dist/mcp-computer.lua running in emulated computers, driven over real MCP
// (HTTP JSON-RPC) the way an MCP client would.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import WebSocket from 'ws';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { COLOURS, linkAddress, useComputer } from './computer.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };

async function bridgeFor(t, env = {}) {
  const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error', ...env }));
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
  assert.equal(res.status, 200);
  const json = await res.json();
  assert.equal(json.error, undefined, JSON.stringify(json.error));
  return json.result;
}

const probeText = async (bridge) => (await callTool(bridge, 'probe-computers')).content[0].text;

/** A computer linked to the bridge (waits for its status line). */
async function computer(t, bridge, opts) {
  const c = useComputer(t, { url: bridge.linkUrl, timeScale: 0.01, ...opts });
  await c.waitForOutput('waiting for requests');
  return c;
}

describeLua('end to end with the real bridge', () => {
  test('two computers are probed over MCP: one pong line each', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 1, label: 'alpha' });
    await computer(t, bridge, { id: 2 });
    const text = await probeText(bridge);
    assert.deepEqual(text.split('\n').sort(), ['pong from 1 (Label: alpha)', 'pong from 2 (Label: null)']);
  });

  test('a non-ASCII label makes it through the bridge intact', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 5, label: 'Küche 🐢' });
    assert.equal(await probeText(bridge), 'pong from 5 (Label: Küche 🐢)');
  });

  test('bridge restarted on the same link port: both computers relink and answer', T, async (t) => {
    const first = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error' }));
    const port = new URL(first.linkUrl).port;
    const a = await computer(t, first, { id: 1, label: 'alpha' });
    const b = await computer(t, first, { id: 2 });
    const marks = [a.output.length, b.output.length];
    await first.close(100);
    for (const c of [a, b]) await c.waitForOutput('the bridge is shutting down');

    const second = await bridgeFor(t, { CC_LINK_PORT: port });
    await a.waitForOutput('waiting for requests', 30000, marks[0]);
    await b.waitForOutput('waiting for requests', 30000, marks[1]);
    const text = await probeText(second);
    assert.deepEqual(text.split('\n').sort(), ['pong from 1 (Label: alpha)', 'pong from 2 (Label: null)']);
  });

  test('Ctrl+T: the computer stops cleanly and leaves the bridge', T, async (t) => {
    const bridge = await bridgeFor(t);
    const a = await computer(t, bridge, { id: 1 });
    await computer(t, bridge, { id: 2 });
    a.terminate();
    const { code, output } = await a.waitForExit();
    assert.equal(code, 0);
    assert.match(output, /mcp-computer stopped\.\n$/);
    // The bridge notices the close; poll (bounded by the test timeout). A
    // probe that overlaps the close may still list it as disconnected.
    let text;
    do text = await probeText(bridge); while (/ from 1 /.test(text));
    assert.equal(text, 'pong from 2 (Label: null)');
  });

  test('malformed frames on either side are survived', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await computer(t, bridge, { id: 3 });
    // A garbage frame arriving on the computer's link (injected as the CC event).
    c.queueEvent('websocket_message', linkAddress(bridge.linkUrl), '{"type": "request", "id": ', false);
    await c.waitForOutput('warning: ignored a malformed frame');
    // A garbage client talking to the bridge.
    const junk = new WebSocket(bridge.linkUrl);
    await new Promise((resolve, reject) => {
      junk.once('open', resolve);
      junk.once('error', reject);
    });
    const answers = [];
    junk.on('message', (data) => answers.push(JSON.parse(data.toString())));
    const closed = new Promise((resolve) => junk.once('close', (code) => resolve(code)));
    junk.send('definitely not json');
    junk.send('{"type": "response", "id": "x", "ok": true}'); // not a hello: rejected at once
    assert.equal(await closed, 1008);
    assert.equal(answers[0]?.type, 'hello-error');
    assert.equal(await probeText(bridge), 'pong from 3 (Label: null)');
    assert.deepEqual(c.linesIn(COLOURS.red), []);
  });

  test('exec-lua end to end: output and returned values', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 1, label: 'alpha' });
    const result = await callTool(bridge, 'exec-lua', {
      computerId: 1,
      code: 'print("hi from " .. os.getComputerLabel()) return 1, nil, { a = "b" }',
      timeoutMs: 5000,
    });
    assert.ok(!result.isError, JSON.stringify(result));
    assert.deepEqual(result.structuredContent, {
      computerId: 1,
      ok: true,
      output: 'hi from alpha\n',
      returns: [{ type: 'number', value: 1 }, { type: 'nil' }, { type: 'table', value: { a: 'b' } }],
      truncated: false,
    });

    const failed = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'print("partial") error("nope")' });
    assert.equal(failed.isError, true);
    assert.equal(failed.structuredContent.ok, false);
    assert.equal(failed.structuredContent.output, 'partial\n');
    assert.match(failed.structuredContent.error, /exec-lua:1: nope/);
  });

  test('exec-lua timeout: the bridge cancels and the chunk never runs on', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await computer(t, bridge, { id: 1 });
    const result = await callTool(bridge, 'exec-lua', {
      computerId: 1,
      code: 'os.pullEvent("go") local f = fs.open("/after.txt", "w") f.write("ran") f.close() return "ran"',
      timeoutMs: 300,
    });
    assert.equal(result.isError, true);
    assert.match(result.structuredContent.error, /timed out/);
    await c.waitForOutput('cancelled exec-lua');
    c.queueEvent('go');
    // Events are handled in order: once this answers, "go" has been seen.
    assert.equal(await probeText(bridge), 'pong from 1 (Label: null)');
    assert.ok(!existsSync(path.join(c.root, 'after.txt')));
  });

  test('exec-lua with a large answer stays within the link limit', T, async (t) => {
    const bridge = await bridgeFor(t);
    await computer(t, bridge, { id: 1 });
    const result = await callTool(bridge, 'exec-lua', {
      computerId: 1,
      code: 'for i = 1, 20000 do print(("%05d"):format(i) .. ("z"):rep(30)) end return "done"',
      timeoutMs: 20000,
    });
    const sc = result.structuredContent;
    assert.equal(sc.ok, true, JSON.stringify(sc).slice(0, 300));
    assert.equal(sc.truncated, true);
    assert.match(sc.output, /^00001z{30}\n00002z{30}\n/);
    assert.deepEqual(sc.returns, [{ type: 'string', value: 'done' }]);
  });
});
