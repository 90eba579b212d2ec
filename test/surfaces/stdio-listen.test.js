// 2026-07-28 subscriptions/listen over stdio, the bridge a real child process: the acknowledgement,
// tool list changes (CC_CONFIG reloaded by SIGHUP) to every live subscription with its id on the one
// stdout, notifications/cancelled ending one (nothing more for it, nothing kept), ids unique while
// open, MCP_MAX_SUBSCRIPTIONS, and the completion when the bridge shuts down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { INIT, run } from './stdio-child.js';
import { readFileSync } from 'node:fs';

/** The server's identity in the _meta of every 2026-07-28 result (the listen's final one too). */
const SERVER_INFO = { name: 'cc-mcp-bridge', title: 'ComputerCraft MCP bridge', version: JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version };


const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const SUB = 'io.modelcontextprotocol/subscriptionId';
const ACK = 'notifications/subscriptions/acknowledged';
const CHANGED = 'notifications/tools/list_changed';
const tool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });

const listen = (bridge, id, notifications) => bridge.send({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META, notifications } });
const subId = (m) => m.params?._meta?.[SUB];
const ackOf = (bridge, id) => bridge.next((m) => m.method === ACK && subId(m) === id);
const noticesFor = (bridge, id) => bridge.messages.filter((m) => m.method === CHANGED && subId(m) === id);

/** Changes the tool set: a new CC_CONFIG, applied on SIGHUP. */
function changer(bridge, file) {
  let n = 0;
  return async () => {
    n++;
    writeConfig({ tools: [tool(`t${n}`)] }, file);
    bridge.kill('SIGHUP');
    await until(() => (bridge.out.stderr.match(/config file reloaded/g) ?? []).length === n);
  };
}

/** Every message written before this point has arrived: a request's answer comes after them on stdout. */
let syncs = 0;
async function drained(bridge) {
  const id = `sync-${++syncs}`;
  bridge.send({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: META } });
  return (await bridge.answer(id)).result.tools.map((t) => t.name);
}

async function metric(bridge, name) {
  await until(() => /also over HTTP at http:\/\/\S+/.test(bridge.out.stderr));
  const url = /also over HTTP at (http:\/\/\S+)\/mcp/.exec(bridge.out.stderr)[1];
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)[1]);
}

test('stdio listen: ack first with its id; a change reaches every live subscription with its own id; no filter, no notices; notifications/cancelled ends one and nothing is kept for it', () => {
  const file = writeConfig({ tools: [tool('t0')] });
  return run({ CC_CONFIG: file, MCP_PORT: '0' }, async (bridge) => {
    await bridge.linkUrl();
    const change = changer(bridge, file);
    listen(bridge, 1, { toolsListChanged: true, resourcesListChanged: true });
    listen(bridge, 'two', { toolsListChanged: true });
    listen(bridge, 'none', { promptsListChanged: true });
    assert.deepEqual(await ackOf(bridge, 1), { jsonrpc: '2.0', method: ACK, params: { _meta: { [SUB]: 1 }, notifications: { toolsListChanged: true } } });
    assert.deepEqual((await ackOf(bridge, 'two')).params.notifications, { toolsListChanged: true });
    assert.deepEqual((await ackOf(bridge, 'none')).params.notifications, {});
    // the listen requests are not answered while open
    assert.equal(bridge.messages.filter((m) => 'id' in m).length, 0);
    assert.equal(await metric(bridge, 'cc_mcp_subscriptions'), 3);

    await change();
    await until(() => noticesFor(bridge, 1).length === 1 && noticesFor(bridge, 'two').length === 1);
    assert.deepEqual(noticesFor(bridge, 'two')[0], { jsonrpc: '2.0', method: CHANGED, params: { _meta: { [SUB]: 'two' } } });
    // each subscription's ack came before its first notice
    for (const id of [1, 'two']) {
      const at = (m) => bridge.messages.indexOf(m);
      assert.ok(at(bridge.messages.find((m) => m.method === ACK && subId(m) === id)) < at(noticesFor(bridge, id)[0]));
    }

    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'two', reason: 'done' } });
    await until(async () => (await metric(bridge, 'cc_mcp_subscriptions')) === 2);
    await change();
    await until(() => noticesFor(bridge, 1).length === 2);
    assert.ok((await drained(bridge)).includes('t2'));
    assert.equal(noticesFor(bridge, 'two').length, 1, 'nothing for a cancelled subscription');
    assert.equal(noticesFor(bridge, 'none').length, 0, 'nothing that was not asked for');
    // plain (2025) list_changed only after initialize: none here
    assert.equal(bridge.messages.filter((m) => m.method === CHANGED && subId(m) === undefined).length, 0);
    // a cancelled call id that is no subscription (or an unknown one) changes nothing
    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'two' } });
    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'never' } });
    assert.equal(await metric(bridge, 'cc_mcp_subscriptions'), 2);
    // EOF: the transport closed, the bridge exits without answering them
    bridge.stdin.end();
    const exit = await bridge.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(bridge.messages.filter((m) => m.id === 1 || m.id === 'none').length, 0);
  });
});

test('stdio listen: an id already open is refused (-32602) until it ends; MCP_MAX_SUBSCRIPTIONS refuses one more with -32003; a freed slot opens again', () =>
  run({ MCP_MAX_SUBSCRIPTIONS: '2' }, async (bridge) => {
    listen(bridge, 'a', { toolsListChanged: true });
    await ackOf(bridge, 'a');
    listen(bridge, 'a', { toolsListChanged: true });
    const dup = await bridge.answer('a');
    assert.equal(dup.error.code, -32602);
    assert.match(dup.error.message, /subscription with id "a" is already open/);
    listen(bridge, 'b', {});
    await ackOf(bridge, 'b');
    listen(bridge, 'c', { toolsListChanged: true });
    const full = await bridge.answer('c');
    assert.equal(full.error.code, -32003);
    assert.match(full.error.message, /MCP_MAX_SUBSCRIPTIONS/);
    assert.deepEqual(full.error.data, { limit: 2 });
    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } });
    listen(bridge, 'd', { toolsListChanged: true });
    await ackOf(bridge, 'd');
    // malformed filter: a specific error, nothing opened
    listen(bridge, 'e', { toolsListChanged: 1 });
    assert.match((await bridge.answer('e')).error.message, /toolsListChanged must be a boolean, not number 1/);
    // a 2025 client on the same stream: listen is not a method of its revision
    bridge.send({ jsonrpc: '2.0', id: 'old', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true } } });
    assert.equal((await bridge.answer('old')).error.code, -32601);
  }));

test('stdio listen with a 10 KB id already open: the refusal echoed the id whole; it is cut at 60 characters with its length', () =>
  run({}, async (bridge) => {
    const id = 'i'.repeat(10_000);
    listen(bridge, id, { toolsListChanged: true });
    await ackOf(bridge, id);
    listen(bridge, id, { toolsListChanged: true });
    const dup = await bridge.answer(id);
    assert.equal(dup.error.code, -32602);
    assert.match(dup.error.message, /^Invalid params: a subscription with id "i{59}\.\.\. \(10002 characters\) is already open on this connection;/);
    assert.ok(dup.error.message.length < 300, `message of ${dup.error.message.length} characters`);
  }));

test('stdio listen: on SIGTERM each open subscription gets its complete result with its id, then the cancel notice that closes it; 2025 clients get nothing new', () => {
  const file = writeConfig({ tools: [tool('t0')] });
  return run({ CC_CONFIG: file }, async (bridge) => {
    bridge.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT });
    await bridge.answer(0);
    listen(bridge, 'x', { toolsListChanged: true });
    listen(bridge, 9, {});
    await ackOf(bridge, 'x');
    await ackOf(bridge, 9);
    await changer(bridge, file)();
    // the 2025 client (initialize) gets its plain notice, the subscription its own
    await until(() => noticesFor(bridge, 'x').length === 1);
    await bridge.next((m) => m.method === CHANGED && subId(m) === undefined);
    bridge.kill('SIGTERM');
    const exit = await bridge.exited;
    assert.equal(exit.code, 0, exit.stderr);
    for (const id of ['x', 9]) {
      const at = bridge.messages.findIndex((m) => m.id === id);
      assert.deepEqual(bridge.messages[at], { jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUB]: id, 'io.modelcontextprotocol/serverInfo': SERVER_INFO } } });
      assert.deepEqual(bridge.messages[at + 1], { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the bridge is shutting down' } });
    }
    assert.equal(bridge.messages.filter((m) => m.method === CHANGED && subId(m) === undefined).length, 1);
  });
});

test('stdio listen: MCP_MAX_SUBSCRIPTIONS counts stdio and HTTP together (--stdio with MCP_PORT)', () =>
  run({ MCP_MAX_SUBSCRIPTIONS: '1', MCP_PORT: '0' }, async (bridge) => {
    listen(bridge, 's', { toolsListChanged: true });
    await ackOf(bridge, 's');
    await until(() => /also over HTTP at http:\/\/\S+/.test(bridge.out.stderr));
    const url = /also over HTTP at (http:\/\/\S+)/.exec(bridge.out.stderr)[1];
    const body = { jsonrpc: '2.0', id: 'h', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' };
    const full = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    assert.equal(full.status, 503);
    assert.equal((await full.json()).error.code, -32003);
    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 's' } });
    await until(async () => (await metric(bridge, 'cc_mcp_subscriptions')) === 0);
    const open = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    assert.equal(open.status, 200);
    const reader = open.body.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /notifications\/subscriptions\/acknowledged/);
    await reader.cancel();
    await until(async () => (await metric(bridge, 'cc_mcp_subscriptions')) === 0);
  }));

test('stdio listen: MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: the stdio connection is one client; one more ends its oldest, answered -32003 naming the variable, then cancelled', () =>
  run({ MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: '2', MCP_PORT: '0' }, async (bridge) => {
    for (const id of [1, 2, 3]) {
      listen(bridge, id, { toolsListChanged: true });
      await ackOf(bridge, id);
    }
    const message = 'this client opened a newer one and may hold 2 at once (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT); its newest are kept';
    assert.deepEqual(await bridge.answer(1), { jsonrpc: '2.0', id: 1, error: { code: -32003, message: `Subscription ended: ${message}`, data: { limit: 2, variable: 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT' } } });
    assert.deepEqual(await bridge.next((m) => m.method === 'notifications/cancelled'), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: `subscription ended: ${message}` } });
    assert.equal(await metric(bridge, 'cc_mcp_subscriptions'), 2);
    assert.equal(await metric(bridge, 'cc_mcp_subscriptions_replaced_total'), 1);
    assert.equal(bridge.messages.filter((m) => 'id' in m && m.id !== 1).length, 0, 'the newer two stay open');
  }));

test('stdio listen: at MCP_MAX_SUBSCRIPTIONS an HTTP newcomer takes the oldest of the stdio client holding 2; at one each it is refused', () =>
  run({ MCP_MAX_SUBSCRIPTIONS: '2', MCP_PORT: '0' }, async (bridge) => {
    listen(bridge, 's1', { toolsListChanged: true });
    listen(bridge, 's2', { toolsListChanged: true });
    await ackOf(bridge, 's1');
    await ackOf(bridge, 's2');
    await until(() => /also over HTTP at http:\/\/\S+/.test(bridge.out.stderr));
    const url = /also over HTTP at (http:\/\/\S+)/.exec(bridge.out.stderr)[1];
    const body = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' };
    const open = await fetch(url, { method: 'POST', headers, body: body('h1') });
    assert.equal(open.status, 200);
    const reader = open.body.getReader();
    assert.match(new TextDecoder().decode((await reader.read()).value), /notifications\/subscriptions\/acknowledged/);
    const ended = await bridge.answer('s1');
    assert.equal(ended.error.code, -32003);
    assert.match(ended.error.message, /^Subscription ended: 2 are open, the most allowed at once \(MCP_MAX_SUBSCRIPTIONS\), and this client held the most \(2\)/);
    const refused = await fetch(url, { method: 'POST', headers, body: body('h2') });
    assert.equal(refused.status, 503);
    assert.match((await refused.json()).error.message, /MCP_MAX_SUBSCRIPTIONS/);
    assert.equal(bridge.messages.filter((m) => m.id === 's2').length, 0, 's2 stays open');
    await reader.cancel();
    await until(async () => (await metric(bridge, 'cc_mcp_subscriptions')) === 1);
  }));

test('stdio listen: the end of stdin cancels only the stdio subscriptions; an HTTP one (--stdio with MCP_PORT) stays open and gets its complete result when the bridge exits', () =>
  run({ MCP_PORT: '0' }, async (bridge) => {
    listen(bridge, 's', { toolsListChanged: true });
    await ackOf(bridge, 's');
    await until(() => /also over HTTP at http:\/\/\S+/.test(bridge.out.stderr));
    const url = /also over HTTP at (http:\/\/\S+)/.exec(bridge.out.stderr)[1];
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' };
    const body = { jsonrpc: '2.0', id: 'h', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } };
    const open = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    assert.equal(open.status, 200);
    // the whole HTTP stream, read to its end while the bridge exits
    const read = (async () => {
      let text = '';
      try {
        for await (const chunk of open.body) text += Buffer.from(chunk).toString();
      } catch {
        // a connection cut when the process exits: what arrived is kept
      }
      return text;
    })();
    await until(async () => (await metric(bridge, 'cc_mcp_subscriptions')) === 2);
    bridge.stdin.end();
    const exit = await bridge.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(bridge.messages.filter((m) => m.id === 's').length, 0, 'the stdio one ends without an answer');
    const events = (await read)
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)));
    assert.equal(events[0].method, ACK);
    const final = events.find((m) => m.id === 'h');
    assert.ok(final, `the HTTP subscription got no final answer: ${JSON.stringify(events)}`);
    assert.deepEqual(final.result, { resultType: 'complete', _meta: { [SUB]: 'h', 'io.modelcontextprotocol/serverInfo': SERVER_INFO } });
  }));
