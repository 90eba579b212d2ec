// Issue 12, section 7: the call limits hold under concurrency. Bursts far over each cap arrive at
// once; exactly the cap gets through to the computer, every other call gets its own clear error
// with its own id, another computer is served meanwhile, and everything drains to zero afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, rpc, until, withBridge } from '../helpers.js';

const execCall = (id, computerId) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId, code: 'sleep(99)', timeoutMs: 60_000 } } });
const requestsTo = (computer) => computer.received.filter((f) => f.type === 'request').length;

test('MCP_MAX_CONCURRENT_CALLS holds under a burst of 40 simultaneous calls: 10 run, 30 get 503 busy with their own ids', () =>
  withBridge({ MCP_MAX_CONCURRENT_CALLS: '10' }, async (bridge) => {
    const silent = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const answers = Array.from({ length: 40 }, (_, i) => rpc(bridge.mcpUrl, execCall(`c${i}`, 1)));
    await until(() => bridge.metrics.callCount('exec-lua', 'busy') === 30);
    await until(() => requestsTo(silent) === 10);
    assert.equal(bridge.metrics.callsInFlight, 10);
    // the computer leaves: the 10 running calls end with that, the refused ones were answered at once
    await silent.close();
    const settled = await Promise.all(answers);
    const busy = settled.filter((r) => r.status === 503);
    assert.equal(busy.length, 30);
    for (const r of busy) {
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(r.json.error.code, -32003);
    }
    assert.deepEqual(settled.map((r) => r.json.id), Array.from({ length: 40 }, (_, i) => `c${i}`), 'each answer carries its own id');
    assert.equal(settled.filter((r) => r.status === 200).length, 10);
    assert.equal(requestsTo(silent), 10, 'no refused call reached the computer');
    await until(() => bridge.metrics.callsInFlight === 0 && bridge.links.pendingCount() === 0 && bridge.dispatcher.activeCalls === 0);
  }));

test('CC_MAX_REQUESTS_PER_COMPUTER holds under a burst of 40 simultaneous calls to one computer; another computer is served meanwhile', () =>
  withBridge({ CC_MAX_REQUESTS_PER_COMPUTER: '5' }, async (bridge) => {
    const silent = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const other = await linkComputer(bridge, { computerId: 2, onRequest: () => ({ ok: true, result: { output: 'fine\n', returns: [] } }) });
    let answered = 0;
    const answers = Array.from({ length: 40 }, (_, i) => rpc(bridge.mcpUrl, execCall(i, 1)).finally(() => answered++));
    // the refused ones are answered at once, without waiting for the 5 that hang
    await until(() => answered === 35);
    assert.equal(requestsTo(silent), 5);
    assert.equal(bridge.links.get(1).pendingCount, 5);
    // the other computer is neither refused nor slowed to its timeout
    const fine = await callTool(bridge, 'exec-lua', { computerId: 2, code: 'return 1' });
    assert.equal(fine.structuredContent.output, 'fine\n');
    await silent.close();
    const settled = await Promise.all(answers);
    const refused = settled.filter((r) => /already has 5 requests in flight \(CC_MAX_REQUESTS_PER_COMPUTER\)/.test(r.json.result?.content?.[0]?.text ?? ''));
    assert.equal(refused.length, 35);
    assert.deepEqual(settled.map((r) => r.json.id), Array.from({ length: 40 }, (_, i) => i));
    assert.equal(requestsTo(silent), 5, 'no refused call reached the computer');
    await other.close();
    await until(() => bridge.metrics.callsInFlight === 0 && bridge.links.pendingCount() === 0);
  }));
