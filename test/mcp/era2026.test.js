// Protocol 2026-07-28 beside the 2025 revisions on the one endpoint, over real HTTP: server/discover,
// the per-request _meta, the request headers checked against the body (-32020), unsupported versions
// (-32022), unknown methods (404), result fields, the fall-back paths of dual-era and legacy clients,
// and SSE-only Accept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { linkComputer, rpc, startTestBridge, until, withBridge } from '../helpers.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

const MODERN = '2026-07-28';
const SUPPORTED = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'];
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** A conforming 2026-07-28 request: body with _meta, headers mirroring it. */
function modern(id, method, params = {}, extraHeaders = {}) {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...META, ...params._meta } } };
  const headers = { 'mcp-protocol-version': MODERN, 'mcp-method': method };
  if (typeof params.name === 'string') headers['mcp-name'] = params.name;
  return { body, headers: { ...headers, ...extraHeaders } };
}

async function post(url, { body, headers }) {
  for (const [k, v] of Object.entries(headers)) if (v === undefined) delete headers[k];
  return rpc(url, body, headers);
}

let bridge;
before(async () => {
  bridge = await startTestBridge();
});
after(() => bridge.close());

// ---------------------------------------------------------------- discovery and results

test('server/discover: every served revision, tools capability, identity in _meta, instructions, caching hints', async () => {
  const res = await post(bridge.mcpUrl, modern('d-1', 'server/discover'));
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  assert.equal(res.json.id, 'd-1');
  const { result } = res.json;
  assert.equal(result.resultType, 'complete');
  assert.deepEqual(result.supportedVersions, SUPPORTED);
  // listChanged: subscriptions/listen with toolsListChanged is served (test/mcp/listen.test.js)
  assert.deepEqual(result.capabilities, { tools: { listChanged: true } });
  assert.deepEqual(result._meta['io.modelcontextprotocol/serverInfo'], { name: 'cc-mcp-bridge', title: 'ComputerCraft MCP bridge', version: result._meta['io.modelcontextprotocol/serverInfo'].version });
  assert.match(result._meta['io.modelcontextprotocol/serverInfo'].version, /^\d+\.\d+\.\d+/);
  assert.match(result.instructions, /probe-computers/);
  assert.equal(result.ttlMs, 0);
  assert.equal(result.cacheScope, 'public');
});

test('tools/list in 2026-07-28: sorted by name, resultType, ttlMs and cacheScope; the 2025 answer is unchanged', async () => {
  const res = await post(bridge.mcpUrl, modern(2, 'tools/list'));
  assert.equal(res.status, 200);
  const { result } = res.json;
  const names = result.tools.map((t) => t.name);
  assert.deepEqual(names, [...names].sort());
  assert.deepEqual(names, BUILTIN_TOOLS.map((t) => t.name).sort());
  assert.equal(result.resultType, 'complete');
  assert.equal(result.ttlMs, 0);
  assert.equal(result.cacheScope, 'public');
  assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'cc-mcp-bridge');

  const legacy = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' });
  assert.deepEqual(Object.keys(legacy.json.result), ['tools']);
  assert.deepEqual(legacy.json.result.tools.map((t) => t.name), BUILTIN_TOOLS.map((t) => t.name));
  // the same tool definitions in both eras
  const byName = (list) => Object.fromEntries(list.map((t) => [t.name, t]));
  assert.deepEqual(byName(result.tools), byName(legacy.json.result.tools));
});

test('tools/call in 2026-07-28 reaches the computer and is marked complete; tool failures keep their 2025 shape', async () => {
  const computer = await linkComputer(bridge, { computerId: 7, computerLabel: 'alpha' });
  try {
    const probe = await post(bridge.mcpUrl, modern(4, 'tools/call', { name: 'probe-computers', arguments: {} }));
    assert.equal(probe.status, 200);
    assert.equal(probe.json.result.resultType, 'complete');
    assert.match(probe.json.result.content[0].text, /pong from 7/);
    assert.equal(probe.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'cc-mcp-bridge');

    const unknown = await post(bridge.mcpUrl, modern(5, 'tools/call', { name: 'no-such-tool', arguments: {} }));
    assert.equal(unknown.status, 200);
    assert.equal(unknown.json.id, 5);
    assert.equal(unknown.json.error.code, -32602);
  } finally {
    await computer.close();
  }
});

test('MCP_LIST_TTL_MS sets ttlMs; with MCP_AUTH_TOKEN the cacheScope is private', () =>
  withBridge({ MCP_LIST_TTL_MS: '60000', MCP_AUTH_TOKEN: 'era-2026-test-token-0123456789' }, async (b) => {
    for (const method of ['server/discover', 'tools/list']) {
      const res = await post(b.mcpUrl, modern(1, method, {}, { authorization: 'Bearer era-2026-test-token-0123456789' }));
      assert.equal(res.status, 200, method);
      assert.equal(res.json.result.ttlMs, 60000);
      assert.equal(res.json.result.cacheScope, 'private');
    }
  }));

// ---------------------------------------------------------------- errors and statuses

test('unsupported protocol version in the header -> 400 -32022 {supported, requested} with the request id', async () => {
  for (const version of ['2027-01-01', '2024-11-05', 'draft']) {
    const req = modern('u-1', 'server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': version } }, { 'mcp-protocol-version': version });
    const res = await post(bridge.mcpUrl, req);
    assert.equal(res.status, 400, version);
    assert.equal(res.json.id, 'u-1');
    assert.equal(res.json.error.code, -32022);
    assert.deepEqual(res.json.error.data, { supported: SUPPORTED, requested: version });
  }
});

test('header mismatches -> 400 -32020 with the request id', async () => {
  const cases = [
    ['no Mcp-Method', modern(10, 'tools/list', {}, { 'mcp-method': undefined }), /Mcp-Method header is required/],
    ['other Mcp-Method', modern(11, 'tools/list', {}, { 'mcp-method': 'tools/call' }), /Mcp-Method header value "tools\/call" does not match body method "tools\/list"/],
    ['Mcp-Method case differs', modern(12, 'tools/list', {}, { 'mcp-method': 'Tools/List' }), /does not match/],
    ['no Mcp-Name on tools/call', modern(13, 'tools/call', { name: 'probe-computers' }, { 'mcp-name': undefined }), /Mcp-Name header is required for tools\/call/],
    ['other Mcp-Name', modern(14, 'tools/call', { name: 'probe-computers' }, { 'mcp-name': 'exec-lua' }), /Mcp-Name header value "exec-lua" does not match body params.name "probe-computers"/],
    ['Mcp-Name but no name in the body', modern(15, 'tools/call', {}, { 'mcp-name': 'exec-lua' }), /\(absent\)/],
    ['broken base64 Mcp-Name', modern(16, 'tools/call', { name: 'probe-computers' }, { 'mcp-name': '=?base64?!!!?=' }), /malformed/],
    ['base64 of bytes that are not UTF-8', modern(17, 'tools/call', { name: 'x' }, { 'mcp-name': '=?base64?/w==?=' }), /malformed/],
    ['version header differs from _meta', modern(18, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } }), /MCP-Protocol-Version header value "2026-07-28" does not match params._meta protocol version "2025-11-25"/],
    ['_meta declares 2026-07-28 under a 2025 header', modern(19, 'tools/list', {}, { 'mcp-protocol-version': '2025-11-25' }), /does not match/],
    ['_meta declares a version, no version header', modern(20, 'tools/list', {}, { 'mcp-protocol-version': undefined }), /MCP-Protocol-Version header is required/],
    ['resources/read without Mcp-Name', modern(21, 'resources/read', { uri: 'file:///x' }), /Mcp-Name header is required for resources\/read/],
  ];
  for (const [label, req, message] of cases) {
    const res = await post(bridge.mcpUrl, req);
    assert.equal(res.status, 400, label);
    assert.equal(res.json.id, req.body.id, label);
    assert.equal(res.json.error.code, -32020, label);
    assert.match(res.json.error.message, /^Header mismatch: /, label);
    assert.match(res.json.error.message, message, label);
  }
});

test('a header value with bytes outside visible ASCII -> 400 -32020', async () => {
  const body = JSON.stringify(modern(30, 'tools/call', { name: 'probe-computers', arguments: {} }).body);
  for (const [name, value] of [['mcp-name', 'probe-computers\u00e9'], ['mcp-method', 'tools/call\u00e9']]) {
    const headers = { 'content-type': 'application/json', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'probe-computers', [name]: value };
    const res = await new Promise((resolve, reject) => {
      const u = new URL(bridge.mcpUrl);
      const r = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers, agent: false }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (c) => (text += c));
        response.on('end', () => resolve({ status: response.statusCode, json: JSON.parse(text) }));
      });
      r.on('error', reject);
      r.end(body);
    });
    assert.equal(res.status, 400, name);
    assert.equal(res.json.error.code, -32020, name);
    assert.match(res.json.error.message, /invalid characters/, name);
  }
});

test('Mcp-Name in the =?base64?...?= form is decoded before it is compared', async () => {
  const encoded = `=?base64?${Buffer.from('probe-computers').toString('base64')}?=`;
  const res = await post(bridge.mcpUrl, modern(31, 'tools/call', { name: 'probe-computers', arguments: {} }, { 'mcp-name': encoded }));
  assert.equal(res.status, 200);
  assert.equal(res.json.result.resultType, 'complete');
  // a name outside the header-safe set: the client must encode it, and it is compared decoded
  const odd = 'sé ';
  const wrong = await post(bridge.mcpUrl, modern(32, 'tools/call', { name: odd, arguments: {} }, { 'mcp-name': `=?base64?${Buffer.from(odd).toString('base64')}?=` }));
  assert.equal(wrong.status, 200);
  assert.equal(wrong.json.error.code, -32602); // headers fit; the tool simply does not exist
});

test('missing per-request _meta fields -> 400 -32602', async () => {
  const noMeta = { body: { jsonrpc: '2.0', id: 40, method: 'tools/list' }, headers: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' } };
  const noCaps = modern(41, 'server/discover', { _meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } });
  const noVersion = modern(42, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': undefined } });
  const metaNotObject = { body: { jsonrpc: '2.0', id: 43, method: 'tools/list', params: { _meta: 5 } }, headers: noMeta.headers };
  for (const [req, message] of [
    [noMeta, /params with _meta are required/],
    [noCaps, /clientCapabilities"\] must be an object/],
    [noVersion, /protocolVersion"\] must be a string/],
    [metaNotObject, /params._meta is required/],
  ]) {
    const res = await post(bridge.mcpUrl, req);
    assert.equal(res.status, 400, JSON.stringify(req.body));
    assert.equal(res.json.id, req.body.id);
    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, message);
  }
});

test('unknown methods in 2026-07-28 -> 404 -32601 (initialize and ping included); in 2025 still 200 -32601', async () => {
  for (const method of ['initialize', 'ping', 'resources/list', 'prompts/list', 'resources/subscribe', 'logging/setLevel']) {
    const res = await post(bridge.mcpUrl, modern(50, method));
    assert.equal(res.status, 404, method);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    assert.equal(res.json.id, 50);
    assert.equal(res.json.error.code, -32601);
  }
  const legacy = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 51, method: 'resources/list' }, { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(legacy.status, 200);
  assert.equal(legacy.json.error.code, -32601);
});

test('2026-07-28: batches and invalid messages -> 400 -32600, notifications 202, bodies past MCP_MAX_JSON_DEPTH 400', async () => {
  const headers = { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' };
  const batch = await rpc(bridge.mcpUrl, [modern(60, 'tools/list').body], headers);
  assert.equal(batch.status, 400);
  assert.equal(batch.json.error.code, -32600);
  // says why (a batch), not only that the body is no single message
  assert.equal(batch.json.error.message, 'Invalid Request: JSON-RPC batches are not part of protocol 2026-07-28');
  const invalid = await rpc(bridge.mcpUrl, { jsonrpc: '1.0', id: 61, method: 'tools/list' }, headers);
  assert.equal(invalid.status, 400);
  assert.equal(invalid.json.id, 61);
  assert.equal(invalid.json.error.code, -32600);
  const note = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, { 'mcp-protocol-version': MODERN });
  assert.equal(note.status, 202);
  assert.equal(note.text, '');
  let deep = {};
  for (let i = 0; i < 80; i++) deep = { a: deep };
  const tooDeep = await post(bridge.mcpUrl, modern(62, 'tools/call', { name: 'probe-computers', arguments: deep }));
  assert.equal(tooDeep.status, 400);
  assert.equal(tooDeep.json.id, 62);
  assert.match(tooDeep.json.error.message, /MCP_MAX_JSON_DEPTH/);
});

// ---------------------------------------------------------------- eras side by side

test('2025 clients keep their answers: initialize offering 2026-07-28 gets 2025-11-25, legacy probe of server/discover gets 200 -32601', async () => {
  const init = await rpc(bridge.mcpUrl, {
    jsonrpc: '2.0', id: 70, method: 'initialize',
    params: { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
  });
  assert.equal(init.status, 200);
  assert.equal(init.json.result.protocolVersion, '2025-11-25');
  assert.equal(init.json.result.resultType, undefined);
  for (const headers of [{}, { 'mcp-protocol-version': '2025-11-25' }, { 'mcp-protocol-version': '2025-06-18' }]) {
    const probe = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 71, method: 'server/discover' }, headers);
    assert.equal(probe.status, 200, JSON.stringify(headers));
    assert.equal(probe.json.id, 71);
    assert.equal(probe.json.error.code, -32601);
  }
});

/**
 * A dual-era client as the revision describes it: probe server/discover with the preferred modern
 * version; a DiscoverResult or a recognised modern error (-32022: pick a mutual version) keeps it
 * modern, any other 4xx falls back to initialize. Returns the revision it ends up on.
 */
async function dualEraConnect(url, offered) {
  // modern revisions are 2026-07-28 and later (dates compare as strings)
  const isModern = (v) => v >= MODERN;
  const steps = [];
  let version = offered[0];
  for (let attempt = 0; attempt < 3; attempt++) {
    if (!version || !isModern(version)) break;
    const res = await post(url, modern(`probe-${attempt}`, 'server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': version } }, { 'mcp-protocol-version': version }));
    steps.push(`discover ${version} -> ${res.status}${res.json?.error ? ` ${res.json.error.code}` : ''}`);
    if (res.status === 200 && res.json.result?.resultType === 'complete') {
      const mutual = offered.find((v) => res.json.result.supportedVersions.includes(v));
      return { era: 'modern', version: mutual, steps };
    }
    if (res.status === 400 && res.json?.error?.code === -32022) {
      version = offered.find((v) => res.json.error.data.supported.includes(v));
      continue;
    }
    break; // not a recognised modern error: a legacy server
  }
  const legacyOffer = offered.find((v) => !isModern(v)) ?? '2025-11-25';
  const init = await rpc(url, { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: legacyOffer, capabilities: {}, clientInfo: { name: 'dual', version: '1' } } });
  steps.push(`initialize ${legacyOffer} -> ${init.status}`);
  const negotiated = init.json.result.protocolVersion;
  const list = await rpc(url, { jsonrpc: '2.0', id: 'l', method: 'tools/list' }, { 'mcp-protocol-version': negotiated });
  assert.equal(list.status, 200);
  return { era: 'legacy', version: negotiated, steps };
}

test('a dual-era client offering 2026-07-28 negotiates it with one probe', async () => {
  const outcome = await dualEraConnect(bridge.mcpUrl, [MODERN, '2025-11-25']);
  assert.deepEqual(outcome, { era: 'modern', version: MODERN, steps: ['discover 2026-07-28 -> 200'] });
});

test('a dual-era client preferring a newer revision gets -32022, retries with 2026-07-28 and stays modern', async () => {
  const outcome = await dualEraConnect(bridge.mcpUrl, ['2027-01-01', MODERN, '2025-11-25']);
  assert.deepEqual(outcome, { era: 'modern', version: MODERN, steps: ['discover 2027-01-01 -> 400 -32022', 'discover 2026-07-28 -> 200'] });
});

test('the fall-back path: a dual-era client whose only modern revision is not served falls back to initialize', async () => {
  const outcome = await dualEraConnect(bridge.mcpUrl, ['2027-01-01', '2025-06-18']);
  assert.deepEqual(outcome, { era: 'legacy', version: '2025-06-18', steps: ['discover 2027-01-01 -> 400 -32022', 'initialize 2025-06-18 -> 200'] });
});

test('the Claude Code probe (server/discover with MCP-Protocol-Version: 2026-07-28) succeeds, so it stays on 2026-07-28', async () => {
  const res = await post(bridge.mcpUrl, modern(0, 'server/discover', { _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.330' } } }));
  assert.equal(res.status, 200); // before this revision was served: 400, and the client fell back to initialize
  assert.ok(res.json.result.supportedVersions.includes(MODERN));
});

// ---------------------------------------------------------------- SSE-only Accept

test('Accept listing text/event-stream but not application/json -> one SSE event, in both eras; errors stay JSON', async () => {
  const sseOnly = { accept: 'text/event-stream' };
  const list = await post(bridge.mcpUrl, modern(80, 'tools/list', {}, sseOnly));
  assert.equal(list.status, 200);
  assert.equal(list.headers.get('content-type'), 'text/event-stream');
  assert.equal(list.headers.get('x-accel-buffering'), 'no');
  assert.equal(list.headers.get('cache-control'), 'no-cache');
  const events = list.text.split('\n\n').filter(Boolean);
  assert.equal(events.length, 1);
  const [eventLine, dataLine, ...rest] = events[0].split('\n');
  assert.equal(eventLine, 'event: message');
  assert.deepEqual(rest, []);
  const message = JSON.parse(dataLine.replace(/^data: /, ''));
  assert.equal(message.id, 80);
  assert.equal(message.result.resultType, 'complete');

  const legacy = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 81, method: 'tools/list' }, { accept: 'text/event-stream;q=1, text/html', 'mcp-protocol-version': '2025-06-18' });
  assert.equal(legacy.headers.get('content-type'), 'text/event-stream');
  assert.match(legacy.text, /^event: message\ndata: \{"jsonrpc":"2.0","id":81,"result":\{"tools":/);

  for (const accept of ['application/json, text/event-stream', 'text/event-stream, */*', 'text/event-stream, application/*', 'application/json;q=0.5, text/event-stream']) {
    const res = await post(bridge.mcpUrl, modern(82, 'tools/list', {}, { accept }));
    assert.match(res.headers.get('content-type'), /^application\/json/, accept);
  }
  // application/json with q=0 is refused, so the answer is SSE
  const refused = await post(bridge.mcpUrl, modern(83, 'tools/list', {}, { accept: 'application/json;q=0, text/event-stream' }));
  assert.equal(refused.headers.get('content-type'), 'text/event-stream');

  const notFound = await post(bridge.mcpUrl, modern(84, 'ping', {}, sseOnly));
  assert.equal(notFound.status, 404);
  assert.match(notFound.headers.get('content-type'), /^application\/json/);
  const note = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, sseOnly);
  assert.equal(note.status, 202);
  assert.equal(note.text, '');
});

test('2026-07-28 under MCP_MAX_CONCURRENT_CALLS: the next tools/call gets 503 with Retry-After and its id', () =>
  withBridge({ MCP_MAX_CONCURRENT_CALLS: '1' }, async (b) => {
    const silent = await linkComputer(b, { computerId: 1, onRequest: () => null });
    const hanging = post(b.mcpUrl, modern(90, 'tools/call', { name: 'exec-lua', arguments: { computerId: 1, code: 'sleep(99)', timeoutMs: 60_000 } }));
    await until(() => b.metrics.callsInFlight === 1);
    const busy = await post(b.mcpUrl, modern(91, 'tools/call', { name: 'probe-computers', arguments: {} }));
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get('retry-after'), '1');
    assert.equal(busy.json.id, 91);
    assert.equal(busy.json.error.code, -32003);
    await silent.close();
    const done = await hanging;
    assert.equal(done.status, 200);
    assert.equal(done.json.result.resultType, 'complete');
    assert.equal(done.json.result.isError, true);
  }));

test('x-mcp-header parameters: Mcp-Param-* headers are required when the argument has a value and must match it (decoded, integers numerically)', async () => {
  const { writeConfig } = await import('../config/write.js');
  const file = writeConfig({
    tools: [{
      name: 'region-tool',
      description: 'Has header-mirrored parameters',
      target: { computerId: 1 },
      lua: 'return 1',
      inputSchema: {
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          count: { type: 'integer', 'x-mcp-header': 'Count' },
          flag: { type: 'boolean', 'x-mcp-header': 'Flag' },
          where: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
        },
      },
    }],
  });
  await withBridge({ CC_CONFIG: file }, async (b) => {
    const call = (id, args, headers) => post(b.mcpUrl, modern(id, 'tools/call', { name: 'region-tool', arguments: args }, headers));
    const listed = await post(b.mcpUrl, modern(1, 'tools/list'));
    assert.equal(listed.json.result.tools.find((t) => t.name === 'region-tool').inputSchema.properties.region['x-mcp-header'], 'Region');

    const fits = [
      [{}, {}],
      [{ region: 'us-west1', count: 42, flag: false, where: { zone: 'b' } }, { 'mcp-param-region': 'us-west1', 'mcp-param-count': '42.0', 'mcp-param-flag': 'false', 'mcp-param-zone': 'b' }],
      [{ region: 'Hello, 世界' }, { 'Mcp-Param-Region': `=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=` }],
      [{ region: null }, {}],
    ];
    for (const [args, headers] of fits) {
      const res = await call(2, args, headers);
      assert.equal(res.status, 200, JSON.stringify(args));
      assert.equal(res.json.result.resultType, 'complete');
    }
    const misfits = [
      [{ region: 'us-west1' }, {}, /the Mcp-Param-Region header is required \(arguments.region has a value\)/],
      [{ region: 'us-west1' }, { 'mcp-param-region': 'eu-north1' }, /Mcp-Param-Region header value "eu-north1" does not match arguments.region "us-west1"/],
      [{ count: 42 }, { 'mcp-param-count': '41' }, /does not match arguments.count 42/],
      [{ count: 42 }, { 'mcp-param-count': '' }, /does not match/],
      [{ flag: true }, { 'mcp-param-flag': 'True' }, /does not match arguments.flag true/],
      [{ where: { zone: 'a' } }, {}, /Mcp-Param-Zone header is required \(arguments.where.zone/],
      [{ region: 'x' }, { 'mcp-param-region': '=?base64?***?=' }, /malformed/],
      [{ region: { not: 'primitive' } }, { 'mcp-param-region': '[object Object]' }, /does not match/],
    ];
    for (const [args, headers, message] of misfits) {
      const res = await call(3, args, headers);
      assert.equal(res.status, 400, JSON.stringify([args, headers]));
      assert.equal(res.json.id, 3);
      assert.equal(res.json.error.code, -32020);
      assert.match(res.json.error.message, message);
    }
  });
});

test('bug: spec 2026-07-28 basic/transports/streamable-http: an Mcp-Param header the tool declares is checked even when its argument has no value (present: a mismatch; bad characters: refused), so an intermediary routing on it never sees a value the call does not use', async () => {
  const { writeConfig } = await import('../config/write.js');
  const file = writeConfig({
    tools: [{
      name: 'region-tool',
      description: 'Has a header-mirrored parameter',
      target: { computerId: 1 },
      lua: 'return 1',
      inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, other: { type: 'string' } } },
    }],
  });
  await withBridge({ CC_CONFIG: file }, async (b) => {
    const call = (id, args, headers) => post(b.mcpUrl, modern(id, 'tools/call', { name: 'region-tool', arguments: args }, headers));
    const misfits = [
      // the header says us-west1 while the call runs with no region (the tool's default)
      [{}, { 'mcp-param-region': 'us-west1' }, /Mcp-Param-Region header value "us-west1" does not match arguments.region \(absent\)/],
      [{ other: 'x' }, { 'Mcp-Param-Region': '=?base64?dXMtd2VzdDE=?=' }, /does not match arguments.region \(absent\)/],
      // a client must leave the header out for a null value
      [{ region: null }, { 'mcp-param-region': 'us-west1' }, /does not match arguments.region null/],
      // a recognised header with bytes outside visible ASCII is refused whatever the arguments hold
      [{}, { 'mcp-param-region': 'x\u00e9' }, /the Mcp-Param-Region header contains invalid characters/],
    ];
    for (const [args, headers, message] of misfits) {
      const res = await call(7, args, headers);
      assert.equal(res.status, 400, JSON.stringify([args, headers, res.json]));
      assert.equal(res.json.id, 7);
      assert.equal(res.json.error.code, -32020);
      assert.match(res.json.error.message, message);
    }
    // a header the tool does not declare is not this server's to check (intermediaries pass it on)
    const stranger = await call(8, {}, { 'mcp-param-zone': 'anything' });
    assert.equal(stranger.status, 200);
    assert.equal(stranger.json.result.resultType, 'complete');
  });
});

test('2026-07-28 on HTTP: closing the request cancels the call (the revision\'s cancellation); the computer gets the cancel frame', () =>
  withBridge({}, async (b) => {
    const computer = await linkComputer(b, { computerId: 1, onRequest: () => null });
    const { body, headers } = modern(95, 'tools/call', { name: 'exec-lua', arguments: { computerId: 1, code: 'sleep(60)', timeoutMs: 300000 } });
    const text = JSON.stringify(body);
    const req = http.request(b.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } });
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', () => {});
    req.end(text);
    const sent = await computer.next((f) => f.type === 'request');
    req.destroy();
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: sent.id });
    await until(() => b.dispatcher.activeCalls === 0);
    assert.equal(answered, false);
    await computer.close();
  }));
