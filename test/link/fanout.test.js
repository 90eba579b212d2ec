import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, pongText, until, withBridge } from '../helpers.js';

// Bug (f859414 -> this): writing every fan-out's frames at once cost concurrent small fan-outs their
// shared writes (N=100 C=10 ~13% more CPU per call); only a fan-out over more than UNCORKED_FANOUT
// computers skips the turn's cork, so its first request is not held back while the rest are built.
test('a small fan-out is corked to the end of the turn; one over more than UNCORKED_FANOUT computers writes each request at once; answers match per link', () =>
  withBridge({ CC_HELLO_RATE: '100000' }, async (bridge) => {
    const { UNCORKED_FANOUT } = await import('../../dist/link/fanout.js');
    const computers = [];
    for (let computerId = 1; computerId <= UNCORKED_FANOUT + 1; computerId++) computers.push(await linkComputer(bridge, { computerId }));
    const links = bridge.links.list();
    const few = links.slice(0, 3);
    let before = bridge.metrics.framesOut;
    let all = bridge.links.requestAll(few, 'ping', undefined, { timeoutMs: 30_000 });
    // still in the turn that sent them: corked, counted
    assert.deepEqual(few.map((l) => l.socket.raw.writableCorked), [1, 1, 1]);
    assert.equal(bridge.metrics.framesOut, before + 3);
    assert.deepEqual((await all).map((o) => o.result), [pongText(1, null), pongText(2, null), pongText(3, null)]);

    before = bridge.metrics.framesOut;
    all = bridge.links.requestAll(links, 'ping', undefined, { timeoutMs: 30_000 });
    assert.equal(links.filter((l) => l.socket.raw.writableCorked !== 0).length, 0);
    assert.equal(bridge.metrics.framesOut, before + links.length);
    const outcomes = await all;
    assert.deepEqual(outcomes.map((o) => o.result), links.map((l) => pongText(l.computerId, null)));
    const ids = computers.flatMap((c) => c.received.filter((f) => f.type === 'request').map((f) => f.id));
    assert.equal(ids.length, 3 * 2 + (links.length - 3));
    assert.equal(new Set(ids).size, ids.length);
    for (const c of computers) await c.close();
  }));

test("a fan-out's ids are 128 random bits each (22 base64url characters), distinct, and an answer with another link's id is dropped", () =>
  withBridge({}, async (bridge) => {
    let id1 = null;
    let id2 = null;
    const c1 = await linkComputer(bridge, { computerId: 1, onRequest: (f) => ((id1 = f.id), null) });
    // computer 2 first answers computer 1's request (forged), then its own
    const c2 = await linkComputer(bridge, {
      computerId: 2,
      onRequest: async (f) => {
        id2 = f.id;
        await until(() => id1);
        c2.send({ type: 'response', id: id1, ok: true, result: 'forged' });
        return { ok: true, result: 'own' };
      },
    });
    const controller = new AbortController();
    const all = bridge.links.requestAll(bridge.links.list(), 'ping', undefined, { timeoutMs: 60_000, signal: controller.signal });
    // the forged answer came first on the same socket: once computer 2's own request is settled, it was handled
    await until(() => id2 !== null && bridge.links.get(2).pendingCount === 0);
    assert.equal(bridge.links.get(1).pendingCount, 1);
    controller.abort();
    const outcomes = await all;
    assert.deepEqual(outcomes.map((o) => o.status), ['cancelled', 'ok']);
    assert.equal(outcomes[1].result, 'own');
    for (const id of [id1, id2]) assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    assert.notEqual(id1, id2);
    assert.ok(bridge.logs.some((l) => l.includes(`response "${id1}" matches no request in flight on this link`)));
    await c1.close();
    await c2.close();
  }));

test('frames written whole by sendNow (ASCII under 64 KiB, 7- and 16-bit lengths) and by ws (longer, non-ASCII) arrive intact and in order', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 6, onRequest: () => ({ ok: true, result: 'ok' }) });
    const link = bridge.links.get(6);
    const sizes = [0, 125 - 60, 126, 200, 0xffff - 80, 0xffff, 70_000];
    for (const n of sizes) {
      const outcomes = await bridge.links.requestAll([link], 'ping', { pad: 'x'.repeat(n) }, { timeoutMs: 30_000 });
      assert.equal(outcomes[0].status, 'ok');
    }
    const requests = computer.received.filter((f) => f.type === 'request');
    assert.deepEqual(requests.map((f) => f.params.pad.length), sizes);
    // a text that is not ASCII goes through ws (a probe's never is: asciiJson escapes it)
    link.socket.sendNow(JSON.stringify({ type: 'note', text: 'Grüße ✓', n: 1 }));
    link.socket.sendNow(JSON.stringify({ type: 'note', text: 'plain', n: 2 }));
    const notes = [await computer.next((f) => f.type === 'note' && f.n === 1), await computer.next((f) => f.type === 'note' && f.n === 2)];
    assert.deepEqual(notes.map((f) => f.text), ['Grüße ✓', 'plain']);
    assert.deepEqual(computer.received.filter((f) => f.type === 'note').map((f) => f.n), [1, 2]);
    await computer.close();
  }));

// The ids come from a pool of random bytes refilled every 512 ids: across refills no id repeats.
test('fan-out ids stay distinct and well-formed across refills of the random pool (more than 512 ids)', () =>
  withBridge({}, async (bridge) => {
    const computers = [];
    for (const computerId of [6, 7, 8]) computers.push(await linkComputer(bridge, { computerId }));
    for (let round = 0; round < 200; round++) {
      const outcomes = await bridge.links.requestAll(bridge.links.list(), 'ping', undefined, { timeoutMs: 30_000 });
      assert.deepEqual(outcomes.map((o) => o.status), ['ok', 'ok', 'ok']);
    }
    const ids = computers.flatMap((c) => c.received.filter((f) => f.type === 'request').map((f) => f.id));
    assert.equal(ids.length, 600);
    assert.equal(new Set(ids).size, 600);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    for (const c of computers) await c.close();
  }));
