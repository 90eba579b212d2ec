// MCP_AUTH_TOKEN over real HTTP: every route but the public ones needs the bearer token, a 401 says
// nothing about what exists, /health says only ok without it, discovery probes get JSON 404s.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, rpc, startTestBridge } from '../helpers.js';
import { isPublic } from '../../dist/surfaces/http.js';

const TOKEN = 'first-token-0123456789abcdef';
const NEXT = 'rotated-token-0123456789abcdef';
const bridge = await startTestBridge({ MCP_AUTH_TOKEN: `${TOKEN},${NEXT}` });
after(() => bridge.close());
const base = new URL(bridge.mcpUrl).origin;
const auth = (token = TOKEN) => ({ authorization: `Bearer ${token}` });
const call = (name, args = {}) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });

function assertUnauthorized(res, { jsonRpc, presented }) {
  assert.equal(res.status, 401);
  const challenge = res.headers.get('www-authenticate');
  assert.match(challenge, /^Bearer realm="cc-mcp-bridge"/);
  assert.doesNotMatch(challenge, /resource_metadata/);
  assert.equal(/error="invalid_token"/.test(challenge), presented);
  if (jsonRpc) {
    assert.equal(res.json.jsonrpc, '2.0');
    assert.equal(res.json.id, null);
    assert.equal(res.json.error.code, -32001);
    assert.match(res.json.error.message, /^Unauthorized/);
  } else {
    assert.equal(res.json.error, 'unauthorized');
  }
}

test('MCP without a token, or with a wrong one, gets 401 with WWW-Authenticate: Bearer and a JSON-RPC error', async () => {
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18' } };
  for (const url of [bridge.mcpUrl, `${base}/`]) {
    assertUnauthorized(await rpc(url, initialize), { jsonRpc: true, presented: false });
    assertUnauthorized(await rpc(url, initialize, auth('wrong-token-0123456789abcdef')), { jsonRpc: true, presented: true });
    assertUnauthorized(await rpc(url, initialize, { authorization: `Basic ${TOKEN}` }), { jsonRpc: true, presented: true });
    assertUnauthorized(await rpc(url, initialize, auth(TOKEN.slice(0, -1))), { jsonRpc: true, presented: true });
  }
});

test('both rotation tokens are accepted', async () => {
  for (const token of [TOKEN, NEXT]) {
    const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, auth(token));
    assert.equal(res.status, 200);
    assert.ok(res.json.result.tools.some((t) => t.name === 'exec-lua'));
  }
});

test('a 401 never leaks whether a tool (or a route) exists', async () => {
  const strip = (res) => ({ status: res.status, text: res.text, challenge: res.headers.get('www-authenticate'), type: res.headers.get('content-type') });
  const known = strip(await rpc(bridge.mcpUrl, call('exec-lua', { computerId: 1, code: 'return 1' })));
  const unknown = strip(await rpc(bridge.mcpUrl, call('no-such-tool')));
  const garbage = strip(await rpc(bridge.mcpUrl, '{not json'));
  assert.equal(known.status, 401);
  assert.deepEqual(unknown, known);
  assert.deepEqual(garbage, known);
  // an unknown path answers exactly like a known one
  const path = await fetch(`${base}/no/such/route`, { method: 'POST' });
  const tools = await fetch(`${base}/tools/exec-lua`, { method: 'POST' });
  assert.equal(path.status, 401);
  assert.equal(tools.status, 401);
  assert.equal(await path.text(), await tools.text());
});

test('an unauthenticated call never reaches a linked computer', async () => {
  const computer = await linkComputer(bridge, { computerId: 31, onRequest: () => ({ ok: true, result: 'ran' }) });
  try {
    const res = await rpc(bridge.mcpUrl, call('exec-lua', { computerId: 31, code: 'return 1' }));
    assert.equal(res.status, 401);
    const probe = await rpc(bridge.mcpUrl, call('probe-computers'), auth());
    assert.equal(probe.status, 200);
    // the probe's ping is the only request the computer ever saw
    assert.deepEqual(computer.received.filter((f) => f.type === 'request').map((f) => f.method), ['ping']);
  } finally {
    await computer.close();
  }
});

test('/health says only ok without the token, and the count with it', async () => {
  const open = await fetch(`${base}/health`);
  assert.equal(open.status, 200);
  assert.deepEqual(await open.json(), { ok: true });
  const wrong = await fetch(`${base}/health`, { headers: auth('wrong-token-0123456789abcdef') });
  assert.deepEqual(await wrong.json(), { ok: true });
  const full = await fetch(`${base}/health`, { headers: auth() });
  assert.deepEqual(await full.json(), { ok: true, computers: bridge.links.size, link: { state: 'listening', address: new URL(bridge.linkUrl).host } });
});

test('OAuth discovery probes get a 404 with a JSON body, token or not', async () => {
  for (const [method, path] of [
    ['GET', '/.well-known/oauth-protected-resource'],
    ['GET', '/.well-known/oauth-protected-resource/mcp'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/openid-configuration'],
    ['POST', '/register'],
  ]) {
    for (const headers of [{}, auth()]) {
      const res = await fetch(`${base}${path}`, { method, headers });
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get('content-type'), /application\/json/);
      assert.equal(typeof (await res.json()).error, 'string');
    }
  }
});

test('a CORS preflight is not asked for a token', async () => {
  const res = await fetch(bridge.mcpUrl, { method: 'OPTIONS' });
  assert.notEqual(res.status, 401);
  assert.equal(isPublic('OPTIONS', '/mcp'), true);
  assert.equal(isPublic('POST', '/mcp'), false);
  assert.equal(isPublic('GET', '/health'), true);
});

test('without MCP_AUTH_TOKEN nothing asks for one', async () => {
  const open = await startTestBridge();
  try {
    const res = await rpc(open.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(res.status, 200);
    const health = await fetch(`${new URL(open.mcpUrl).origin}/health`);
    assert.deepEqual(await health.json(), { ok: true, computers: 0, link: { state: 'listening', address: new URL(open.linkUrl).host } });
  } finally {
    await open.close();
  }
});

test('bug: a session id issued to one token is an unknown session to another token (POST, GET stream, cancel)', { timeout: 60_000 }, async () => {
  const init = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } }, auth(TOKEN));
  assert.equal(init.status, 200, init.text);
  const id = init.headers.get('mcp-session-id');
  assert.ok(id);
  const made = `${'0'.repeat(32)}.${'0'.repeat(32)}`;
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  const v = { 'mcp-protocol-version': '2025-11-25' };
  // the token it was issued to keeps the session
  assert.equal((await rpc(bridge.mcpUrl, list, { ...auth(TOKEN), ...v, 'mcp-session-id': id })).status, 200);
  // the other configured token: exactly the answer to an id never issued (nothing says it exists)
  const stolen = await rpc(bridge.mcpUrl, list, { ...auth(NEXT), ...v, 'mcp-session-id': id });
  const unknown = await rpc(bridge.mcpUrl, list, { ...auth(NEXT), ...v, 'mcp-session-id': made });
  assert.equal(stolen.status, 404, stolen.text);
  assert.equal(stolen.json.error.code, -32001);
  assert.equal(stolen.text, unknown.text);

  // GET /mcp: the stream (and the session's change notices) only for the token it was issued to
  const get = (token, session) => fetch(bridge.mcpUrl, { headers: { ...auth(token), ...v, accept: 'text/event-stream', 'mcp-session-id': session } });
  const otherGet = await get(NEXT, id);
  const unknownGet = await get(NEXT, made);
  assert.equal(otherGet.status, 404);
  assert.equal(await otherGet.text(), await unknownGet.text());
  const ownGet = await get(TOKEN, id);
  assert.equal(ownGet.status, 200);
  await ownGet.body.cancel();

  // DELETE is 405 whoever asks: it says nothing of the session either
  const del = async (token, session) => {
    const res = await fetch(bridge.mcpUrl, { method: 'DELETE', headers: { ...auth(token), 'mcp-session-id': session } });
    return { status: res.status, text: await res.text() };
  };
  assert.deepEqual(await del(NEXT, id), await del(TOKEN, id));
  assert.equal((await del(NEXT, id)).status, 405);

  // the other token cannot cancel the session's call in flight
  let release;
  const held = new Promise((r) => (release = r));
  const computer = await linkComputer(bridge, { computerId: 32, onRequest: (f) => (f.method === 'ping' ? { ok: true, result: 'pong' } : held) });
  try {
    const pending = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 32, code: 'return 1' } } }, { ...auth(TOKEN), ...v, 'mcp-session-id': id });
    await computer.next((f) => f.type === 'request' && f.method !== 'ping');
    const cancel = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow' } }, { ...auth(NEXT), ...v, 'mcp-session-id': id });
    assert.equal(cancel.status, 404);
    release({ ok: true, result: { returns: [{ type: 'number', value: 1 }], output: '' } });
    const answer = await pending;
    assert.equal(answer.status, 200, answer.text);
    assert.equal(computer.received.some((f) => f.type === 'cancel'), false);
  } finally {
    await computer.close();
  }
});
