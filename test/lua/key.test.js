// mcp-computer's own key (the setting mcp.key) under cc-emu.lua, against a fake bridge and the real
// one: made once on the first run, saved to /.settings, sent in every hello, kept across a restart,
// never printed; the real bridge then refuses an impostor for the id (CC_LINK_PIN).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { FakeComputer } from '../helpers.js';
import { COLOURS, useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };
const KEY = /^[A-Za-z0-9_-]{32}$/;

async function fakeBridge(t, opts) {
  const bridge = await startFakeBridge(opts);
  t.after(() => bridge.close());
  return bridge;
}

async function realBridge(t) {
  const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'silent' }));
  t.after(() => bridge.close(100));
  return bridge;
}


describeLua('computer key (mcp.key)', () => {
  test('made on the first run, saved, sent in the hello, never printed; a restart sends the same key', T, async (t) => {
    const bridge = await fakeBridge(t);
    const first = useComputer(t, { id: 4, url: bridge.url });
    await first.waitForOutput('waiting for requests');
    const key = (await bridge.link(0)).frames[0].key;
    assert.match(key, KEY);
    const settings = readFileSync(path.join(first.root, '.settings'), 'utf8');
    assert.ok(settings.includes(key), `saved in /.settings: ${settings}`);
    assert.ok(!first.output.includes(key) && !first.stderr.includes(key), 'never printed');
    first.kill();
    await first.exited;
    // a restart: the same computer's file system, the program run again
    const again = useComputer(t, { id: 4, url: bridge.url, files: { '.settings': settings } });
    await again.waitForOutput('waiting for requests');
    assert.equal((await bridge.link(1)).frames[0].key, key, 'not regenerated');
    assert.equal(readFileSync(path.join(again.root, '.settings'), 'utf8'), settings, 'the saved key is left as it was');
    // another computer gets another key
    const other = useComputer(t, { id: 5, url: bridge.url });
    await other.waitForOutput('waiting for requests');
    const otherKey = (await bridge.link(2)).frames[0].key;
    assert.match(otherKey, KEY);
    assert.notEqual(otherKey, key);
  });

  test('a saved mcp.key that is not a key is replaced (with a warning) and the new one saved', T, async (t) => {
    const bridge = await fakeBridge(t);
    const c = useComputer(t, { id: 6, url: bridge.url, settings: { 'mcp.key': 'short' } });
    await c.waitForOutput('waiting for requests');
    const key = (await bridge.link(0)).frames[0].key;
    assert.match(key, KEY);
    assert.match(c.output, /mcp\.key was not a key \(16-128 of A-Z a-z 0-9 _ -\); made a new one/);
    assert.ok(readFileSync(path.join(c.root, '.settings'), 'utf8').includes(key));
  });

  test('a key set by hand is sent as it is', T, async (t) => {
    const bridge = await fakeBridge(t);
    const mine = 'my-own-key_0123456789';
    const c = useComputer(t, { id: 7, url: bridge.url, settings: { 'mcp.key': mine } });
    await c.waitForOutput('waiting for requests');
    assert.equal((await bridge.link(0)).frames[0].key, mine);
  });

  test('the real bridge pins the id: an impostor with another key is refused and the computer keeps answering', T, async (t) => {
    const bridge = await realBridge(t);
    const c = useComputer(t, { id: 8, url: bridge.linkUrl });
    await c.waitForOutput('waiting for requests');
    const impostor = new FakeComputer(bridge.linkUrl, { computerId: 8 });
    const first = await impostor.link({ type: 'hello', computerId: 8, key: 'impostor-0123456789abcdef' });
    assert.equal(first.code, 'key_mismatch');
    assert.equal((await impostor.closed).code, 4409);
    const keyless = new FakeComputer(bridge.linkUrl, { computerId: 8 });
    assert.equal((await keyless.link()).code, 'key_mismatch');
    await keyless.closed;
    const { structuredContent } = await callPing(bridge);
    assert.deepEqual(structuredContent.computers.map((x) => [x.computerId, x.status]), [[8, 'pong']]);
    assert.doesNotMatch(c.output, /replaced|refused/);
  });

  test('a reinstalled computer (another key) is refused by a bridge that pinned its id: it prints why and stops', T, async (t) => {
    const bridge = await realBridge(t);
    const before = useComputer(t, { id: 9, url: bridge.linkUrl });
    await before.waitForOutput('waiting for requests');
    before.kill();
    await before.exited;
    const reinstalled = useComputer(t, { id: 9, url: bridge.linkUrl, timeScale: 1 }); // real seconds: the 5 s hello timeout must not beat the refusal on a loaded machine
    const { code } = await reinstalled.waitForExit();
    assert.equal(code, 1);
    const red = reinstalled.linesIn(COLOURS.red).join(' ');
    assert.match(red, /The bridge refused this computer: computer id 9 is held by another key/);
    assert.match(red, /cc-mcp pin-reset 9/);
    assert.doesNotMatch(reinstalled.output, /retrying|reconnecting/);
    assert.equal(bridge.metrics.linksRefused.get('key_mismatch'), 1, 'one attempt, no hammering');
  });

  test('a close 4409 during hello (no hello-error seen) also stops', T, async (t) => {
    const bridge = await fakeBridge(t, { hello: (link) => link.close(4409, 'key_mismatch: this computer id is held by another key') });
    const c = useComputer(t, { id: 10, url: bridge.url, timeScale: 1 }); // real seconds: the 5 s hello timeout must not beat the refusal on a loaded machine
    const { code } = await c.waitForExit();
    assert.equal(code, 1);
    assert.match(c.linesIn(COLOURS.red).join(' '), /The bridge refused this computer: key_mismatch: this computer id is held by another key \(code 4409\)/);
    assert.equal(bridge.links.length, 1, 'no reconnect');
  });
});

async function callPing(bridge) {
  const res = await fetch(bridge.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } }),
  });
  return (await res.json()).result;
}
