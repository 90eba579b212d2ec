// Cancellation that follows the caller (closing the request; notifications/cancelled scoped to the
// same session or connection) and CORS for allowed Origins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { linkComputer, rpc, session, until, withBridge } from '../helpers.js';
import { issueSessionId, toolsMayDiffer, validSessionId, callerScope } from '../../dist/surfaces/caller-scope.js';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from '../upstream/fixture.js';

const execCall = (id, code = 'sleep(60)') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code, timeoutMs: 300000 } } });
const cancelNote = (requestId) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });

test('session ids: only ids this process signed are valid; others fall back to the connection', () => {
  const id = issueSessionId();
  assert.equal(validSessionId(id), true);
  assert.equal(validSessionId(id.replace(/.$/, (c) => (c === '0' ? '1' : '0'))), false);
  assert.equal(validSessionId('not-a-session'), false);
  const socketA = {};
  const socketB = {};
  assert.equal(callerScope(socketA, id), `session:${id}`);
  assert.equal(callerScope(socketA, 'forged'), callerScope(socketA, undefined));
  assert.notEqual(callerScope(socketA, undefined), callerScope(socketB, undefined));
});

test('session ids carry this start\'s tag and the tool set\'s generation: the tools may differ for an id of another tag (an earlier start, or a build before the tag) or of another generation', () => {
  const ids = [issueSessionId(), issueSessionId(), issueSessionId(5), issueSessionId(2 ** 32 + 7)];
  for (const id of ids) assert.match(id, /^[0-9a-f]{32}\.[0-9a-f]{32}$/);
  assert.ok(ids.every((id) => id.slice(0, 8) === ids[0].slice(0, 8)), 'one tag a start');
  assert.deepEqual(ids.map((id) => id.slice(8, 16)), ['00000000', '00000000', '00000005', '00000007']);
  assert.notEqual(ids[0].slice(16, 32), ids[1].slice(16, 32), 'the rest of the nonce is random');
  assert.equal(toolsMayDiffer(ids[0], 0), false);
  assert.equal(toolsMayDiffer(ids[0], 1), true);
  assert.equal(toolsMayDiffer(ids[2], 5), false);
  assert.equal(toolsMayDiffer(ids[2], 4), true);
  const otherTag = `${ids[0].slice(0, 7)}${ids[0][7] === '0' ? '1' : '0'}${ids[0].slice(8)}`;
  assert.equal(toolsMayDiffer(otherTag, 0), true);
});

test('session id cache: an altered id after a good one on the same socket is refused; another socket with the same id is verified on its own', () => {
  const id = issueSessionId();
  const forged = id.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
  const socketA = {};
  const socketB = {};
  assert.equal(callerScope(socketA, id), `session:${id}`);
  assert.equal(callerScope(socketA, id), `session:${id}`);
  const connA = callerScope(socketA, forged);
  assert.match(connA, /^connection:/);
  assert.equal(callerScope(socketA, id), `session:${id}`);
  assert.equal(callerScope(socketB, id), `session:${id}`);
  const connB = callerScope(socketB, forged);
  assert.match(connB, /^connection:/);
  assert.notEqual(connA, connB);
  assert.match(callerScope({}, forged), /^connection:/);
});

test('closing the HTTP request cancels its call: the computer gets the cancel frame, nothing is written back', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const body = JSON.stringify(execCall(5));
    const req = request(bridge.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', () => {});
    req.end(body);
    const sent = await computer.next((f) => f.type === 'request');
    req.destroy();
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: sent.id });
    await until(() => bridge.dispatcher.activeCalls === 0);
    assert.equal(answered, false);
    assert.ok(bridge.logs.some((l) => l.includes('closed by the client before its answer')));
    await computer.close();
  }));

test("one client's notifications/cancelled never cancels another client's call, whatever the id", () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 1, onRequest: (f) => (f.params.code === 'quick' ? { ok: true, result: { output: 'ok', returns: [], truncated: false } } : null) });
    const victim = await session(bridge.mcpUrl);
    const attacker = await session(bridge.mcpUrl);
    assert.notEqual(victim['mcp-session-id'], attacker['mcp-session-id']);
    const pending = rpc(bridge.mcpUrl, execCall(1), victim);
    await computer.next((f) => f.type === 'request');
    // another session, no session (a new connection), and a forged session id: none reaches the call
    assert.equal((await rpc(bridge.mcpUrl, cancelNote(1), attacker)).status, 202);
    assert.equal((await rpc(bridge.mcpUrl, cancelNote(1))).status, 202);
    // (a session id this bridge never issued is a session that is over: 404, nothing runs)
    assert.equal((await rpc(bridge.mcpUrl, cancelNote(1), { 'mcp-session-id': `${'0'.repeat(32)}.${'0'.repeat(32)}` })).status, 404);
    // a quick call after them proves they were all handled before we look
    assert.equal((await rpc(bridge.mcpUrl, execCall(2, 'quick'))).json.result.structuredContent.output, 'ok');
    assert.equal(computer.received.some((f) => f.type === 'cancel'), false);
    assert.equal(bridge.dispatcher.activeCalls, 1);
    assert.ok(!bridge.logs.some((l) => l.includes('client cancelled request')));
    // the owner's cancel does reach it
    assert.equal((await rpc(bridge.mcpUrl, cancelNote(1), victim)).status, 202);
    await computer.next((f) => f.type === 'cancel');
    const { json } = await pending;
    assert.equal(json.result.isError, true);
    await computer.close();
  }));

test('CORS: an allowed Origin gets a 204 preflight and Access-Control-Allow-Origin on answers; a foreign one 403 without CORS headers', () =>
  withBridge({ MCP_ALLOWED_ORIGINS: 'https://app.example' }, async (bridge) => {
    for (const origin of ['http://localhost:5173', 'https://app.example']) {
      const pre = await fetch(bridge.mcpUrl, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), origin);
      assert.match(pre.headers.get('access-control-allow-methods'), /POST/);
      const allowed = pre.headers.get('access-control-allow-headers').toLowerCase();
      for (const h of ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'authorization', 'content-type']) assert.ok(allowed.includes(h), h);
      assert.match(pre.headers.get('access-control-expose-headers'), /Mcp-Session-Id/);
      const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { origin });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), origin);
      assert.ok(res.json.result.tools.length > 0);
    }
    // 2026-07-28 Mcp-Param-{Name} headers are named by tool schemas: the ones asked for are allowed, nothing else
    const params = await fetch(bridge.mcpUrl, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:9', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,mcp-param-region,x-other,mcp-param-bad name' },
    });
    const list = params.headers.get('access-control-allow-headers').split(', ');
    assert.ok(list.includes('mcp-param-region'), list.join());
    assert.ok(!list.some((h) => /x-other|bad name/.test(h)), list.join());
    const foreign = await fetch(bridge.mcpUrl, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    const post = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { origin: 'https://evil.example' });
    assert.equal(post.status, 403);
    assert.equal(post.headers.get('access-control-allow-origin'), null);
    // no Origin (not a browser): no CORS headers, OPTIONS is not a route
    const plain = await fetch(bridge.mcpUrl, { method: 'OPTIONS' });
    assert.equal(plain.status, 405);
    assert.equal(plain.headers.get('access-control-allow-origin'), null);
  }));

/** POSTs a body and returns a function that closes the request before its answer. */
function openCall(url, message) {
  const body = JSON.stringify(message);
  const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
  const state = { answered: false };
  req.on('response', () => (state.answered = true));
  req.on('error', () => {});
  req.end(body);
  return Object.assign(state, { close: () => req.destroy() });
}

test('closing the HTTP request cancels a config Lua tool call (cancel frame) and an upstream call (notifications/cancelled upstream)', () => {
  const file = writeConfig({ tools: [{ name: 'wait', target: { computerId: 1 }, lua: 'sleep(60)', timeoutMs: 300000 }], servers: [fixtureServer('fx')] });
  return withBridge({ CC_CONFIG: file }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const lua = openCall(bridge.mcpUrl, { jsonrpc: '2.0', id: 'lua', method: 'tools/call', params: { name: 'wait', arguments: {} } });
    const sent = await computer.next((f) => f.type === 'request');
    lua.close();
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: sent.id });
    await until(() => bridge.dispatcher.activeCalls === 0);

    await until(async () => (await (await fetch(new URL('/health', bridge.mcpUrl))).json()).servers.some((s) => s.id === 'fx' && s.state === 'up'));
    const upstream = openCall(bridge.mcpUrl, { jsonrpc: '2.0', id: 'up', method: 'tools/call', params: { name: 'fx__slow', arguments: {} } });
    await until(() => bridge.dispatcher.activeCalls === 1);
    upstream.close();
    await until(() => bridge.logs.some((l) => /upstream fx stderr: cancelled \d+ \(cancelled by the caller\)/.test(l)));
    await until(() => bridge.dispatcher.activeCalls === 0);
    assert.equal(lua.answered || upstream.answered, false);
    await computer.close();
  });
});

test('2026-07-28 (no session): closing the request cancels its call as well', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code: 'sleep(60)', timeoutMs: 300000 }, _meta: meta } });
    const req = request(bridge.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'exec-lua' },
    });
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', () => {});
    req.end(body);
    const sent = await computer.next((f) => f.type === 'request');
    req.destroy();
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: sent.id });
    await until(() => bridge.dispatcher.activeCalls === 0);
    assert.equal(answered, false);
    await computer.close();
  }));

test('a session id with anything after its signature is not valid: a 2025 request carrying one gets 404 (found by mutation testing: the id pattern unanchored at its end passed every test)', () =>
  withBridge({}, async (bridge) => {
    const headers = await session(bridge.mcpUrl);
    const id = headers['mcp-session-id'];
    assert.equal((await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers)).status, 200);
    for (const longer of [`${id}0`, `${id}.${'0'.repeat(32)}`]) {
      assert.equal(validSessionId(longer), false, longer);
      const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': longer });
      assert.equal(res.status, 404, longer);
    }
  }));
