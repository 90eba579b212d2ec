// Fuzz: hostile requests on the REST and OpenAPI routes (GET /tools, GET /computers, POST /tools/<name>,
// a config alias, GET /openapi.json, /health, /metrics, /reload), as raw bytes: every tool's
// arguments mutated at every field, odd tool names and queries, wrong methods and headers, truncated,
// oversize and slow bodies. Invariants: every request gets an HTTP answer whose body is JSON with a
// specific {"error": {"code", "message"}} (never a 500, a stack or a hang), and a well-formed REST
// call on another connection, running the whole time, always succeeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { fuzzSeed, internalFailures, leaksInternals, mangleText, mutateValueText, prng, rawHttp, requestHead } from './lib.js';

const REQUESTS = 600;
const CONCURRENCY = 6;
const GOOD = 77;
const MAX_BODY = 32 * 1024;

const CONFIG = {
  tools: [
    {
      name: 'greet',
      description: 'a config Lua tool with most schema keywords',
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 40, pattern: '^[a-z]+$' },
          count: { type: 'integer', minimum: 1, maximum: 10, multipleOf: 1 },
          tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, uniqueItems: true, maxItems: 3 },
          opts: { type: 'object', additionalProperties: { type: 'boolean' }, maxProperties: 3 },
          region: { type: 'string', 'x-mcp-header': 'Region' },
        },
        required: ['name'],
        additionalProperties: false,
      },
      target: 'argument',
      lua: 'local args = ...\nreturn args.name',
    },
  ],
  endpoints: [{ path: '/hello', tool: 'greet' }],
};

/** A valid argument object for a tool, from its input schema (the fuzz then breaks one field of it). */
function exampleArgs(tool) {
  const byName = { computerId: GOOD, code: 'return 1', name: 'abc', path: 'startup.lua', content: 'x', from: 'a', to: 'b', method: 'list', program: 'ls', job: 'j1', count: 2, tags: ['a'], opts: { x: true }, region: 'eu', timeoutMs: 2000 };
  const args = {};
  for (const key of tool.inputSchema?.required ?? []) args[key] = byName[key] ?? 'x';
  for (const key of Object.keys(tool.inputSchema?.properties ?? {})) if (key in byName && !(key in args)) args[key] = byName[key];
  if ('computer' in args) delete args.computer;
  return args;
}

function hostileRequest(r, tools) {
  const tool = r.pick(tools);
  const good = exampleArgs(tool);
  const kind = r.int(10);
  const text = kind < 2 ? JSON.stringify(good) : kind < 8 ? mutateValueText(r, good) : undefined;
  let body = text === undefined ? mangleText(r, JSON.stringify(good)) : Buffer.from(text, 'utf8');
  if (r.chance(0.02)) body = Buffer.alloc(MAX_BODY + 1 + r.int(100), 0x20);
  const names = [tool.name, tool.name, tool.name, encodeURIComponent(tool.name), '%E0%A4%A', '%00', 'x'.repeat(3000), '..%2F..%2Fhealth', 'exec-lua/extra', '', '__proto__', 'constructor', 'nope__exec-lua', '%F0%9F%98%80'];
  const route = r.int(20);
  let method = 'POST';
  let path;
  if (route < 13) path = `/tools/${r.pick(names)}`;
  else if (route < 14) path = r.pick(['/hello', '/hello?service=x', '/hello/', '/HELLO']);
  else if (route < 16) {
    path = r.pick(['/tools', '/computers', '/openapi.json', '/health', '/metrics', '/reload']);
    method = r.pick(['GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE']);
  } else path = `/tools/${r.pick(names)}?${r.pick(['service=', 'service=up', 'service=' + 'y'.repeat(500), 'service=%ZZ', 'service=a&service=b', '%%%', 'x=' + '&'.repeat(200)])}`;
  if (r.chance(0.1)) method = r.pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
  const headers = {};
  // mostly JSON, so that bodies reach the routes: any other type is refused 415 before the body is read
  if (r.chance(0.8)) headers['Content-Type'] = r.chance(0.7) ? 'application/json' : r.pick(['text/plain', 'application/x-www-form-urlencoded', '\u00e9']);
  if (r.chance(0.05)) headers.Origin = r.pick(['http://evil.example', 'null', 'http://127.0.0.1:9']);
  if (r.chance(0.05)) headers.Host = r.pick(['evil.example', '127.0.0.1:1/x', '[::1]', '']);
  const delivery = r.pick(['whole', 'whole', 'whole', 'whole', 'truncated', 'slow', 'no-length']);
  return { method, path, headers, body, delivery };
}

async function send(port, req) {
  const { method, path, headers, body, delivery } = req;
  const head = (length) => {
    const h = requestHead(method, path, headers, length).toString('latin1');
    // a Host of our own replaces the default one
    return Buffer.from(headers.Host !== undefined ? h.replace('Host: 127.0.0.1\r\n', '') : h, 'latin1');
  };
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return rawHttp(port, head());
  switch (delivery) {
    case 'truncated':
      return rawHttp(port, head(body.length + 10), [body], { endAfter: true });
    case 'slow': {
      const half = Math.ceil(body.length / 2) || 1;
      return rawHttp(port, head(body.length), [body.subarray(0, half), body.subarray(half)], { gapMs: 20 });
    }
    case 'no-length':
      return rawHttp(port, head(), [body]);
    default:
      return rawHttp(port, head(body.length), [body]);
  }
}

function answerProblems(req, res) {
  if (res.hung) return ['no answer and the connection stayed open (hang)'];
  if (res.status === null) return req.delivery === 'truncated' ? [] : ['connection closed without an answer'];
  const problems = [];
  if (res.status === 500 || res.status > 504) problems.push(`status ${res.status}`);
  if (leaksInternals(res.body)) problems.push('the body leaks a stack or path');
  const type = res.headers['content-type'] ?? '';
  if (req.method === 'HEAD' || res.status === 204) return problems;
  if (res.body === '' && (res.status === 400 || res.status === 431) && type === '') return problems; // node's own answer to a malformed request
  if (req.path.startsWith('/metrics') && res.status === 200) return problems; // Prometheus text
  let json;
  try {
    json = JSON.parse(res.body);
  } catch {
    return [...problems, `body is not JSON (${type}): ${res.body.slice(0, 120)}`];
  }
  if (res.status >= 400) {
    const e = json?.error;
    const specific = (typeof e === 'string' && typeof json.message === 'string') || (e && typeof e === 'object' && typeof e.code === 'string' && e.code !== '' && typeof e.message === 'string' && e.message !== '');
    if (!specific) problems.push(`error body without a code and message: ${res.body.slice(0, 120)}`);
    if (e?.code === 'internal') problems.push('internal error');
  } else if (req.method === 'POST' && (req.path.startsWith('/tools/') || req.path.startsWith('/hello')) && res.status === 200) {
    if (!Array.isArray(json?.content) || typeof json.isError !== 'boolean') problems.push(`200 without content/isError: ${res.body.slice(0, 120)}`);
  }
  return problems;
}

test('fuzz REST and OpenAPI: hostile requests get specific JSON errors, never a 500, stack or hang; a concurrent REST call always succeeds', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_2);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  await withBridge({ CC_CONFIG: writeConfig(CONFIG), MCP_MAX_BODY_BYTES: String(MAX_BODY), CC_EXEC_TIMEOUT_MS: '2000', CC_PROBE_TIMEOUT_MS: '1000' }, async (bridge) => {
    const good = await linkComputer(bridge, {
      computerId: GOOD,
      onRequest: (frame) => (frame.method === 'ping' ? { ok: true, result: 'pong' } : frame.method === 'exec-lua' ? { ok: true, result: { output: '', returns: [{ type: 'string', value: 'hi' }] } } : { ok: false, error: 'not here' }),
    });
    const origin = new URL(bridge.mcpUrl).origin;
    const port = Number(new URL(bridge.mcpUrl).port);
    const tools = await (await fetch(origin + '/tools')).json();
    assert.ok(tools.some((x) => x.name === 'greet'));
    const r = prng(seed);
    const requests = Array.from({ length: REQUESTS }, () => hostileRequest(r, tools));
    let fuzzing = true;
    let canaryCalls = 0;
    const canaryFailures = [];
    const canary = (async () => {
      while (fuzzing) {
        canaryCalls++;
        const res = await fetch(origin + '/hello', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ computerId: GOOD, name: 'abc' }) });
        const json = await res.json().catch(() => null);
        if (res.status !== 200 || json?.structuredContent?.returns?.[0]?.value !== 'hi') canaryFailures.push(`${res.status} ${JSON.stringify(json).slice(0, 200)}`);
      }
    })();
    const failures = [];
    const statuses = {};
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const req = requests[next++];
        const res = await send(port, req);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        const problems = answerProblems(req, res);
        if (problems.length) failures.push(`${problems.join('; ')} <- ${req.method} ${req.path.slice(0, 200)} ${JSON.stringify(req.headers)} [${req.delivery}] ${req.body.toString('utf8').slice(0, 300)} => ${res.status} ${res.body.slice(0, 300)}`);
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
    const doc = await fetch(origin + '/openapi.json');
    assert.equal(doc.status, 200);
    await good.close();
  });
});
