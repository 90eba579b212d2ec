// The MCP endpoint over real HTTP against a real bridge on ephemeral ports; fake computers are
// real WebSocket clients.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { FakeComputer, linkComputer, rpc, session, startTestBridge, until } from '../helpers.js';
import { LUA_PROGRAM_PATH } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { LinkRegistry } from '../../dist/link/registry.js';
import { startLinkServer } from '../../dist/link/server.js';
import { createLogger } from '../../dist/log.js';
import { Dispatcher } from '../../dist/mcp/dispatch.js';
import { isLoopbackHost, originAllowed, startHttpServer } from '../../dist/surfaces/http.js';
import { bridgeRoutes } from '../../dist/surfaces/routes.js';
import { ToolRegistry } from '../../dist/tools/registry.js';
import { builtinSource } from '../../dist/tools/builtins.js';

const PACKAGE_VERSION = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

const bridge = await startTestBridge();
after(() => bridge.close());

const req = (id, method, params) => (params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });

function parse(text) {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** A request through node:http with exactly the headers given (plus Host unless `setHost: false`). */
function rawRequest(url, { method = 'POST', path, headers = {}, body } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, path: path ?? u.pathname, method, headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text, json: parse(text) }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A plain TCP client: what it wrote is up to the test; `response()` resolves once a full head arrived. */
function rawSocket(url) {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (c) => (data += c));
  socket.on('error', () => {}); // a reset after the answer is fine; the assertions look at `data`
  const closed = once(socket, 'close');
  return {
    socket,
    closed,
    get data() {
      return data;
    },
    /** Resolves with { status, head, body } once the head and the declared body have arrived. */
    response: () =>
      until(() => {
        const end = data.indexOf('\r\n\r\n');
        if (end === -1) return null;
        const head = data.slice(0, end);
        const length = /content-length: (\d+)/i.exec(head);
        const body = data.slice(end + 4);
        if (length && body.length < Number(length[1])) return null;
        return { status: Number(head.split(' ')[1]), head, body };
      }),
  };
}

/** A bridge wired like startBridge, but with the MCP listener's timeouts chosen by the test. */
async function startTimedBridge({ headersTimeoutMs, requestTimeoutMs, env = {}, config: override } = {}) {
  const config = override ?? loadConfig({ MCP_MAX_BODY_BYTES: '1024', ...env });
  const logs = [];
  const log = createLogger('debug', (l) => logs.push(l));
  const links = new LinkRegistry();
  const tools = new ToolRegistry(config);
  tools.setSource(builtinSource);
  const dispatcher = new Dispatcher({ links, tools, config, log, serverVersion: 'test' });
  const link = await startLinkServer(links, log, {
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: config.heartbeatMs,
    maxFrameBytes: config.maxFrameBytes,
    luaProgramPath: LUA_PROGRAM_PATH,
  });
  const { router } = bridgeRoutes({ dispatcher, log, maxBodyBytes: config.maxBodyBytes, computers: () => links.size, tools, links, config, version: 'test' });
  const mcp = await startHttpServer(router, log, {
    host: '127.0.0.1',
    port: 0,
    allowedOrigins: [],
    headersTimeoutMs,
    requestTimeoutMs,
  });
  return {
    mcpUrl: `http://127.0.0.1:${mcp.address.port}/mcp`,
    linkUrl: `ws://127.0.0.1:${link.address.port}`,
    logs,
    dispatcher,
    mcp,
    link,
    close: (graceMs = 1000) => Promise.all([mcp.close(graceMs), link.close()]),
  };
}

// ---------------------------------------------------------------- lifecycle and basic methods

test('initialize over HTTP: negotiated version, capabilities, serverInfo with the package version, instructions', async () => {
  for (const [asked, answered] of [
    ['2025-03-26', '2025-03-26'],
    ['2025-06-18', '2025-06-18'],
    ['2025-11-25', '2025-11-25'],
    ['2024-11-05', '2025-11-25'],
    ['banana', '2025-11-25'],
  ]) {
    const res = await rpc(bridge.mcpUrl, req(1, 'initialize', { protocolVersion: asked, capabilities: {}, clientInfo: { name: 't', version: '1' } }));
    assert.equal(res.status, 200, asked);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    assert.equal(res.json.id, 1);
    assert.equal(res.json.result.protocolVersion, answered);
    // list_changed comes on the GET /mcp stream (get-stream.test.js)
    assert.deepEqual(res.json.result.capabilities, { tools: { listChanged: true } });
    assert.equal(res.json.result.serverInfo.name, 'cc-mcp-bridge');
    assert.equal(res.json.result.serverInfo.version, PACKAGE_VERSION);
    assert.ok(res.json.result.instructions.length > 40);
  }
  // a protocolVersion is required (spec-conformance.test.js)
  const missing = await rpc(bridge.mcpUrl, req(0, 'initialize', { capabilities: {} }));
  assert.equal(missing.json.id, 0);
  assert.equal(missing.json.error.code, -32602);
});

test('notifications and client responses: 202 with an empty body, under every protocol header', async () => {
  const messages = [
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12345, reason: 'gone' } },
    { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
    { jsonrpc: '2.0', method: 'something/else', params: {} },
    { jsonrpc: '2.0', id: 0, result: {} },
    { jsonrpc: '2.0', id: 'srv-1', error: { code: -32601, message: 'no' } },
  ];
  for (const headers of [{}, { 'mcp-protocol-version': '2025-03-26' }, { 'mcp-protocol-version': '2025-06-18' }, { 'mcp-protocol-version': '2025-11-25' }]) {
    for (const message of messages) {
      const res = await rpc(bridge.mcpUrl, message, headers);
      assert.equal(res.status, 202, JSON.stringify([headers, message]));
      assert.equal(res.text, '');
    }
  }
});

test('ping -> {} and id 0 is answered as 0', async () => {
  const res = await rpc(bridge.mcpUrl, req(0, 'ping'), { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 0, result: {} });
  const str = await rpc(bridge.mcpUrl, req('0', 'ping'));
  assert.deepEqual(str.json, { jsonrpc: '2.0', id: '0', result: {} });
});

test('POST / is an alias of POST /mcp; a query string is ignored', async () => {
  const root = new URL('/', bridge.mcpUrl).href;
  assert.deepEqual((await rpc(root, req(0, 'ping'))).json, { jsonrpc: '2.0', id: 0, result: {} });
  assert.deepEqual((await rpc(`${bridge.mcpUrl}?session=1`, req(1, 'ping'))).json, { jsonrpc: '2.0', id: 1, result: {} });
});

test('bug: GET /mcp-computer.lua on the MCP port (a user who took the wrong port) said only "No route ...; MCP is at POST /mcp"; now where the program is served', async () => {
  const res = await fetch(new URL('/mcp-computer.lua', bridge.mcpUrl));
  assert.equal(res.status, 404);
  const body = await res.json();
  assert.equal(body.error, 'not found');
  assert.match(body.message, /^mcp-computer\.lua is served on the computer link port \(CC_LINK_PORT, 3001 by default\), not on this MCP port: wget http:\/\/<bridge-host>:<CC_LINK_PORT>\/mcp-computer\.lua mcp-computer\.lua/);
  // where it says: the link port serves it
  const program = await fetch(`${bridge.linkUrl.replace(/^ws/, 'http')}/mcp-computer.lua`);
  assert.equal(program.status, 200);
  assert.match(await program.text(), /^-- mcp-computer/);
  // any other unknown path keeps the plain message
  assert.match((await (await fetch(new URL('/nope.lua', bridge.mcpUrl))).json()).message, /^No route for \/nope\.lua; MCP is at POST \/mcp$/);
});

test('bug: a computer dialling the MCP port (ws://host:3000) got the GET /mcp answer (406, about text/event-stream) and the bridge logged nothing; now 400 naming the link port, and a warning', async () => {
  const { default: WebSocket } = await import('ws');
  const ws = new WebSocket(`${bridge.mcpUrl.replace(/^http/, 'ws').replace(/\/mcp$/, '')}/?mcp-computer-link`);
  const [, res] = await once(ws, 'unexpected-response');
  let text = '';
  for await (const chunk of res) text += chunk;
  ws.on('error', () => {}); // terminate() before the open reports "closed before the connection was established"
  ws.terminate();
  assert.equal(res.statusCode, 400);
  const body = JSON.parse(text);
  assert.equal(body.error, 'wrong port');
  assert.match(body.message, /^This is the MCP port of cc-mcp-bridge: computers link to the computer link port \(CC_LINK_PORT, 3001 by default/);
  assert.ok(bridge.logs.some((l) => / warn a WebSocket handshake from 127\.0\.0\.1 reached the MCP port: computers link to the computer link port/.test(l)), bridge.logs.slice(-3).join('\n'));
  // plain requests are served as before
  assert.deepEqual((await rpc(bridge.mcpUrl, req(9, 'ping'))).json, { jsonrpc: '2.0', id: 9, result: {} });
});

test('bug: a client that initialized left no trace in the bridge log at any LOG_LEVEL; now one info line names it and the revision (client-chosen text quoted)', async () => {
  const init = (clientInfo, protocolVersion = '2025-06-18') => rpc(bridge.mcpUrl, req('i', 'initialize', { protocolVersion, capabilities: {}, clientInfo }));
  await init({ name: 'opencode', version: '1.18.33' });
  assert.ok(bridge.logs.some((l) => / info MCP client "opencode" version "1\.18\.33" initialized \(protocol 2025-06-18\)$/.test(l)), bridge.logs.slice(-3).join('\n'));
  await init({ name: 'old\nclient' }, '2024-11-05');
  assert.ok(bridge.logs.some((l) => / info MCP client "old\\nclient" initialized \(protocol 2025-11-25; it asked for "2024-11-05"\)$/.test(l)), bridge.logs.slice(-3).join('\n'));
});

test('bug: a 2026-07-28 client (no initialize: Claude Code 2.1.330 sends one server/discover) left no trace in the log either; its server/discover logs the same line with the clientInfo of its _meta', async () => {
  const discover = (meta) => rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, ...meta } } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
  assert.equal((await discover({ 'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.330' } })).status, 200);
  assert.ok(bridge.logs.some((l) => / info MCP client "claude-code" version "2\.1\.330" discovered the server \(protocol 2026-07-28\)$/.test(l)), bridge.logs.slice(-3).join('\n'));
  await discover({});
  assert.ok(bridge.logs.some((l) => / info MCP client without a name discovered the server \(protocol 2026-07-28\)$/.test(l)), bridge.logs.slice(-3).join('\n'));
});

test('unknown methods -> -32601 (server/discover included), with id 0 kept in the error', async () => {
  for (const method of ['server/discover', 'resources/list', 'completion/complete']) {
    const res = await rpc(bridge.mcpUrl, req(0, method), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(res.status, 200);
    assert.equal(res.json.id, 0);
    assert.equal(res.json.error.code, -32601);
    assert.equal(res.json.result, undefined);
  }
});

test('tools/list over HTTP: name, title, description, inputSchema, outputSchema; a cursor -> -32602', async () => {
  const res = await rpc(bridge.mcpUrl, req(2, 'tools/list'));
  const probe = res.json.result.tools.find((t) => t.name === 'probe-computers');
  assert.ok(probe);
  assert.equal(typeof probe.title, 'string');
  assert.equal(typeof probe.description, 'string');
  assert.deepEqual(probe.inputSchema, { type: 'object', additionalProperties: false });
  assert.equal(probe.outputSchema.type, 'object');
  for (const tool of res.json.result.tools) {
    assert.deepEqual(Object.keys(tool).filter((k) => ['name', 'title', 'description', 'inputSchema'].includes(k)).length, 4);
  }
  const cursor = await rpc(bridge.mcpUrl, req(3, 'tools/list', { cursor: 'page-2' }));
  assert.equal(cursor.status, 200);
  assert.equal(cursor.json.id, 3);
  assert.equal(cursor.json.error.code, -32602);
});

test('tools/call: unknown tool -> -32602 "Unknown tool: <name>"; bad arguments -> isError naming the argument', async () => {
  const unknown = await rpc(bridge.mcpUrl, req(0, 'tools/call', { name: 'launch-missiles', arguments: {} }));
  assert.deepEqual(unknown.json, { jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'Unknown tool: launch-missiles' } });

  const bad = await rpc(bridge.mcpUrl, req(1, 'tools/call', { name: 'probe-computers', arguments: { everything: true } }));
  assert.equal(bad.status, 200);
  assert.equal(bad.json.result.isError, true);
  assert.match(bad.json.result.content[0].text, /"everything"/);

  const badExec = await rpc(bridge.mcpUrl, req(2, 'tools/call', { name: 'exec-lua', arguments: { code: 'return 1', timeoutMs: 'soon' } }));
  assert.equal(badExec.json.result.isError, true);
  assert.match(badExec.json.result.content[0].text, /timeoutMs/);
});

// ---------------------------------------------------------------- malformed bodies and batches

test('a body that is not JSON -> 400 -32700', async () => {
  for (const body of ['{"jsonrpc":"2.0",', '', 'hello', '{"a":1}}', '\u0000']) {
    const res = await rpc(bridge.mcpUrl, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(res.headers.get('content-type'), /^application\/json/);
    assert.equal(res.json.jsonrpc, '2.0');
    assert.equal(res.json.id, null);
    assert.equal(res.json.error.code, -32700);
  }
});

test('JSON that is not a JSON-RPC message -> 400 -32600', async () => {
  for (const body of ['{"hello":"world"}', '42', '"ping"', 'null', 'true', '{"jsonrpc":"2.0","id":0}', '{"jsonrpc":"1.0","id":0,"method":"ping"}']) {
    const res = await rpc(bridge.mcpUrl, body);
    assert.equal(res.status, 400, body);
    assert.equal(res.json.error.code, -32600, body);
  }
  const withId = await rpc(bridge.mcpUrl, '{"jsonrpc":"2.0","id":0,"method":7}');
  assert.equal(withId.json.id, 0);
});

test('batches are answered as arrays when MCP-Protocol-Version is absent or 2025-03-26', async () => {
  for (const headers of [{}, { 'mcp-protocol-version': '2025-03-26' }]) {
    const res = await rpc(
      bridge.mcpUrl,
      [req(0, 'ping'), { jsonrpc: '2.0', method: 'notifications/initialized' }, req('x', 'server/discover'), req(2, 'tools/list')],
      headers,
    );
    assert.equal(res.status, 200, JSON.stringify(headers));
    assert.ok(Array.isArray(res.json));
    assert.deepEqual(
      res.json.map((r) => r.id),
      [0, 'x', 2],
    );
    assert.deepEqual(res.json[0].result, {});
    assert.equal(res.json[1].error.code, -32601);
    assert.ok(Array.isArray(res.json[2].result.tools));
  }
});

test('a batch of only notifications and responses -> 202; an empty batch -> 400', async () => {
  const only = await rpc(bridge.mcpUrl, [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 0, result: {} }]);
  assert.equal(only.status, 202);
  assert.equal(only.text, '');
  const empty = await rpc(bridge.mcpUrl, []);
  assert.equal(empty.status, 400);
  assert.equal(empty.json.error.code, -32600);
});

test('batches under 2025-06-18 or 2025-11-25 -> 400 -32600', async () => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    const res = await rpc(bridge.mcpUrl, [req(0, 'ping')], { 'mcp-protocol-version': version });
    assert.equal(res.status, 400, version);
    assert.equal(res.json.jsonrpc, '2.0');
    assert.equal(res.json.error.code, -32600);
  }
});

test('an unsupported MCP-Protocol-Version -> 400 -32022 {supported, requested}, with the request id', async () => {
  const supported = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'];
  for (const [version, id] of [['2024-11-05', 0], ['2026-01-01', 'x-1'], ['latest', 7]]) {
    const res = await rpc(bridge.mcpUrl, req(id, 'ping'), { 'mcp-protocol-version': version });
    assert.equal(res.status, 400, version);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    assert.equal(res.json.jsonrpc, '2.0');
    assert.equal(res.json.id, id);
    assert.equal(res.json.error.code, -32022);
    assert.deepEqual(res.json.error.data, { supported, requested: version });
    assert.ok(res.json.error.message.includes(version));
    assert.ok(res.json.error.message.includes('2025-11-25'));
  }
  // no id to echo: a notification, a batch, a body that is not JSON-RPC
  for (const body of [{ jsonrpc: '2.0', method: 'notifications/initialized' }, [req(1, 'ping')], { hello: 1 }]) {
    const res = await rpc(bridge.mcpUrl, body, { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(res.status, 400);
    assert.equal(res.json.id, null);
    assert.equal(res.json.error.code, -32022);
  }
});

test('the Accept header never causes a rejection; only an event-stream-only Accept gets SSE', async () => {
  for (const accept of [undefined, 'text/event-stream', 'text/html', 'application/xml', '*/*', 'application/json, text/event-stream']) {
    const headers = { 'content-type': 'application/json' };
    if (accept) headers.accept = accept;
    const res = await rawRequest(bridge.mcpUrl, { headers, body: JSON.stringify(req(0, 'ping')) });
    assert.equal(res.status, 200, String(accept));
    if (accept === 'text/event-stream') {
      assert.equal(res.headers['content-type'], 'text/event-stream');
      assert.equal(res.text, 'event: message\ndata: {"jsonrpc":"2.0","id":0,"result":{}}\n\n');
    } else {
      assert.deepEqual(res.json, { jsonrpc: '2.0', id: 0, result: {} });
    }
  }
  // nor does a missing Content-Type (a present one that is not JSON is refused 415: content-type.test.js)
  const res = await rawRequest(bridge.mcpUrl, { body: JSON.stringify(req(1, 'ping')) });
  assert.equal(res.status, 200);
});

// ---------------------------------------------------------------- routing

test('DELETE and PUT on /mcp and / -> 405 with Allow: GET, POST; GET without a session -> 400 (the event stream belongs to one)', async () => {
  for (const path of ['/mcp', '/']) {
    for (const method of ['DELETE', 'PUT']) {
      const res = await rawRequest(bridge.mcpUrl, { method, path, headers: { accept: 'text/event-stream' } });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.allow, 'GET, POST');
      assert.ok(res.json, 'a JSON body');
    }
    const get = await rawRequest(bridge.mcpUrl, { method: 'GET', path, headers: { accept: 'text/event-stream' } });
    assert.equal(get.status, 400, path);
    assert.match(get.json.error.message, /Mcp-Session-Id/);
  }
});

test('unknown paths -> 404 with a JSON body', async () => {
  for (const [method, path] of [
    ['POST', '/sse'],
    ['GET', '/nope'],
    ['POST', '/mcp/extra'],
  ]) {
    const res = await rawRequest(bridge.mcpUrl, { method, path, headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 404, path);
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.equal(res.json.error, 'not found');
  }
});

test('GET /health -> {"ok":true,"computers":N,"link":{...}}, N tracking linked computers', async () => {
  const own = await startTestBridge();
  try {
    const full = async () => (await rawRequest(own.mcpUrl, { method: 'GET', path: '/health' })).json;
    // the link listener's state (a stdio bridge may be waiting for its port: stdio-link-wait.test.js)
    assert.deepEqual(await full(), { ok: true, computers: 0, link: { state: 'listening', address: new URL(own.linkUrl).host } });
    const health = async () => {
      const { link, ...rest } = await full();
      assert.equal(link.state, 'listening');
      return rest;
    };
    const a = await linkComputer(own, { computerId: 1 });
    assert.deepEqual(await health(), { ok: true, computers: 1 });
    const b = await linkComputer(own, { computerId: 2, computerLabel: 'b' });
    assert.deepEqual(await health(), { ok: true, computers: 2 });
    await a.close();
    await until(async () => (await health()).computers === 1);
    await b.close();
    await until(async () => (await health()).computers === 0);

    const head = await rawRequest(own.mcpUrl, { method: 'HEAD', path: '/health' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const post = await rawRequest(own.mcpUrl, { method: 'POST', path: '/health', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  } finally {
    await own.close();
  }
});

// ---------------------------------------------------------------- DNS-rebinding protection

test('Origin: missing, loopback on any port (http and https) and listed ones are allowed; foreign -> 403', async () => {
  const own = await startTestBridge({ MCP_ALLOWED_ORIGINS: 'https://tools.example.com, http://lan.example:8080' });
  try {
    const send = (origin) =>
      rawRequest(own.mcpUrl, { headers: origin === undefined ? {} : { origin }, body: JSON.stringify(req(0, 'ping')) });
    for (const origin of [
      undefined,
      'http://localhost',
      'http://localhost:6274',
      'https://localhost:443',
      'http://127.0.0.1',
      'https://127.0.0.1:9999',
      'http://[::1]',
      'https://[::1]:3000',
      'http://LOCALHOST:1',
      'https://tools.example.com',
      'https://tools.example.com/',
      'http://lan.example:8080',
    ]) {
      const res = await send(origin);
      assert.equal(res.status, 200, `Origin ${origin} should be allowed`);
    }
    for (const origin of [
      'http://evil.example',
      'https://localhost.evil.example',
      'http://127.0.0.1.evil.example',
      'http://lan.example:8081',
      'http://tools.example.com',
      'null',
      'file://',
      'chrome-extension://abcdef',
      'ws://localhost:1',
      '',
    ]) {
      const res = await send(origin);
      assert.equal(res.status, 403, `Origin ${JSON.stringify(origin)} should be refused`);
      assert.match(res.headers['content-type'], /^application\/json/);
      assert.equal(res.json.error.code, -32000);
    }
    const health = await rawRequest(own.mcpUrl, { method: 'GET', path: '/health', headers: { origin: 'http://evil.example' } });
    assert.equal(health.status, 403);
    assert.ok(own.logs.some((l) => l.includes('rejected request from Origin "http://evil.example"')));
  } finally {
    await own.close();
  }
});

test('bug: the 403 for a foreign Origin or a non-loopback Host on /mcp had a REST body; now a JSON-RPC error like every other /mcp error (REST routes keep theirs)', async () => {
  const body = JSON.stringify(req(5, 'ping'));
  const evil = { origin: 'http://evil.example' };
  const rebound = { host: 'evil.example' };
  for (const path of ['/mcp', '/']) {
    for (const guard of [evil, rebound]) {
      // no MCP-Protocol-Version: 2025-03-26, whose unreadable id is null
      const old = await rawRequest(bridge.mcpUrl, { path, headers: { ...guard, 'content-type': 'application/json' }, body });
      assert.equal(old.status, 403);
      assert.match(old.headers['content-type'], /^application\/json/);
      assert.deepEqual(Object.keys(old.json).sort(), ['error', 'id', 'jsonrpc']);
      assert.equal(old.json.jsonrpc, '2.0');
      assert.equal(old.json.id, null);
      assert.equal(old.json.error.code, -32000);
      assert.match(old.json.error.message, guard === evil ? /^Forbidden: Origin "http:\/\/evil\.example" is not allowed; add it to MCP_ALLOWED_ORIGINS$/ : /^Forbidden: Host header must name a loopback address/);
      // 2025-11-25 leaves the id out, as its other errors before the body is read do (the 401, the 415)
      const now = await rawRequest(bridge.mcpUrl, { path, headers: { ...guard, 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' }, body });
      assert.equal(now.status, 403);
      assert.equal('id' in now.json, false);
      assert.equal(now.json.error.code, -32000);
    }
  }
  // a GET stream request gets the same JSON-RPC body
  const get = await rawRequest(bridge.mcpUrl, { method: 'GET', headers: { ...evil, accept: 'text/event-stream' } });
  assert.equal(get.status, 403);
  assert.equal(get.json.error.code, -32000);
  // REST routes and /health keep the REST shape
  for (const path of ['/health', '/tools/probe-computers']) {
    const rest = await rawRequest(bridge.mcpUrl, { method: path === '/health' ? 'GET' : 'POST', path, headers: evil });
    assert.equal(rest.status, 403);
    assert.equal(rest.json.error, 'forbidden');
    assert.match(rest.json.message, /^Origin "http:\/\/evil\.example" is not allowed/);
  }
});

test('Host: a non-loopback name -> 403 while MCP_HOST is loopback', async () => {
  const port = new URL(bridge.mcpUrl).port;
  const send = (host) => rawRequest(bridge.mcpUrl, { headers: { host }, body: JSON.stringify(req(0, 'ping')) });
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, '127.0.0.1', `[::1]:${port}`, 'LOCALHOST', `127.1.2.3:${port}`]) {
    assert.equal((await send(host)).status, 200, `Host ${host}`);
  }
  for (const host of [`evil.example:${port}`, 'evil.example', `localhost.evil.example:${port}`, '127.0.0.1.nip.io', '10.0.0.5', `[::2]:${port}`]) {
    const res = await send(host);
    assert.equal(res.status, 403, `Host ${host}`);
    assert.equal(res.json.error.code, -32000);
  }
  const health = await rawRequest(bridge.mcpUrl, { method: 'GET', path: '/health', headers: { host: 'attacker.example' } });
  assert.equal(health.status, 403);
});

test('Host: a request without any Host header (HTTP/1.0) -> 403 while MCP_HOST is loopback', async () => {
  const client = rawSocket(bridge.mcpUrl);
  const body = JSON.stringify(req(0, 'ping'));
  client.socket.write(`POST /mcp HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  const res = await client.response();
  assert.equal(res.status, 403);
  assert.equal(JSON.parse(res.body).error.code, -32000);
  client.socket.destroy();
});

test('Host is not checked while MCP_HOST is not a loopback address', async () => {
  const own = await startTestBridge({ MCP_HOST: '0.0.0.0' });
  try {
    const res = await rawRequest(own.mcpUrl, { headers: { host: 'bridge.lan:3000' }, body: JSON.stringify(req(0, 'ping')) });
    assert.equal(res.status, 200);
    // the Origin check still applies
    const foreign = await rawRequest(own.mcpUrl, { headers: { origin: 'http://evil.example' }, body: JSON.stringify(req(0, 'ping')) });
    assert.equal(foreign.status, 403);
  } finally {
    await own.close();
  }
});

test('isLoopbackHost and originAllowed', () => {
  for (const host of ['localhost', '127.0.0.1', '127.255.0.1', '[::1]', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['0.0.0.0', '::', '10.0.0.1', 'localhost.example', '', '127.0.0.1.example']) assert.equal(isLoopbackHost(host), false, host);
  assert.equal(originAllowed(undefined, []), true);
  assert.equal(originAllowed('http://localhost:1', []), true);
  assert.equal(originAllowed('https://a.example', ['https://a.example']), true);
  assert.equal(originAllowed('https://A.example:443', ['https://a.example']), true);
  assert.equal(originAllowed('https://a.example', []), false);
  assert.equal(originAllowed('not a url', ['not a url']), false);
  assert.equal(originAllowed('ftp://localhost', []), false);
});

// ---------------------------------------------------------------- limits and timeouts

test('413 when Content-Length exceeds MCP_MAX_BODY_BYTES, answered before any body byte is sent', async () => {
  const own = await startTimedBridge();
  try {
    const client = rawSocket(own.mcpUrl);
    client.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n');
    const res = await client.response();
    assert.equal(res.status, 413);
    assert.match(res.head, /content-type: application\/json/i);
    assert.match(res.head, /connection: close/i);
    assert.equal(JSON.parse(res.body).error.message, 'Request body exceeds 1024 bytes');
    // the server does not wait for the megabyte it was promised: it hangs up
    await client.closed;
  } finally {
    await own.close();
  }
});

test('413 when a chunked body grows past MCP_MAX_BODY_BYTES, answered while the client is still sending', async () => {
  const own = await startTimedBridge();
  try {
    const client = rawSocket(own.mcpUrl);
    client.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = (text) => client.socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
    chunk('[' + ' '.repeat(700));
    chunk(' '.repeat(700));
    // no terminating chunk: the request is unfinished, yet it is answered
    const res = await client.response();
    assert.equal(res.status, 413);
    assert.equal(JSON.parse(res.body).error.code, -32600);
    await client.closed;
    assert.ok(!own.logs.some((l) => / error /.test(l)), own.logs.join('\n'));
  } finally {
    await own.close();
  }
});

test('a body of exactly MCP_MAX_BODY_BYTES is accepted', async () => {
  const own = await startTimedBridge();
  try {
    const text = JSON.stringify(req(0, 'ping'));
    const body = text + ' '.repeat(1024 - text.length);
    assert.equal(Buffer.byteLength(body), 1024);
    assert.equal((await rpc(own.mcpUrl, body)).status, 200);
    assert.equal((await rpc(own.mcpUrl, body + ' ')).status, 413);
  } finally {
    await own.close();
  }
});

test('MCP_MAX_BODY_BYTES at its edge: a declared length one byte over is refused before any body byte; a chunked body of exactly the limit is read, one byte more is 413', async () => {
  const own = await startTimedBridge();
  try {
    const declared = rawSocket(own.mcpUrl);
    declared.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1025\r\n\r\n');
    assert.equal((await declared.response()).status, 413);
    await declared.closed;
    const text = JSON.stringify(req(0, 'ping'));
    const chunked = async (body) => {
      const client = rawSocket(own.mcpUrl);
      client.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n');
      for (const piece of [body.slice(0, 500), body.slice(500)]) client.socket.write(`${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`);
      client.socket.write('0\r\n\r\n');
      const res = await client.response();
      client.socket.destroy();
      return res.status;
    };
    assert.equal(await chunked(text + ' '.repeat(1024 - text.length)), 200);
    assert.equal(await chunked(text + ' '.repeat(1025 - text.length)), 413);
  } finally {
    await own.close();
  }
});

// Node checks these timeouts every connectionsCheckingInterval (30 s unless the server sets it): the
// generous test timeout only tells "cut off after about the configured time" from "eventually".
test('the header timeout cuts off a client that never finishes its headers', { timeout: 15_000 }, async () => {
  const own = await startTimedBridge({ headersTimeoutMs: 100, requestTimeoutMs: 200 });
  try {
    const client = rawSocket(own.mcpUrl);
    client.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl');
    await client.closed;
    assert.match(client.data, /^HTTP\/1\.1 408 /);
  } finally {
    await own.close();
  }
});

test('the request timeout cuts off a client that never finishes its body, quietly', { timeout: 15_000 }, async () => {
  const own = await startTimedBridge({ headersTimeoutMs: 100, requestTimeoutMs: 200 });
  try {
    const client = rawSocket(own.mcpUrl);
    client.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"');
    await client.closed;
    assert.doesNotMatch(client.data, /^HTTP\/1\.1 2/);
    await until(() => own.logs.some((l) => l.includes('MCP request body not received')));
    assert.ok(!own.logs.some((l) => / error /.test(l)), own.logs.join('\n'));
  } finally {
    await own.close();
  }
});

test('a header timeout longer than the request timeout is clamped, not a crash', { timeout: 15_000 }, async () => {
  const own = await startTimedBridge({ headersTimeoutMs: 60_000, requestTimeoutMs: 150 });
  try {
    assert.deepEqual((await rpc(own.mcpUrl, req(0, 'ping'))).json, { jsonrpc: '2.0', id: 0, result: {} });
    const client = rawSocket(own.mcpUrl);
    client.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await client.closed;
    assert.match(client.data, /^HTTP\/1\.1 408 /);
  } finally {
    await own.close();
  }
});

test('regression: a tools/call that answers after requestTimeoutMs is not cut off', async () => {
  const requestTimeoutMs = 200;
  const own = await startTimedBridge({ headersTimeoutMs: 100, requestTimeoutMs });
  try {
    // the computer answers well after the request timeout (a delay, not an assertion on time)
    const computer = await linkComputer(own, {
      computerId: 5,
      onRequest: () =>
        new Promise((resolve) =>
          setTimeout(() => resolve({ ok: true, result: { output: 'slow\n', returns: [], truncated: false } }), requestTimeoutMs * 5),
        ),
    });
    const res = await rpc(own.mcpUrl, req(0, 'tools/call', { name: 'exec-lua', arguments: { computerId: 5, code: 'sleep(1)' } }));
    assert.equal(res.status, 200);
    assert.equal(res.json.id, 0);
    assert.equal(res.json.result.isError, undefined, JSON.stringify(res.json));
    assert.equal(res.json.result.structuredContent.output, 'slow\n');
    await computer.close();
  } finally {
    await own.close();
  }
});

// ---------------------------------------------------------------- cancellation, failures, shutdown

test('notifications/cancelled for an in-flight exec-lua: the computer gets a cancel for its request id, the call answers isError', async () => {
  const own = await startTestBridge();
  try {
    const computer = await linkComputer(own, { computerId: 3, computerLabel: 'miner', onRequest: () => null });
    const s = await session(own.mcpUrl);
    const call = rpc(own.mcpUrl, req(0, 'tools/call', { name: 'exec-lua', arguments: { computer: 'miner', code: 'while true do sleep(1) end', timeoutMs: 300000 } }), s);
    const request = await computer.next((f) => f.type === 'request' && f.method === 'exec-lua');
    assert.equal(own.dispatcher.activeCalls, 1);

    // a cancel for another id (the string "0" is not the number 0) leaves the call alone
    const other = await rpc(own.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: '0' } }, s);
    assert.equal(other.status, 202);
    assert.equal(own.dispatcher.activeCalls, 1);

    const cancel = await rpc(own.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, reason: 'user pressed Esc' } }, s);
    assert.equal(cancel.status, 202);
    assert.equal(cancel.text, '');
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });

    const res = await call;
    assert.equal(res.status, 200);
    assert.equal(res.json.id, 0);
    assert.equal(res.json.result.isError, true);
    assert.match(res.json.result.content[0].text, /cancel/);
    assert.equal(own.dispatcher.activeCalls, 0);
    assert.equal(computer.received.filter((f) => f.type === 'cancel').length, 1);
    assert.ok(own.logs.some((l) => l.includes('client cancelled request 0: "user pressed Esc"')));

    // a string id and no reason work the same way
    const second = rpc(own.mcpUrl, req('run-2', 'tools/call', { name: 'exec-lua', arguments: { computerId: 3, code: 'sleep(60)', timeoutMs: 300000 } }), s);
    const request2 = await computer.next((f) => f.type === 'request' && f.id !== request.id);
    assert.equal((await rpc(own.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'run-2' } }, s)).status, 202);
    assert.deepEqual(await computer.next((f) => f.type === 'cancel' && f.id === request2.id), { type: 'cancel', id: request2.id });
    const res2 = await second;
    assert.equal(res2.json.id, 'run-2');
    assert.equal(res2.json.result.isError, true);
    assert.ok(own.logs.some((l) => l.endsWith('client cancelled request "run-2"')));
    await computer.close();
  } finally {
    await own.close();
  }
});

test('an unexpected failure outside any tool -> -32603 with its id, and the server keeps serving', async () => {
  const config = loadConfig({});
  let armed = false; // the tool registry reads the config once at start; explode only after that
  const broken = {
    ...config,
    get execLua() {
      if (armed) throw new TypeError('config exploded');
      return true;
    },
  };
  const own = await startTimedBridge({ config: broken });
  armed = true;
  try {
    const res = await rpc(own.mcpUrl, req(1, 'initialize', { protocolVersion: '2025-11-25' }));
    assert.equal(res.status, 200);
    assert.equal(res.json.id, 1);
    assert.equal(res.json.error.code, -32603);
    assert.doesNotMatch(res.text, /exploded/, 'no internals in the answer');
    assert.ok(own.logs.some((l) => / error initialize failed: TypeError: config exploded/.test(l)));
    assert.deepEqual((await rpc(own.mcpUrl, req(2, 'ping'))).json, { jsonrpc: '2.0', id: 2, result: {} });
  } finally {
    await own.close();
  }
});

test('closing answers an in-flight call (its link ends) and idle keep-alive connections do not hold it open', async () => {
  const own = await startTestBridge({ CC_PROBE_TIMEOUT_MS: '3600000' });
  const computer = await linkComputer(own, { computerId: 9, computerLabel: 'quiet', onRequest: () => null });
  await rpc(own.mcpUrl, req(1, 'ping')); // leaves an idle keep-alive connection behind
  const call = rpc(own.mcpUrl, req(2, 'tools/call', { name: 'probe-computers' }));
  await computer.next((f) => f.type === 'request');
  const closed = own.close();
  const res = await call;
  assert.equal(res.status, 200);
  assert.equal(res.json.result.content[0].text, 'disconnected from 9 (Label: quiet)');
  assert.equal((await computer.closed).code, 1001);
  await closed;
});

test('close after an MCP client aborted a slow call: the connection left without a request is closed at once, not after the grace period', async () => {
  const own = await startTestBridge({ CC_PROBE_TIMEOUT_MS: '3600000' });
  const computer = await linkComputer(own, { computerId: 5, onRequest: () => null });
  // fetch (undici) answers an abort by dropping that socket and opening a fresh one that sends nothing
  const aborter = new AbortController();
  const call = fetch(own.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(req(1, 'tools/call', { name: 'probe-computers' })),
    signal: aborter.signal,
  }).then(() => 'answered', (err) => err.name);
  await computer.next((f) => f.type === 'request');
  aborter.abort();
  assert.equal(await call, 'AbortError');
  await computer.next((f) => f.type === 'cancel');
  // a plain keep-alive client that connected and has not sent a request (yet)
  const silent = net.connect(new URL(own.mcpUrl).port, '127.0.0.1');
  silent.on('error', () => {});
  await once(silent, 'connect');
  const silentClosed = once(silent, 'close').then(() => 'closed');
  // a grace period of a minute: close() resolving within half of it shows nothing waited for it
  // (when something does, the grace still ends the test process)
  const closed = own.close(60_000).then(() => 'closed');
  let guard;
  const stuck = new Promise((resolve) => (guard = setTimeout(resolve, 30_000, 'still open'))); // hang guard, not a timing assertion
  try {
    assert.equal(await Promise.race([silentClosed, stuck]), 'closed');
    assert.equal(await Promise.race([closed, stuck]), 'closed');
  } finally {
    clearTimeout(guard);
  }
  await computer.closed;
});

test('close(graceMs) cuts off a call that is still running after the grace period', async () => {
  const own = await startTimedBridge({ env: { CC_PROBE_TIMEOUT_MS: '3600000' } });
  const computer = new FakeComputer(own.linkUrl, { computerId: 4, onRequest: () => null });
  await computer.link();
  const call = rpc(own.mcpUrl, req(0, 'tools/call', { name: 'probe-computers' })).then(
    () => 'answered',
    () => 'cut off',
  );
  await computer.next((f) => f.type === 'request');
  // only the MCP listener closes: the link stays up, so the probe would wait an hour
  await own.mcp.close(50);
  assert.equal(await call, 'cut off');
  await own.link.close();
  await computer.closed;
});

test('Host: a name that merely ends in a loopback address, or one with two ports, -> 403 (found by mutation testing: the 127/8 match unanchored at its start, or the port cut at the first colon, passed every test)', async () => {
  const port = new URL(bridge.mcpUrl).port;
  const send = (host) => rawRequest(bridge.mcpUrl, { headers: { host }, body: JSON.stringify(req(0, 'ping')) });
  for (const host of [`a.127.0.0.1:${port}`, `evil127.0.0.1:${port}`, 'evil-127.0.0.1', `127.0.0.1:1:${port}`]) {
    const res = await send(host);
    assert.equal(res.status, 403, `Host ${host}`);
    assert.match(res.json.error.message, /^Forbidden: Host header must name a loopback address/);
  }
  assert.equal((await send(`127.0.0.1:${port}`)).status, 200);
  for (const host of ['a.127.0.0.1', 'x127.0.0.1']) assert.equal(isLoopbackHost(host), false, host);
});
