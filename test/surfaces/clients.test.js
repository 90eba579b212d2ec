// Real MCP clients' requests, replayed over real HTTP: headers and bodies as captured with a logging
// proxy in front of the bridge (2026-11-23) from Claude Code 2.1.197 and 2.1.330, opencode 1.18.33
// and MCP Inspector CLI 0.15.0 (README, "Connecting an MCP client"). Each test is named after the
// client whose sequence it replays, so a change that would break that client fails here by name.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, pongText, startTestBridge } from '../helpers.js';
import { NO_OAUTH, isOAuthProbe } from '../../dist/surfaces/http.js';
import { SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE } from '../../dist/surfaces/mcp-route.js';

const open = await startTestBridge();
const TOKEN = 'interop-token-0123456789abcdef';
const locked = await startTestBridge({ MCP_AUTH_TOKEN: TOKEN });
after(() => Promise.all([open.close(), locked.close()]));
const computer = await linkComputer(open, { computerId: 12, computerLabel: 'base-turtle' });
after(() => computer.close());

/** One request as the client sent it; answers status, headers and the parsed JSON body (or null). */
async function send(url, method, headers, body) {
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? null : JSON.parse(text) };
}

const claudeInfo = (version) => ({
  name: 'claude-code', title: 'Claude Code', version,
  description: "Anthropic's agentic coding tool", websiteUrl: 'https://claude.com/claude-code',
});
/** What Claude Code puts on every request (its fetch sets accept-encoding: identity too). */
const claudeHeaders = (version, extra = {}) => ({
  accept: 'application/json, text/event-stream',
  'accept-encoding': 'identity',
  'content-type': 'application/json',
  'user-agent': `claude-code/${version} (sdk-cli)`,
  ...extra,
});

/** The 2025-11-25 handshake Claude Code 2.1.197, opencode 1.18.33 and the Inspector CLI all run. */
async function handshake2025(url, headers, clientInfo, capabilities) {
  const init = await send(url, 'POST', headers, { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo }, jsonrpc: '2.0', id: 0 });
  assert.equal(init.status, 200);
  assert.match(init.headers.get('content-type'), /^application\/json/);
  assert.equal(init.json.result.protocolVersion, '2025-11-25');
  assert.deepEqual(init.json.result.capabilities, { tools: { listChanged: true } });
  const session = init.headers.get('mcp-session-id');
  assert.match(session, /^[0-9a-f]{32}\.[0-9a-f]{32}$/);
  const next = { ...headers, 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': session };
  const initialized = await send(url, 'POST', next, { method: 'notifications/initialized', jsonrpc: '2.0' });
  assert.equal(initialized.status, 202);
  assert.equal(initialized.json, null);
  return next;
}

/** Opens the GET stream as the client does; answers its status and content type, then closes it. */
async function openGetStream(url, headers) {
  const abort = new AbortController();
  const res = await fetch(url, { method: 'GET', headers, signal: abort.signal });
  const answer = { status: res.status, type: res.headers.get('content-type') };
  abort.abort();
  await res.body?.cancel().catch(() => {});
  return answer;
}

test('Claude Code 2.1.197 over HTTP: 2025-11-25 handshake declaring tools.listChanged, GET /mcp event stream opened, tools/list, tools/call', async () => {
  const headers = await handshake2025(open.mcpUrl, claudeHeaders('2.1.197'), claudeInfo('2.1.197'), { roots: {}, elicitation: {} });
  // it opens the optional GET stream right after notifications/initialized (405 made it go on without one)
  const { accept: _, 'content-type': __, ...getHeaders } = headers;
  assert.deepEqual(await openGetStream(open.mcpUrl, { ...getHeaders, accept: 'text/event-stream' }), { status: 200, type: 'text/event-stream' });
  const list = await send(open.mcpUrl, 'POST', headers, { method: 'tools/list', jsonrpc: '2.0', id: 1 });
  assert.equal(list.status, 200);
  assert.ok(list.json.result.tools.some((t) => t.name === 'probe-computers'));
  for (const tool of list.json.result.tools) assert.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/); // Claude Code's mcp__server__tool names
  const call = await send(open.mcpUrl, 'POST', headers, { method: 'tools/call', params: { name: 'probe-computers', arguments: {}, _meta: { 'claudecode/toolUseId': 'toolu_5', progressToken: 2 } }, jsonrpc: '2.0', id: 2 });
  assert.equal(call.status, 200);
  assert.equal(call.json.result.structuredContent.computers[0].result, pongText(12, 'base-turtle'));
});

test('Claude Code 2.1.197 over HTTP: a call it cancels at its tool timeout (notifications/cancelled on its session, from another connection) ends in an event stream with no answer; the computer gets the cancel', async () => {
  const silent = await linkComputer(open, { computerId: 5, onRequest: () => null });
  try {
    const headers = await handshake2025(open.mcpUrl, claudeHeaders('2.1.197'), claudeInfo('2.1.197'), { roots: {}, elicitation: {} });
    const pending = send(open.mcpUrl, 'POST', headers, { method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 5, code: 'sleep(60)', timeoutMs: 60000 }, _meta: { 'claudecode/toolUseId': 'toolu_6', progressToken: 2 } }, jsonrpc: '2.0', id: 2 });
    const request = await silent.next((f) => f.type === 'request');
    // undici opens a second connection: the call's own is busy
    const notice = await send(open.mcpUrl, 'POST', headers, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'McpError: MCP error -32001: Request timed out' } });
    assert.equal(notice.status, 202);
    assert.deepEqual(await silent.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    // an answer here made Claude Code log "Connection error: Received a response for an unknown message ID"
    // and "HTTP connection dropped"; the cancellation utility says the receiver SHOULD NOT answer
    const answer = await pending;
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type'), /^text\/event-stream/);
    assert.equal(answer.json, null);
    // a client whose Accept has no event stream cannot take that: it still gets the JSON answer
    const { accept: _, ...jsonOnly } = headers;
    const second = send(open.mcpUrl, 'POST', { ...jsonOnly, accept: 'application/json' }, { method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 5, code: 'sleep(60)' } }, jsonrpc: '2.0', id: 3 });
    const request2 = await silent.next((f) => f.type === 'request' && f.id !== request.id);
    await send(open.mcpUrl, 'POST', headers, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
    await silent.next((f) => f.type === 'cancel' && f.id === request2.id);
    const json = await second;
    assert.match(json.headers.get('content-type'), /^application\/json/);
    assert.equal(json.json.id, 3);
    assert.equal(json.json.result.isError, true);
  } finally {
    await silent.close();
  }
});

test('Claude Code 2.1.197 after the bridge restarted: its old Mcp-Session-Id gets 404 Session not found, it initializes again, and its cancel notice on the new session reaches the call', async () => {
  const silent = await linkComputer(open, { computerId: 6, onRequest: () => null });
  try {
    const headers = await handshake2025(open.mcpUrl, claudeHeaders('2.1.197'), claudeInfo('2.1.197'), { roots: {}, elicitation: {} });
    // an id of the right shape that this process did not sign: what a restarted bridge sees
    const stale = { ...headers, 'mcp-session-id': `${'ab'.repeat(16)}.${'cd'.repeat(16)}` };
    const call = { method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 6, code: 'sleep(60)', timeoutMs: 60000 } }, jsonrpc: '2.0', id: 3 };
    const refused = await send(open.mcpUrl, 'POST', stale, call);
    assert.equal(refused.status, 404);
    assert.deepEqual(refused.json, { jsonrpc: '2.0', id: 3, error: { code: SESSION_NOT_FOUND, message: SESSION_NOT_FOUND_MESSAGE } });
    assert.equal(silent.received.some((f) => f.type === 'request'), false); // nothing ran
    for (const body of [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } }, { jsonrpc: '2.0', method: 'notifications/initialized' }]) {
      assert.equal((await send(open.mcpUrl, 'POST', stale, body)).status, 404);
    }
    // initialize with the stale id still works and hands out a new one (the spec says to send none)
    const { 'mcp-session-id': _, 'mcp-protocol-version': __, ...fresh } = stale;
    const again = await handshake2025(open.mcpUrl, fresh, claudeInfo('2.1.197'), { roots: {}, elicitation: {} });
    const reinit = await send(open.mcpUrl, 'POST', stale, { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: claudeInfo('2.1.197') }, jsonrpc: '2.0', id: 0 });
    assert.equal(reinit.status, 200);
    assert.notEqual(reinit.headers.get('mcp-session-id'), stale['mcp-session-id']);
    // the retried call on the new session, cancelled by a notice from another connection
    const pending = send(open.mcpUrl, 'POST', again, call);
    const request = await silent.next((f) => f.type === 'request');
    assert.equal((await send(open.mcpUrl, 'POST', again, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } })).status, 202);
    assert.deepEqual(await silent.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    assert.equal((await pending).json, null);
    // an empty header is no session at all, and 2026-07-28 has no sessions: neither is refused
    assert.equal((await send(open.mcpUrl, 'POST', { ...headers, 'mcp-session-id': '' }, { method: 'tools/list', jsonrpc: '2.0', id: 4 })).status, 200);
    const modern = await send(open.mcpUrl, 'POST', claudeHeaders('2.1.330', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list', 'mcp-session-id': stale['mcp-session-id'] }), { method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } }, jsonrpc: '2.0', id: 5 });
    assert.equal(modern.status, 200);
  } finally {
    await silent.close();
  }
});

test('Claude Code 2.1.330 over HTTP: server/discover probe at 2026-07-28, then tools/list and tools/call with Mcp-Method / Mcp-Name', async () => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': claudeInfo('2.1.330'),
    'io.modelcontextprotocol/clientCapabilities': { roots: { listChanged: true }, elicitation: { form: {}, url: {} } },
  };
  const at = (extra) => claudeHeaders('2.1.330', { 'mcp-protocol-version': '2026-07-28', ...extra });
  const discover = await send(open.mcpUrl, 'POST', at({ 'mcp-method': 'server/discover' }), { jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: meta } });
  assert.equal(discover.status, 200); // a 400 here made it fall back to initialize (issue 9)
  assert.equal(discover.json.id, 'server-discover-probe-1');
  assert.ok(discover.json.result.supportedVersions.includes('2026-07-28'));
  const list = await send(open.mcpUrl, 'POST', at({ 'mcp-method': 'tools/list' }), { method: 'tools/list', params: { _meta: meta }, jsonrpc: '2.0', id: 0 });
  assert.equal(list.status, 200);
  assert.equal(list.json.result.resultType, 'complete');
  const call = await send(open.mcpUrl, 'POST', at({ 'mcp-method': 'tools/call', 'mcp-name': 'probe-computers' }), {
    method: 'tools/call',
    params: { name: 'probe-computers', arguments: {}, _meta: { ...meta, 'claudecode/toolUseId': 'toolu_31', progressToken: 1 } },
    jsonrpc: '2.0',
    id: 1,
  });
  assert.equal(call.status, 200);
  assert.equal(call.json.result.resultType, 'complete');
  assert.equal(call.json.result.structuredContent.computers[0].result, pongText(12, 'base-turtle'));
});

test('opencode 1.18.33 over HTTP: 2025-11-25 handshake, GET /mcp event stream opened, tools/list, tools/call', async () => {
  const base = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  const headers = await handshake2025(open.mcpUrl, base, { name: 'opencode', version: '1.18.33' }, { roots: {} });
  const stream = await openGetStream(open.mcpUrl, { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': headers['mcp-session-id'] });
  assert.deepEqual(stream, { status: 200, type: 'text/event-stream' });
  const list = await send(open.mcpUrl, 'POST', headers, { method: 'tools/list', jsonrpc: '2.0', id: 1 });
  assert.equal(list.status, 200);
  const call = await send(open.mcpUrl, 'POST', headers, { method: 'tools/call', params: { name: 'probe-computers', arguments: {} }, jsonrpc: '2.0', id: 2 });
  assert.equal(call.json.result.content[0].text, pongText(12, 'base-turtle')); // opencode gives the model the text
});

test('MCP Inspector CLI 0.15.0: resources/list, prompts/list and resources/templates/list, which the bridge does not declare, get -32601', async () => {
  const base = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  const headers = await handshake2025(open.mcpUrl, base, { name: 'inspector-cli', version: '0.5.1' }, {});
  for (const method of ['resources/list', 'prompts/list', 'resources/templates/list']) {
    const res = await send(open.mcpUrl, 'POST', headers, { method, jsonrpc: '2.0', id: 1 });
    assert.equal(res.status, 200);
    assert.equal(res.json.error.code, -32601, method);
  }
});

test('Claude Code 2.1.330 without the bearer header: 401, then its OAuth probes end in 404s whose message says to send the header', async () => {
  const headers = claudeHeaders('2.1.330', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
  const first = await send(locked.mcpUrl, 'POST', headers, { jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: {} });
  assert.equal(first.status, 401);
  assert.doesNotMatch(first.headers.get('www-authenticate'), /resource_metadata/);
  const origin = new URL(locked.mcpUrl).origin;
  // the order Claude Code 2.1.330 (and opencode 1.18.33) asked in; it shows the /register body to the user:
  // "Dynamic Client Registration rejected (HTTP 404): {...}"
  for (const [method, path] of [
    ['GET', '/.well-known/oauth-protected-resource/mcp'],
    ['GET', '/.well-known/oauth-protected-resource'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/openid-configuration'],
    ['POST', '/register'],
  ]) {
    assert.equal(isOAuthProbe(path), true, path);
    const res = await send(`${origin}${path}`, method, { 'content-type': 'application/json' }, method === 'POST' ? { client_name: 'Claude Code (computercraft)', redirect_uris: ['http://localhost:41234/callback'] } : undefined);
    assert.equal(res.status, 404, path);
    assert.equal(res.json.message, NO_OAUTH, path);
  }
  assert.match(NO_OAUTH, /Authorization: Bearer <token>/);
  assert.match(NO_OAUTH, /MCP_AUTH_TOKEN/);
  // other unknown paths keep the plain not-found message
  const other = await send(`${origin}/.well-known/security.txt`, 'GET', {}, undefined);
  assert.equal(other.status, 404);
  assert.match(other.json.message, /^No route for \/\.well-known\/security\.txt/);
  assert.equal(isOAuthProbe('/mcp'), false);
  // with the header it configured (claude mcp add ... --header "Authorization: Bearer <token>") the probe answers
  const ok = await send(locked.mcpUrl, 'POST', { ...headers, authorization: `Bearer ${TOKEN}` }, { jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } });
  assert.equal(ok.status, 200);
});
