// notifications/cancelled racing its call over HTTP, one session: sent before the call, after its
// answer, and for an id the client uses again after cancelling it. Each step waits on what the
// computer received (its request, its cancel frame), never on time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, rpc, session, until, withBridge } from '../helpers.js';
import { initialize, openStream, VERSION } from './bridge-process.js';
import { writeConfig } from '../config/write.js';

const execCall = (id, code) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code, timeoutMs: 300000 } } });
const cancelNote = (requestId) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });

test('notifications/cancelled before its call, after its answer, and for an id used again after a cancel: only the call in flight it names is cancelled, each call answered once', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    // 'hold' is answered only when the test says so; anything else at once with its code
    const held = new Map();
    const computer = await linkComputer(bridge, {
      computerId: 1,
      onRequest: (f) => (f.params.code.startsWith('hold') ? new Promise((resolve) => held.set(f.params.code, resolve)) : { ok: true, result: { output: f.params.code, returns: [], truncated: false } }),
    });
    const s = await session(bridge.mcpUrl);
    const cancels = () => computer.received.filter((f) => f.type === 'cancel');

    // before: a notice for an id not in flight yet cancels nothing, later or now
    assert.equal((await rpc(bridge.mcpUrl, cancelNote('early'), s)).status, 202);
    assert.equal((await rpc(bridge.mcpUrl, execCall('early', 'first'), s)).json.result.structuredContent.output, 'first');

    // after: the notice for an answered call reaches nothing (no cancel frame)
    assert.equal((await rpc(bridge.mcpUrl, cancelNote('early'), s)).status, 202);

    // an id cancelled while in flight, then used again: the second call is not cancelled by the first notice
    const first = rpc(bridge.mcpUrl, execCall('again', 'hold-1'), s);
    const sent = await computer.next((f) => f.type === 'request' && f.params.code === 'hold-1');
    assert.equal((await rpc(bridge.mcpUrl, cancelNote('again'), s)).status, 202);
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: sent.id });
    // a JSON-only request of a cancelled call still gets its (cancelled) answer
    const cancelled = await first;
    assert.equal(cancelled.json.result.isError, true);
    assert.match(cancelled.json.result.content[0].text, /cancel/i);
    // the computer answers the cancelled request anyway: dropped, it is no longer in flight
    held.get('hold-1')({ ok: true, result: { output: 'late', returns: [], truncated: false } });
    const second = rpc(bridge.mcpUrl, execCall('again', 'hold-2'), s);
    await computer.next((f) => f.type === 'request' && f.params.code === 'hold-2');
    held.get('hold-2')({ ok: true, result: { output: 'second', returns: [], truncated: false } });
    const res = await second;
    assert.equal(res.json.result.structuredContent.output, 'second');
    assert.equal(cancels().length, 1);
    await until(() => bridge.dispatcher.activeCalls === 0);
    await computer.close();
  }),
);

test('DELETE of a session while its call and its GET /mcp stream are in flight: 405, the session goes on (the call is answered, the stream gets the next list_changed)', { timeout: 60_000 }, async (t) => {
  const file = writeConfig({ tools: [{ name: 'one', target: { computerId: 1 }, lua: 'return 1' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    let answer;
    const computer = await linkComputer(bridge, { computerId: 1, onRequest: () => new Promise((resolve) => (answer = resolve)) });
    const sessionId = await initialize(bridge.mcpUrl);
    const h = { 'mcp-protocol-version': VERSION, 'mcp-session-id': sessionId };
    const stream = await openStream(bridge.mcpUrl, sessionId);
    t.after(() => stream.close());
    assert.equal(stream.status, 200);
    const call = rpc(bridge.mcpUrl, execCall('held', 'return 2'), h);
    await computer.next((f) => f.type === 'request');
    const del = await fetch(bridge.mcpUrl, { method: 'DELETE', headers: h });
    assert.equal(del.status, 405);
    answer({ ok: true, result: { output: 'still here', returns: [], truncated: false } });
    assert.equal((await call).json.result.structuredContent.output, 'still here');
    assert.deepEqual(stream.events, []);
    writeConfig({ tools: [{ name: 'two', target: { computerId: 1 }, lua: 'return 2' }] }, file);
    assert.equal(bridge.hub.reload().changed, true);
    await until(() => stream.events.some((e) => e.json.method === 'notifications/tools/list_changed'));
    assert.equal(computer.received.some((f) => f.type === 'cancel'), false);
    await computer.close();
  });
});
