// 2026-07-28 subscriptions/listen over real HTTP: the SSE stream, its acknowledgement, tool list
// changes (CC_CONFIG reloads) to every live subscription with its id, the filter, closing the
// stream as the cancel (nothing kept), MCP_MAX_SUBSCRIPTIONS, keep-alive comments, the completion
// at shutdown, and 2025 clients unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { rpc, startTestBridge, until, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { ACCEPT, META, MODERN, SUB, listen } from './listen-client.js';

const tool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });
const changes = (stream) => stream.events.filter((e) => e.method === 'notifications/tools/list_changed');

/** A bridge with a CC_CONFIG file, and a function that changes its tool set by a reload. */
async function reloadable(env = {}) {
  const file = writeConfig({ tools: [tool('t0')] });
  const bridge = await startTestBridge({ CC_CONFIG: file, ...env });
  let n = 0;
  bridge.change = () => {
    n++;
    writeConfig({ tools: [tool(`t${n}`)] }, file);
    assert.equal(bridge.hub.reload().ok, true);
  };
  return bridge;
}

async function gauge(bridge, name) {
  const text = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)[1]);
}

test('listen: an SSE stream whose first message is the acknowledgement with the subscription id and the honoured filter; server/discover declares listChanged', async () => {
  await withBridge({}, async (bridge) => {
    const discover = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: META } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' });
    assert.deepEqual(discover.json.result.capabilities.tools, { listChanged: true });
    // unknown filter fields are ignored; the types this server has not (prompts, resources) are left out of the ack
    const s = await listen(bridge.mcpUrl, 'listen-1', { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ['file:///x'], 'example.com/other': 1 });
    assert.equal(s.status, 200);
    assert.match(s.headers['content-type'], /^text\/event-stream/);
    assert.equal(s.headers['cache-control'], 'no-cache');
    assert.equal(s.headers['x-accel-buffering'], 'no');
    await until(() => s.events.length >= 1);
    assert.deepEqual(s.events[0], {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUB]: 'listen-1' }, notifications: { toolsListChanged: true } },
    });
    assert.equal(bridge.dispatcher.subscriptions.size, 1);
    assert.equal(await gauge(bridge, 'cc_mcp_subscriptions'), 1);
    s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
});

test('listen: a tool set change (CC_CONFIG reload) reaches every live subscription once, each with its own id; one without toolsListChanged gets nothing', async () => {
  const bridge = await reloadable();
  try {
    const a = await listen(bridge.mcpUrl, 1, { toolsListChanged: true });
    const b = await listen(bridge.mcpUrl, 'b', { toolsListChanged: true });
    const none = await listen(bridge.mcpUrl, 'none', { toolsListChanged: false, resourcesListChanged: true });
    for (const s of [a, b, none]) await until(() => s.events.length === 1);
    assert.deepEqual(none.events[0].params.notifications, {});
    assert.equal(bridge.tools.watching, 2, 'only the subscriptions that asked for tool changes watch the registry');
    bridge.change();
    const notice = (id) => ({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUB]: id } } });
    assert.deepEqual(await a.next((e) => e.method === 'notifications/tools/list_changed'), notice(1));
    assert.deepEqual(await b.next((e) => e.method === 'notifications/tools/list_changed'), notice('b'));
    // a second change, then a fresh subscription's ack: every event of the first burst has been written by then
    bridge.change();
    await until(() => changes(a).length === 2 && changes(b).length === 2);
    const late = await listen(bridge.mcpUrl, 'late', { toolsListChanged: true });
    await until(() => late.events.length === 1);
    assert.equal(changes(a).length, 2);
    assert.deepEqual(none.events.map((e) => e.method), ['notifications/subscriptions/acknowledged']);
    for (const s of [a, b, none, late]) s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  } finally {
    await bridge.close();
  }
});

test('listen: closing the stream ends the subscription: dropped from the set and the registry, a later change is sent to the others only', async () => {
  const bridge = await reloadable();
  try {
    const gone = await listen(bridge.mcpUrl, 'gone', { toolsListChanged: true });
    const stays = await listen(bridge.mcpUrl, 'stays', { toolsListChanged: true });
    await until(() => gone.events.length === 1 && stays.events.length === 1);
    assert.equal(bridge.tools.watching, 2);
    gone.close();
    await until(() => bridge.dispatcher.subscriptions.size === 1);
    assert.equal(bridge.tools.watching, 1);
    assert.equal(bridge.dispatcher.subscriptions.cancelled, 1);
    bridge.change();
    await stays.next((e) => e.method === 'notifications/tools/list_changed');
    assert.equal(changes(gone).length, 0);
    stays.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0 && bridge.tools.watching === 0);
    assert.equal(await gauge(bridge, 'cc_mcp_subscriptions'), 0);
    // nothing left: a change now goes nowhere and the bridge keeps answering
    bridge.change();
    const list = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: META } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' });
    assert.ok(list.json.result.tools.some((t) => t.name === 't2'));
  } finally {
    await bridge.close();
  }
});

test('listen: MCP_MAX_SUBSCRIPTIONS: one more is refused with 503 and -32003 naming the variable; a freed slot can be taken again', async () => {
  await withBridge({ MCP_MAX_SUBSCRIPTIONS: '2' }, async (bridge) => {
    const one = await listen(bridge.mcpUrl, 1, { toolsListChanged: true });
    const two = await listen(bridge.mcpUrl, 2, {});
    await until(() => one.events.length === 1 && two.events.length === 1);
    const three = await listen(bridge.mcpUrl, 3, { toolsListChanged: true });
    await until(() => three.ended);
    assert.equal(three.status, 503);
    assert.equal(three.headers['retry-after'], '10');
    assert.equal(three.json.id, 3);
    assert.equal(three.json.error.code, -32003);
    assert.match(three.json.error.message, /2 are open.*MCP_MAX_SUBSCRIPTIONS/);
    assert.deepEqual(three.json.error.data, { limit: 2 });
    one.close();
    await until(() => bridge.dispatcher.subscriptions.size === 1);
    const four = await listen(bridge.mcpUrl, 4, { toolsListChanged: true });
    await until(() => four.events.length === 1);
    assert.equal(four.status, 200);
    two.close();
    four.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
});

test('listen: a malformed filter gets 400 -32602 saying what is wrong, nothing is opened', async () => {
  await withBridge({}, async (bridge) => {
    const cases = [
      [{ _meta: META }, /params\.notifications is required/],
      [{ _meta: META, notifications: [] }, /params\.notifications must be an object/],
      [{ _meta: META, notifications: { toolsListChanged: 'yes' } }, /toolsListChanged must be a boolean, not string "yes"/],
      [{ _meta: META, notifications: { promptsListChanged: 1 } }, /promptsListChanged must be a boolean, not number 1/],
      [{ _meta: META, notifications: { resourceSubscriptions: 'file:///x' } }, /resourceSubscriptions must be an array of strings, not string/],
      [{ _meta: META, notifications: { resourceSubscriptions: ['a', 2] } }, /resourceSubscriptions must be an array of strings, not an array holding number 2/],
      [{ _meta: META, notifications: { toolsListChanged: null } }, /toolsListChanged must be a boolean, not null/],
      [{ _meta: META, notifications: { toolsListChanged: 'x'.repeat(5000) } }, /toolsListChanged must be a boolean, not string "x{59}\.\.\. \(5002 characters\)$/],
    ];
    for (const [params, message] of cases) {
      const s = await listen(bridge.mcpUrl, 'bad', undefined, { params });
      await until(() => s.ended);
      assert.equal(s.status, 400, JSON.stringify(params));
      assert.equal(s.json.id, 'bad');
      assert.equal(s.json.error.code, -32602);
      assert.match(s.json.error.message, message);
    }
    // a client that cannot take an event stream is told so
    const json = await listen(bridge.mcpUrl, 'j', { toolsListChanged: true }, { accept: 'application/json' });
    await until(() => json.ended);
    assert.equal(json.status, 400);
    assert.equal(json.json.error.code, -32600);
    assert.match(json.json.error.message, /Accept header must list text\/event-stream/);
    assert.equal(bridge.dispatcher.subscriptions.size, 0);
    assert.equal(bridge.tools.watching, 0);
  });
});

test('listen: an idle stream gets SSE comment lines (MCP_LISTEN_KEEPALIVE_MS) and stays open', async () => {
  await withBridge({ MCP_LISTEN_KEEPALIVE_MS: '20' }, async (bridge) => {
    const s = await listen(bridge.mcpUrl, 'k', { toolsListChanged: true });
    await until(() => s.comments >= 2);
    assert.equal(s.ended, false);
    assert.equal(s.events.length, 1);
    s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
  await withBridge({ MCP_LISTEN_KEEPALIVE_MS: '0' }, async (bridge) => {
    const s = await listen(bridge.mcpUrl, 'k', { toolsListChanged: true });
    await until(() => s.events.length === 1);
    s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
    assert.equal(s.comments, 0);
  });
});

test('listen: a client that reads nothing is cut off once 64 KiB wait unsent (the kernel buffers full first): the subscription is dropped, the others go on', async () => {
  await withBridge({ MCP_LISTEN_KEEPALIVE_MS: '0' }, async (bridge) => {
    const reader = await listen(bridge.mcpUrl, 'reads', { toolsListChanged: true });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'stalls', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } });
    const { port } = new URL(bridge.mcpUrl);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.pause(); // never reads
    socket.on('error', () => {});
    socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: ${ACCEPT}\r\nMCP-Protocol-Version: ${MODERN}\r\nMcp-Method: subscriptions/listen\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await until(() => bridge.dispatcher.subscriptions.size === 2);
    // tool set changes, one burst per turn, until the stalled stream is cut off (a bound, not a timing)
    const source = (on) => ({ id: 'flip', tools: () => (on ? [{ name: 'flip', title: 'flip', description: 'flip', inputSchema: { type: 'object' } }] : []) });
    let n = 0;
    while (bridge.dispatcher.subscriptions.size === 2) {
      assert.ok(n < 2_000_000, 'the stalled stream was never cut off');
      bridge.tools.setSource(source(n++ % 2 === 0));
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(bridge.dispatcher.subscriptions.size, 1);
    assert.equal(bridge.tools.watching, 1);
    assert.equal(await gauge(bridge, 'cc_mcp_subscriptions_cut_off_total'), 1);
    // the reader got every burst's notice (it reads), and keeps getting them
    await until(() => changes(reader).length >= n - 1);
    reader.close();
    socket.destroy();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
});

test('listen: at shutdown every open subscription is answered with a complete result carrying its id, then its stream ends', async () => {
  const bridge = await reloadable();
  const a = await listen(bridge.mcpUrl, 'a', { toolsListChanged: true });
  const b = await listen(bridge.mcpUrl, 7, {});
  await until(() => a.events.length === 1 && b.events.length === 1);
  await bridge.close();
  await until(() => a.ended && b.ended);
  assert.deepEqual(a.events.at(-1), { jsonrpc: '2.0', id: 'a', result: { resultType: 'complete', _meta: { [SUB]: 'a', 'io.modelcontextprotocol/serverInfo': bridge.dispatcher.describe().serverInfo } } });
  assert.deepEqual(b.events.at(-1), { jsonrpc: '2.0', id: 7, result: { resultType: 'complete', _meta: { [SUB]: 7, 'io.modelcontextprotocol/serverInfo': bridge.dispatcher.describe().serverInfo } } });
  assert.equal(bridge.dispatcher.subscriptions.size, 0);
  assert.equal(bridge.dispatcher.subscriptions.completed, 2);
  assert.equal(bridge.tools.watching, 0);
});

test('listen: 2025 clients unchanged: subscriptions/listen is -32601 there, a tool change sends them nothing on POST (their notices come on GET /mcp: get-stream.test.js)', async () => {
  const bridge = await reloadable();
  try {
    const init = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    // listChanged: delivered on the 2025 GET /mcp stream
    assert.deepEqual(init.json.result.capabilities, { tools: { listChanged: true } });
    const legacy = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true } } }, { 'mcp-protocol-version': '2025-11-25', accept: ACCEPT });
    assert.equal(legacy.status, 200);
    assert.equal(legacy.json.error.code, -32601);
    assert.equal(bridge.dispatcher.subscriptions.size, 0);
    bridge.change();
    const list = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' });
    assert.ok(list.json.result.tools.some((t) => t.name === 't1'));
    assert.equal(bridge.tools.watching, 0);
  } finally {
    await bridge.close();
  }
});
