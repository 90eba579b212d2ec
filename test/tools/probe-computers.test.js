import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, pongText, rpc, session, withBridge } from '../helpers.js';

test('empty registry: "No computers connected." and an empty list', () =>
  withBridge({}, async (bridge) => {
    const result = await callTool(bridge, 'probe-computers');
    assert.deepEqual(result.content, [{ type: 'text', text: 'No computers connected.' }]);
    assert.deepEqual(result.structuredContent, { computers: [] });
    assert.equal(result.isError, undefined);
  }));

test('aggregates every pong in ascending computerId order, with structured content', () =>
  withBridge({}, async (bridge) => {
    const computers = [];
    for (const [id, label] of [[13, 'miner-1'], [12, 'base-turtle'], [2, null]]) {
      computers.push(await linkComputer(bridge, { computerId: id, computerLabel: label }));
    }
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, [pongText(2, null), pongText(12, 'base-turtle'), pongText(13, 'miner-1')].join('\n'));
    assert.deepEqual(
      result.structuredContent.computers.map(({ ms, ...rest }) => (assert.equal(typeof ms, 'number'), rest)),
      [
        { computerId: 2, label: null, status: 'pong', result: pongText(2, null) },
        { computerId: 12, label: 'base-turtle', status: 'pong', result: pongText(12, 'base-turtle') },
        { computerId: 13, label: 'miner-1', status: 'pong', result: pongText(13, 'miner-1') },
      ],
    );
    // every computer got exactly one ping
    for (const c of computers) assert.equal(c.received.filter((f) => f.type === 'request' && f.method === 'ping').length, 1);
    await Promise.all(computers.map((c) => c.close()));
  }));

test('a silent computer gives a timeout line while the others answer', () =>
  withBridge({ CC_PROBE_TIMEOUT_MS: '150' }, async (bridge) => {
    const a = await linkComputer(bridge, { computerId: 1, computerLabel: 'a' });
    const silent = await linkComputer(bridge, { computerId: 14, computerLabel: 'farm-turtle', onRequest: () => null });
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, `${pongText(1, 'a')}\ntimeout from 14 (Label: farm-turtle)`);
    assert.equal(result.structuredContent.computers[1].status, 'timeout');
    await a.close();
    await silent.close();
  }));

test('a link dropping mid-probe gives a disconnected line at once', () =>
  withBridge({ CC_PROBE_TIMEOUT_MS: '60000' }, async (bridge) => {
    const dropping = await linkComputer(bridge, {
      computerId: 3,
      computerLabel: 'flaky',
      onRequest: () => {
        dropping.ws.terminate();
        return null;
      },
    });
    const b = await linkComputer(bridge, { computerId: 4 });
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, `disconnected from 3 (Label: flaky)\n${pongText(4, null)}`);
    assert.equal(result.structuredContent.computers[0].status, 'disconnected');
    await b.close();
  }));

test('ok:false gives an error line with the computer\'s message; a non-string result is shown as JSON', () =>
  withBridge({}, async (bridge) => {
    const failing = await linkComputer(bridge, { computerId: 5, computerLabel: 'x', onRequest: () => ({ ok: false, error: 'busy' }) });
    const odd = await linkComputer(bridge, { computerId: 6, onRequest: () => ({ ok: true, result: { pong: true } }) });
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, 'error from 5 (Label: x): busy\n{"pong":true}');
    assert.deepEqual(
      result.structuredContent.computers.map((c) => [c.status, c.error ?? c.result]),
      [['error', 'busy'], ['pong', '{"pong":true}']],
    );
    await failing.close();
    await odd.close();
  }));

test('probe-computers rejects arguments with an isError result', () =>
  withBridge({}, async (bridge) => {
    const result = await callTool(bridge, 'probe-computers', { all: true });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /unknown argument "all"; this tool takes no arguments/);
  }));

test('a client cancelling a probe ends it with disconnected lines (nothing waits for the timeout)', () =>
  withBridge({ CC_PROBE_TIMEOUT_MS: '60000' }, async (bridge) => {
    const silent = await linkComputer(bridge, { computerId: 7, onRequest: () => null });
    const s = await session(bridge.mcpUrl);
    const call = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'probe-1', method: 'tools/call', params: { name: 'probe-computers' } }, s);
    await silent.next((f) => f.type === 'request');
    const cancel = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'probe-1' } }, s);
    assert.equal(cancel.status, 202);
    const { json } = await call;
    assert.equal(json.result.content[0].text, 'disconnected from 7 (Label: null)');
    await silent.close();
  }));
