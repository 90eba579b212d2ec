// Fuzz: hostile requests on the MCP HTTP route (POST/GET/DELETE/... on /mcp and /), sent as raw bytes
// so nothing in an HTTP client tidies them up: mutated JSON-RPC and MCP params at every field, odd
// ids, batches, wrong headers, truncated, oversize and slow bodies. Invariants: every request gets a
// well-formed JSON-RPC error or HTTP error (never a 500, a stack or a hang), the bridge stays up, and
// a well-formed call on another connection, running the whole time, always succeeds.
// Deterministic: a fixed seed (FUZZ_SEED=<n> replays another) and a fixed number of requests.
import { isUtf8 } from 'node:buffer';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, rpc, withBridge } from '../helpers.js';
import { fuzzSeed, internalFailures, jsonRpcProblems, leaksInternals, mangleText, mutateValueText, prng, rawHttp, requestHead, hostileValueText } from './lib.js';

const REQUESTS = 700;
const CONCURRENCY = 6;
const GOOD = 4242;
const MAX_BODY = 64 * 1024;

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const TEMPLATES = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } } },
  { jsonrpc: '2.0', id: 'p', method: 'ping' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'list-computers', arguments: {} } },
  { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: GOOD, code: 'return 1', timeoutMs: 2000 } } },
  { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'read-file', arguments: { computerId: GOOD, path: 'startup.lua' } } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'fuzz' } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 7, result: {} },
  { jsonrpc: '2.0', id: 8, method: 'server/discover', params: { _meta: META } },
  { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'probe-computers', arguments: {}, _meta: META } },
];
const VERSIONS = [undefined, '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28', '2026-07-28', 'garbage', '', ' 2025-06-18 ', '2024-11-05', 'x'.repeat(5000), '\u00ff\u00fe'];
const ACCEPTS = [undefined, 'application/json, text/event-stream', 'text/event-stream', 'application/json', '*/*', 'text/html', 'text/event-stream;q=0, application/json;q=0', ',,,;;;q=x', 'application/*;q=abc'];
const CONTENT_TYPES = [undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '\u00e9'];
const SESSIONS = [undefined, 'garbage', '0'.repeat(32) + '.' + '0'.repeat(32), 'x'.repeat(10_000), ''];

/** One hostile request: { method, path, headers, body (Buffer), delivery, sent (the JSON value we sent, if any) }. */
function hostileRequest(r) {
  const template = r.pick(TEMPLATES);
  let text;
  let kind = r.int(10);
  if (kind < 2) text = JSON.stringify(template);
  else if (kind < 5) text = mutateValueText(r, template);
  else if (kind < 6) text = '[' + Array.from({ length: 1 + r.int(4) }, () => (r.chance(0.5) ? JSON.stringify(r.pick(TEMPLATES)) : mutateValueText(r, r.pick(TEMPLATES)))).join(',') + ']';
  else if (kind < 7) text = JSON.stringify({ ...template, id: JSON.parse(r.pick(['1e999', '-0', '9007199254740993', '1.5', '"' + 'i'.repeat(100_000) + '"', '[' + '1,'.repeat(100) + '1]', '{}', 'null', 'true'])) });
  else if (kind < 8) text = JSON.stringify(template).replace(/"id":[^,}]+/, `"id":${r.pick(['1e999', '-1e999', '{"a":' + hostileValueText(r) + '}', '"' + '\\u0000'.repeat(50) + '"', '123456789012345678901234567890'])}`);
  let body = text === undefined ? mangleText(r, JSON.stringify(template)) : Buffer.from(text, 'utf8');
  if (r.chance(0.02)) body = Buffer.alloc(MAX_BODY + 1 + r.int(1000), 0x20); // over the limit
  const headers = {};
  const version = r.pick(VERSIONS);
  if (version !== undefined) headers['MCP-Protocol-Version'] = version;
  const accept = r.pick(ACCEPTS);
  if (accept !== undefined) headers.Accept = accept;
  // most requests carry a JSON type (or none) so that they reach the dispatcher: any other type is
  // refused 415 before the body is read
  const type = r.chance(0.3) ? r.pick(CONTENT_TYPES) : r.pick([undefined, 'application/json']);
  if (type !== undefined) headers['Content-Type'] = type;
  const session = r.pick(SESSIONS);
  if (session !== undefined) headers['Mcp-Session-Id'] = session;
  if (r.chance(0.5)) headers['Mcp-Method'] = r.chance(0.7) ? template.method ?? 'x' : r.pick(['', 'tools/call', '\u00e9', 'x'.repeat(300)]);
  if (r.chance(0.4)) headers['Mcp-Name'] = r.pick([template.params?.name ?? 'x', '=?base64?cHJvYmUtY29tcHV0ZXJz?=', '=?base64?***?=', '=?base64?/w==?=', '', '\u00ff']);
  if (r.chance(0.1)) headers['Mcp-Param-Computer'] = r.pick(['1', '=?base64?MQ==?=', '']);
  if (r.chance(0.05)) headers.Origin = r.pick(['http://evil.example', 'null', 'http://localhost:1', 'file://', '\u00ff']);
  if (r.chance(0.05)) headers.Authorization = r.pick(['Bearer x', 'Basic abc', '', 'Bearer ' + 'y'.repeat(5000)]);
  if (r.chance(0.03)) headers['Transfer-Encoding'] = 'chunked';
  const method = r.chance(0.85) ? 'POST' : r.pick(['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE']);
  const path = r.chance(0.85) ? r.pick(['/mcp', '/mcp', '/', '/mcp?x=1']) : r.pick(['/mcp/', '//mcp', '/MCP', '/mcp#x', '/%6dcp', '*', 'http://127.0.0.1/mcp']);
  const delivery = r.pick(['whole', 'whole', 'whole', 'whole', 'truncated', 'slow', 'short-length', 'no-length']);
  return { method, path, headers, body, delivery, text };
}

async function send(port, req) {
  const { method, path, headers, body, delivery } = req;
  const noBody = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
  if (noBody) return rawHttp(port, requestHead(method, path, headers));
  if (headers['Transfer-Encoding']) {
    const chunked = Buffer.concat([Buffer.from(body.length.toString(16) + '\r\n'), body, Buffer.from('\r\n0\r\n\r\n')]);
    return rawHttp(port, requestHead(method, path, headers), [chunked]);
  }
  switch (delivery) {
    case 'truncated':
      // says more than it sends, then half-closes: nobody is left to answer
      return rawHttp(port, requestHead(method, path, headers, body.length + 10), [body], { endAfter: true });
    case 'slow': {
      const third = Math.ceil(body.length / 3) || 1;
      return rawHttp(port, requestHead(method, path, headers, body.length), [body.subarray(0, third), body.subarray(third, 2 * third), body.subarray(2 * third)], { gapMs: 15 });
    }
    case 'short-length':
      // says less than it sends: the rest is read as the next (garbage) request
      return rawHttp(port, requestHead(method, path, headers, Math.max(0, body.length - 3)), [body]);
    case 'no-length':
      return rawHttp(port, requestHead(method, path, headers), [body]);
    default:
      return rawHttp(port, requestHead(method, path, headers, body.length), [body]);
  }
}

/** What is wrong with one answer (empty: nothing). */
function answerProblems(req, res) {
  const problems = [];
  if (res.hung) return ['no answer and the connection stayed open (hang)'];
  if (res.status === null) {
    // only a request whose body never fully arrived may go unanswered
    if (req.delivery !== 'truncated') problems.push(`connection closed without an answer (${res.raw})`);
    return problems;
  }
  if (res.status === 500 || res.status > 504) problems.push(`status ${res.status}`);
  if (leaksInternals(res.body)) problems.push('the body leaks a stack or path');
  const type = res.headers['content-type'] ?? '';
  if (req.method === 'HEAD' || res.status === 204 || res.status === 202) return problems;
  if (res.body === '' && (res.status === 400 || res.status === 431) && type === '') return problems; // node's own answer to a malformed HTTP request or oversize head
  let json;
  try {
    json = type.startsWith('text/event-stream') ? JSON.parse(/^data: (.*)$/m.exec(res.body)?.[1] ?? '') : JSON.parse(res.body);
  } catch {
    return [...problems, `body is not JSON (${type}): ${res.body.slice(0, 120)}`];
  }
  const routed = /^\/(mcp)?(\?.*)?$/.test(req.path);
  if (!routed || res.status === 401 || res.status === 403) {
    if (!json || typeof json !== 'object' || !('error' in json)) problems.push(`HTTP error without an error field: ${res.body.slice(0, 120)}`);
    return problems;
  }
  for (const item of Array.isArray(json) ? json : [json]) for (const p of jsonRpcProblems(item)) problems.push(p);
  // a single request whose id we can read gets its answer (or its error) under that id; a 413 or a
  // 415 (Content-Type not JSON) is answered before the body is read, so with id null
  let sent;
  try {
    // a body that is not UTF-8 is a parse error (id null), never decoded with U+FFFD
    sent = isUtf8(req.body) ? JSON.parse(req.body.toString('utf8')) : undefined;
  } catch {
    sent = undefined;
  }
  // a number id past 2^53-1 cannot be echoed as sent (JSON.parse rounds it): it is answered with id null
  const idOk = (id) => typeof id === 'string' || (typeof id === 'number' && Math.abs(id) <= Number.MAX_SAFE_INTEGER);
  if (req.method === 'POST' && req.delivery === 'whole' && !req.headers['Transfer-Encoding'] && res.status !== 413 && res.status !== 415 && sent && typeof sent === 'object' && !Array.isArray(sent) && idOk(sent.id) && 'method' in sent && !Array.isArray(json)) {
    if (json.id !== sent.id) problems.push(`answer id ${JSON.stringify(json.id)?.slice(0, 50)} is not the request's ${JSON.stringify(sent.id).slice(0, 50)}`);
  }
  return problems;
}

test('fuzz MCP HTTP: hostile requests on /mcp get well-formed errors, never a 500, stack or hang; a concurrent good call always succeeds', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_1);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  await withBridge({ MCP_MAX_BODY_BYTES: String(MAX_BODY), CC_EXEC_TIMEOUT_MS: '2000', CC_PROBE_TIMEOUT_MS: '1000', LOG_LEVEL: 'debug' }, async (bridge) => {
    const good = await linkComputer(bridge, {
      computerId: GOOD,
      onRequest: (frame) => (frame.method === 'ping' ? { ok: true, result: 'pong' } : frame.method === 'exec-lua' ? { ok: true, result: { output: 'ran\n', returns: [{ type: 'number', value: 7 }] } } : { ok: false, error: 'no' }),
    });
    const port = Number(new URL(bridge.mcpUrl).port);
    const r = prng(seed);
    const failures = [];
    const statuses = {};
    let done = 0;
    // the canary: well-formed calls on their own connections while the fuzzing runs
    let fuzzing = true;
    let canaryCalls = 0;
    const canaryFailures = [];
    const canary = (async () => {
      while (fuzzing) {
        const id = `canary-${canaryCalls++}`;
        const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: GOOD, code: 'return 7' } } }, { 'mcp-protocol-version': '2025-06-18' });
        if (res.status !== 200 || res.json?.id !== id || res.json?.result?.structuredContent?.returns?.[0]?.value !== 7) canaryFailures.push(`${res.status} ${res.text.slice(0, 200)}`);
      }
    })();
    const requests = Array.from({ length: REQUESTS }, () => hostileRequest(r));
    const worker = async () => {
      while (done < requests.length) {
        const req = requests[done++];
        const res = await send(port, req);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        const problems = answerProblems(req, res);
        if (problems.length) failures.push(`${problems.join('; ')} <- ${req.method} ${req.path} ${JSON.stringify(req.headers).slice(0, 300)} [${req.delivery}] ${req.body.toString('utf8').slice(0, 300)} => ${res.status} ${res.body.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    fuzzing = false;
    await canary;
    t.diagnostic(`statuses: ${JSON.stringify(statuses)}; canary calls: ${canaryCalls}`);
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`);
    assert.deepEqual(canaryFailures, []);
    assert.ok(canaryCalls > 0);
    assert.deepEqual(internalFailures(bridge.logs), []);
    const health = await fetch(new URL('/health', bridge.mcpUrl));
    assert.equal(health.status, 200);
    await good.close();
  });
});
