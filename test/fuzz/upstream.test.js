// Fuzz: a hostile upstream MCP server (test/fixtures/fuzz-upstream.js, a real child process over
// stdio) answers concurrent tools/call requests from several callers with garbage lines, forged
// answers under ids the bridge never sent or already had answered (the id as a string, unknown
// numbers, null, arrays, second answers), server requests reusing a call's id, malformed, deep and
// huge answers, or no answer. Invariants: no caller is ever handed an answer that is not its own
// (forged ones say FORGED), every call gets its own echo or a well-formed error, nothing fails inside
// the bridge, and the bridge keeps serving. A second test lists tools with broken names and schemas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { rpc, until, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { echoCalls, fuzzSeed, internalFailures, stdioBootMs, upstreamUp } from './lib.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/fuzz-upstream.js', import.meta.url));
const CALLERS = 6;
const CALLS_PER_CALLER = 45;
// The server's timeoutMs ends the calls the fixture never answers (about 3 per caller), so it is short:
// 400 ms, or three times what booting the fixture takes now when that is more (the bridge's initialize
// counts the boot, which took 4-6 s at a load of 25: with 400 ms the server never came up), at most 10 s.
const timeoutMs = async () => Math.min(10_000, Math.max(400, Math.ceil(3 * (await stdioBootMs([FIXTURE])))));
const server = async (id, ...args) => ({ id, command: process.execPath, args: [FIXTURE, ...args], timeoutMs: await timeoutMs() });
const up = (bridge, id) => upstreamUp(bridge, id, until);

test('fuzz upstream answers: forged, malformed and missing answers never reach the wrong caller or crash the bridge', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_5);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const config = await server('up', '--seed', String(seed));
  t.diagnostic(`upstream timeoutMs: ${config.timeoutMs}`);
  await withBridge({ CC_CONFIG: writeConfig({ servers: [config] }), CC_UPSTREAM_MAX_MESSAGE_BYTES: String(256 * 1024), LOG_LEVEL: 'info' }, async (bridge) => {
    await up(bridge, 'up');
    const outcomes = await echoCalls(bridge, rpc, { tool: 'up__echo', prefix: 'c', callers: CALLERS, calls: CALLS_PER_CALLER });
    t.diagnostic(`calls answered with their own echo: ${outcomes.own}; with an error: ${outcomes.error}`);
    assert.deepEqual(outcomes.problems.slice(0, 10), []);
    assert.ok(outcomes.own > 0 && outcomes.error > 0);
    assert.deepEqual(internalFailures(bridge.logs), []);
    assert.equal(bridge.dispatcher.activeCalls, 0);
    const list = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'l', method: 'tools/list' });
    assert.ok(list.json.result.tools.some((x) => x.name === 'up__echo'));
  });
});

test('fuzz upstream tools/list: tools with broken names and schemas never crash the bridge; what it lists is well-formed', { timeout: 60_000 }, async () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [await server('bad', '--hostile-tools', '--seed', '1')] }) }, async (bridge) => {
    await up(bridge, 'bad');
    for (const version of ['2025-06-18', '2026-07-28']) {
      const meta = { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {} };
      const modern = version === '2026-07-28';
      const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: modern ? { _meta: meta } : {} }, { 'mcp-protocol-version': version, ...(modern ? { 'mcp-method': 'tools/list' } : {}) });
      assert.equal(res.status, 200, res.text);
      const names = res.json.result.tools.map((x) => x.name);
      assert.equal(new Set(names).size, names.length, 'no name twice');
      for (const tool of res.json.result.tools) {
        assert.equal(typeof tool.name, 'string');
        assert.ok(tool.inputSchema && typeof tool.inputSchema === 'object' && !Array.isArray(tool.inputSchema), `${tool.name}: ${JSON.stringify(tool.inputSchema)}`);
      }
      const rest = await fetch(new URL('/openapi.json', bridge.mcpUrl));
      assert.equal(rest.status, 200);
    }
    assert.deepEqual(internalFailures(bridge.logs), []);
  }));
