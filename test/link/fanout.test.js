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

// The fan-out finds its requests still in flight through its links at a timeout or abort (it keeps no
// list of them, so an answered request's slot is garbage at once): it must end exactly its own,
// also on a link that holds several requests (another fan-out's, a single request).
test("a fan-out's timeout and abort end only its own requests in flight, in order, with cancel frames for its own ids only", () =>
  withBridge({}, async (bridge) => {
    const computers = [];
    for (let computerId = 1; computerId <= 3; computerId++) computers.push(await linkComputer(bridge, { computerId, onRequest: () => null }));
    const links = bridge.links.list();
    const requestIds = (c) => c.received.filter((f) => f.type === 'request').map((f) => f.id);
    const cancelIds = (c) => c.received.filter((f) => f.type === 'cancel').map((f) => f.id);
    const single = new AbortController();
    const one = bridge.links.request(links[0], 'ping', undefined, { timeoutMs: 60_000, signal: single.signal });
    await until(() => requestIds(computers[0]).length === 1);
    const abortA = new AbortController();
    const a = bridge.links.requestAll(links, 'ping', undefined, { timeoutMs: 60_000, signal: abortA.signal });
    await until(() => computers.every((c) => requestIds(c).length === (c === computers[0] ? 2 : 1)));
    const idsA = computers.map((c) => requestIds(c).at(-1));
    const b = bridge.links.requestAll(links, 'ping', undefined, { timeoutMs: 200, cancelOnTimeout: true });
    await until(() => computers.every((c) => requestIds(c).length === (c === computers[0] ? 3 : 2)));
    const idsB = computers.map((c) => requestIds(c).at(-1));
    assert.deepEqual(links.map((l) => l.pendingCount), [3, 2, 2]);

    // B times out: its own three end, each computer told to cancel B's id only
    assert.deepEqual((await b).map((o) => o.status), ['timeout', 'timeout', 'timeout']);
    assert.deepEqual(links.map((l) => l.pendingCount), [2, 1, 1]);
    await until(() => computers.every((c) => cancelIds(c).length === 1));
    assert.deepEqual(computers.map((c) => cancelIds(c)), idsB.map((id) => [id]));

    // A is aborted: its own three end cancelled, with cancel frames for A's ids; the single request stays
    abortA.abort();
    assert.deepEqual((await a).map((o) => o.status), ['cancelled', 'cancelled', 'cancelled']);
    assert.deepEqual(links.map((l) => l.pendingCount), [1, 0, 0]);
    await until(() => computers.every((c) => cancelIds(c).length === 2));
    assert.deepEqual(computers.map((c) => cancelIds(c)[1]), idsA);
    assert.ok(links[0].pendingRequest(requestIds(computers[0])[0]));

    single.abort();
    assert.equal((await one).status, 'cancelled');
    assert.equal(links[0].pendingCount, 0);
    for (const c of computers) await c.close();
  }));
