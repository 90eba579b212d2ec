// MCP_CALL_RATE / MCP_CALL_BURST: tool calls per client per second, a token bucket per client shared
// by MCP over HTTP, stdio and REST. MCP over real HTTP; the bucket's arithmetic with a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallRate } from '../../dist/tools/call-rate.js';
import { rpc, session, withBridge } from '../helpers.js';
import { INIT, run } from '../surfaces/stdio-child.js';

const call = (id, name = 'list-computers') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
const ALPHA = 'alpha-token-0123456789';
const BETA = 'beta-token-0123456789';
const REFUSAL = /^Too many tool calls: each client may start 1 a second, 3 at once \(MCP_CALL_RATE, MCP_CALL_BURST\); try again in \d+ ms\.$/;

test('CallRate: a burst, then one call per 1/rate s; the wait it gives is exact; callers apart; refilled buckets are swept', () => {
  let now = 0;
  const rate = new CallRate(10, 3);
  const take = rate.take.bind(rate);
  rate.take = (key) => take(key, now);
  assert.deepEqual([rate.take('a'), rate.take('a'), rate.take('a')], [0, 0, 0]);
  assert.equal(rate.take('a'), 100, 'empty: the next token in 100 ms');
  assert.equal(rate.take('b'), 0, 'another caller has its own bucket');
  now = 99;
  assert.equal(rate.take('a'), 1);
  now = 100;
  assert.equal(rate.take('a'), 0, 'refilled by exactly one token');
  assert.equal(rate.take('a'), 100);
  now = 10_000;
  assert.deepEqual([rate.take('a'), rate.take('a'), rate.take('a'), rate.take('a') > 0], [0, 0, 0, true], 'never more than the burst, however long it waited');
  // 2000 callers that went quiet: a new one past the sweep point forgets the refilled ones
  for (let i = 0; i < 2000; i++) rate.take(`c${i}`);
  now = 20_000;
  for (let i = 0; i < 2100; i++) rate.take(`d${i}`);
  assert.ok(rate.tracked <= 2100, `${rate.tracked} buckets kept, where the 2000 quiet ones were refilled`);
});

test('bug: tool calls had no rate limit (the MCP tools page: servers MUST rate limit tool invocations); past MCP_CALL_RATE a client gets -32029 / HTTP 429 with Retry-After, other clients do not, and its bucket refills', { timeout: 60_000 }, () =>
  withBridge({ MCP_CALL_RATE: '1', MCP_CALL_BURST: '3' }, async (bridge) => {
    const a = await session(bridge.mcpUrl);
    // one batch (2025-03-26): its calls take their tokens in the same turn, so exactly the burst runs
    const batch = await rpc(bridge.mcpUrl, [1, 2, 3, 4, 5].map((id) => call(id)), a);
    assert.equal(batch.status, 200);
    const byId = new Map(batch.json.map((r) => [r.id, r]));
    for (const id of [1, 2, 3]) assert.deepEqual(byId.get(id).result?.structuredContent, { computers: [] }, `call ${id} ran`);
    for (const id of [4, 5]) {
      const { error } = byId.get(id);
      assert.equal(error?.code, -32029, `call ${id} refused`);
      assert.match(error.message, REFUSAL);
      assert.ok(error.data.retryAfterMs > 0 && error.data.retryAfterMs <= 1000, JSON.stringify(error.data));
    }
    // a lone request: 429 with Retry-After (a second may have refilled one token: then the next is refused)
    let lone;
    for (let i = 0; i < 10 && !(lone && lone.status === 429); i++) lone = await rpc(bridge.mcpUrl, call(10 + i), a);
    assert.equal(lone.status, 429);
    assert.equal(lone.headers.get('retry-after'), '1');
    assert.equal(lone.json.error.code, -32029);
    assert.match(lone.json.error.message, REFUSAL);
    // another client (its own session and connection) is not affected
    const b = await session(bridge.mcpUrl);
    const other = await rpc(bridge.mcpUrl, call(30), b);
    assert.equal(other.status, 200);
    assert.deepEqual(other.json.result.structuredContent, { computers: [] });
    // methods other than tools/call are not counted
    assert.equal((await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 31, method: 'tools/list' }, a)).status, 200);
    // the bucket refills: after the wait it named, the call runs
    await new Promise((r) => setTimeout(r, lone.json.error.data.retryAfterMs + 20));
    const again = await rpc(bridge.mcpUrl, call(32), a);
    assert.equal(again.status, 200);
    assert.deepEqual(again.json.result.structuredContent, { computers: [] });
    const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
    const refused = Number(/cc_tool_calls_total\{tool="list-computers",outcome="rate_limited"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(refused >= 3, `counted ${refused}`);
  }));

test('bug: REST tool calls had no rate limit: past MCP_CALL_RATE one token gets 429 rate_limited with Retry-After, another token is not affected; MCP and REST calls of one token count together', { timeout: 60_000 }, () =>
  withBridge({ MCP_CALL_RATE: '1', MCP_CALL_BURST: '3', MCP_AUTH_TOKEN: `${ALPHA},${BETA}` }, async (bridge) => {
    const base = bridge.mcpUrl.replace(/\/mcp$/, '');
    const rest = (token) => fetch(`${base}/tools/list-computers`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    // with tokens the token is the client: new connections (each fetch may use one) do not start afresh
    const first = await rpc(bridge.mcpUrl, call(1), { authorization: `Bearer ${ALPHA}` });
    assert.deepEqual(first.json.result.structuredContent, { computers: [] });
    let refused;
    for (let i = 0; i < 10 && !refused; i++) {
      const res = await rest(ALPHA);
      if (res.status === 429) refused = res;
      else assert.equal(res.status, 200, await res.text());
    }
    assert.ok(refused, 'refused within 10 calls at 1 a second with a burst of 3');
    assert.equal(refused.headers.get('retry-after'), '1');
    const body = await refused.json();
    assert.equal(body.error.code, 'rate_limited');
    assert.match(body.error.message, REFUSAL);
    // the other token has its own bucket
    const other = await rest(BETA);
    assert.equal(other.status, 200);
    // and alpha's MCP calls are refused too now (the same bucket)
    let mcp;
    for (let i = 0; i < 10 && !(mcp && mcp.status === 429); i++) mcp = await rpc(bridge.mcpUrl, call(2 + i), { authorization: `Bearer ${ALPHA}` });
    assert.equal(mcp.status, 429);
    assert.equal(mcp.json.error.code, -32029);
  }));

test('bug: stdio tool calls had no rate limit: the stdio host is one client, refused past MCP_CALL_RATE with -32029', { timeout: 60_000 }, () =>
  run({ MCP_CALL_RATE: '1', MCP_CALL_BURST: '3' }, async (bridge) => {
    bridge.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT });
    await bridge.answer(0);
    // six calls in one chunk: at 1 a second after a burst of 3, at least one is refused
    bridge.raw([1, 2, 3, 4, 5, 6].map((id) => `${JSON.stringify(call(id))}\n`).join(''));
    const answers = [];
    for (const id of [1, 2, 3, 4, 5, 6]) answers.push(await bridge.answer(id));
    const refused = answers.filter((a) => a.error);
    assert.ok(refused.length >= 1 && refused.length <= 3, JSON.stringify(answers));
    for (const { error } of refused) {
      assert.equal(error.code, -32029);
      assert.match(error.message, REFUSAL);
    }
    bridge.stdin.end();
    await bridge.exited;
  }));
