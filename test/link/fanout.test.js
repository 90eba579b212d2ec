import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, pongText, withBridge } from '../helpers.js';

test('a fan-out writes each computer its request at once (not corked to the end of the turn), counts it, and still matches answers per link', () =>
  withBridge({}, async (bridge) => {
    const computers = [];
    for (const computerId of [3, 4, 5]) computers.push(await linkComputer(bridge, { computerId }));
    const links = bridge.links.list();
    const before = bridge.metrics.framesOut;
    const all = bridge.links.requestAll(links, 'ping', undefined, { timeoutMs: 30_000 });
    // still in the turn that sent them: no link socket is corked, so each request is already written
    assert.deepEqual(links.map((l) => l.socket.raw.writableCorked), [0, 0, 0]);
    assert.equal(bridge.metrics.framesOut, before + 3);
    assert.deepEqual((await all).map((o) => o.result), [pongText(3, null), pongText(4, null), pongText(5, null)]);
    const ids = computers.map((c) => c.received.filter((f) => f.type === 'request').map((f) => f.id));
    assert.deepEqual(ids.map((x) => x.length), [1, 1, 1]);
    assert.equal(new Set(ids.flat()).size, 3);
    for (const c of computers) await c.close();
  }));
