// The HTTP listener's guard and CORS answers at edges no test reached (found by mutation testing),
// over real HTTP against a real bridge (and one listener with a route that throws).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBridge, withBridge } from '../helpers.js';
import { CORS_ALLOW_HEADERS, corsAllowHeaders, startHttpServer } from '../../dist/surfaces/http.js';
import { Router } from '../../dist/surfaces/router.js';
import { createLogger } from '../../dist/log.js';

const TOKEN = 'edges-token-0123456789abcdef';

test('CORS: an allowed Origin\'s answer varies by Origin; a preflight may be cached 600 s and allows exactly the Mcp-Param-* headers asked for, in any case', () =>
  withBridge({}, async (bridge) => {
    const origin = 'http://localhost:6274';
    const answer = await fetch(new URL('/health', bridge.mcpUrl), { headers: { origin } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('vary'), 'Origin');
    const preflight = await fetch(bridge.mcpUrl, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, MCP-PARAM-Region, x-mcp-param-a, mcp-param-b' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-max-age'), '600');
    assert.equal(preflight.headers.get('access-control-allow-headers'), `${CORS_ALLOW_HEADERS}, MCP-PARAM-Region, mcp-param-b`);
    assert.equal(corsAllowHeaders('X-Mcp-Param-A'), CORS_ALLOW_HEADERS);
  }));

test('MCP_AUTH_TOKEN: a 401 closes its connection and is counted; the OpenID discovery probe is public and gets the no-OAuth 404', async (t) => {
  const bridge = await startTestBridge({ MCP_AUTH_TOKEN: TOKEN });
  t.after(() => bridge.close());
  const refused = await fetch(bridge.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('connection'), 'close');
  await refused.text();
  const metrics = await (await fetch(new URL('/metrics', bridge.mcpUrl), { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  assert.match(metrics, /^cc_http_unauthorized_total 1$/m);
  const probe = await fetch(new URL('/.well-known/openid-configuration', bridge.mcpUrl));
  assert.equal(probe.status, 404);
  assert.match((await probe.json()).message, /^cc-mcp-bridge has no OAuth/);
});

test('a route that throws gets a JSON-RPC 500 that says nothing internal, and the listener goes on', async (t) => {
  const lines = [];
  const router = new Router().add('/boom', { GET: () => { throw new Error('secret detail'); } }).add('/ok', { GET: (_req, res) => res.end('fine') });
  const server = await startHttpServer(router, createLogger('debug', (l) => lines.push(l)), { host: '127.0.0.1', port: 0, allowedOrigins: [] });
  t.after(() => server.close(0));
  const base = `http://127.0.0.1:${server.address.port}`;
  const res = await fetch(`${base}/boom`);
  assert.equal(res.status, 500);
  assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
  assert.ok(lines.some((l) => /MCP request failed: Error: secret detail/.test(l)));
  assert.equal(await (await fetch(`${base}/ok`)).text(), 'fine');
});

test('the Origin (and Host) refusals are logged at most 50 a second, then one line saying how many were left out (found by mutation testing: logging each passed every test); Date mocked, so the second never ends by itself', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 0 });
  const lines = [];
  const router = new Router().add('/ok', { GET: (_req, res) => res.end('fine') });
  const server = await startHttpServer(router, createLogger('warn', (l) => lines.push(l)), { host: '127.0.0.1', port: 0, allowedOrigins: [] });
  t.after(() => server.close(0));
  const base = `http://127.0.0.1:${server.address.port}`;
  for (let i = 0; i < 70; i++) assert.equal((await fetch(`${base}/ok`, { headers: { origin: `http://evil${i}.example` } })).status, 403);
  assert.equal(lines.length, 50);
  assert.match(lines[0], /rejected request from Origin "http:\/\/evil0\.example"/);
  assert.match(lines[49], /rejected request from Origin "http:\/\/evil49\.example"/);
  t.mock.timers.tick(1000);
  assert.equal((await fetch(`${base}/ok`, { headers: { origin: 'http://late.example' } })).status, 403);
  assert.equal(lines.length, 51);
  assert.match(lines[50], /rejected request from Origin "http:\/\/late\.example" \(20 similar lines suppressed\)$/);
});
