// Admission bookkeeping with a hand-driven clock: caps, the hello bucket, release at every stage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admission, isRefusal } from '../../dist/link/admission.js';

const LIMITS = { maxLinks: 3, maxLinksPerAddress: 2, maxPendingHellos: 4, maxPendingHellosPerAddress: 3, helloRate: 2 };

function books(limits = {}) {
  let now = 0;
  const a = new Admission({ ...LIMITS, ...limits }, () => now);
  return { a, tick: (ms) => (now += ms) };
}

test('pending caps: total and per address; a refusal counts nothing', () => {
  const { a } = books();
  const mine = [1, 2, 3].map(() => a.open('A'));
  assert.ok(mine.every((t) => !isRefusal(t)));
  const fourth = a.open('A');
  assert.equal(fourth.reason, 'pending_per_address');
  assert.equal(a.pending, 3);
  assert.ok(!isRefusal(a.open('B')));
  assert.equal(a.open('C').reason, 'pending');
  a.close(mine[0]);
  a.close(mine[0]); // twice is harmless
  assert.equal(a.pending, 3);
  assert.ok(!isRefusal(a.open('C')));
});

test('links: total cap, per-address cap, replacement does not count twice', () => {
  const { a, tick } = books({ helloRate: 100 });
  const t = (addr) => a.open(addr);
  const a1 = t('A');
  const a2 = t('A');
  assert.equal(a.hello(a1, 0, null), null);
  assert.equal(a.hello(a2, 1, null), null);
  assert.equal(a.linkedFrom('A'), 2);
  assert.equal(a.pending, 0);
  const a3 = t('A');
  assert.equal(a.hello(a3, 2, null).reason, 'links_per_address');
  assert.equal(a.hello(a3, 2, 'A'), null, 'replacing one of its own links');
  tick(1000);
  const b1 = t('B');
  assert.equal(a.hello(b1, 3, null).reason, 'links');
  assert.equal(a.hello(b1, 3, 'A'), null, 'a replacement does not add a link');
  assert.equal(a.hello(b1, 3, null), null, 'a ticket that is no longer pending is not judged again');
  a.close(a1);
  assert.equal(a.linkedFrom('A'), 2);
  a.close(a2);
  a.close(a3);
  assert.equal(a.linkedFrom('A'), 0);
});

test('the hello bucket: a burst of twice the rate, then the rate per second', () => {
  const { a, tick } = books({ maxPendingHellos: 100, maxPendingHellosPerAddress: 100, maxLinks: 100, maxLinksPerAddress: 100 });
  const results = Array.from({ length: 6 }, () => a.hello(a.open('A'), 0, null));
  assert.deepEqual(results.map((r) => r?.reason ?? 'ok'), ['ok', 'ok', 'ok', 'ok', 'hello_rate', 'hello_rate']);
  assert.equal(a.hello(a.open('B'), 0, null), null, 'other addresses have their own bucket');
  tick(500);
  assert.equal(a.hello(a.open('A'), 0, null), null, 'one hello refilled after 1/rate s');
  assert.equal(a.hello(a.open('A'), 0, null).reason, 'hello_rate');
});

test('buckets of quiet addresses are forgotten, so a spray of addresses cannot grow the books', () => {
  const { a, tick } = books({ maxPendingHellos: 1e6, maxPendingHellosPerAddress: 1e6, maxLinks: 1e6, maxLinksPerAddress: 1e6 });
  for (let i = 0; i < 5000; i++) {
    const ticket = a.open(`10.0.${i >> 8}.${i & 255}`);
    a.hello(ticket, 0, null);
    a.close(ticket);
    tick(10);
  }
  assert.ok(a.tracked <= 1024 + 1, `tracked ${a.tracked}`);
});

test('bookkeeping per address is dropped once its last socket is gone: a flood of addresses leaves nothing behind', () => {
  const { a } = books({ maxPendingHellos: 1000, maxLinks: 1000, helloRate: 1000 });
  const tickets = [];
  for (let i = 0; i < 100; i++) {
    const pending = a.open(`10.0.0.${i}`);
    const linked = a.open(`10.0.0.${i}`);
    assert.equal(a.hello(linked, i, null), null);
    tickets.push(pending, linked);
  }
  for (const ticket of tickets) a.close(ticket);
  assert.equal(a.pending, 0);
  assert.equal(a.linkedFrom('10.0.0.7'), 0);
  // no observable but the maps themselves: an entry kept at 0 per address would grow without bound
  assert.equal(a.pendingBy.size, 0);
  assert.equal(a.linkedBy.size, 0);
});

test('closing a linked socket twice counts it once: the address keeps its other link', () => {
  const { a } = books();
  const [x, y] = [a.open('A'), a.open('A')];
  assert.equal(a.hello(x, 0, null), null);
  assert.equal(a.hello(y, 1, null), null);
  a.close(x);
  a.close(x);
  assert.equal(a.linkedFrom('A'), 1, 'y is still linked');
  const z = a.open('A');
  assert.equal(a.hello(z, 1, null), null);
  assert.equal(a.hello(a.open('A'), 2, null).reason, 'links_per_address', 'y and z are two links');
});

test('the hello bucket never holds more than its burst, however long an address was quiet, and a part of a hello is not one', () => {
  const { a, tick } = books({ maxPendingHellos: 100, maxPendingHellosPerAddress: 100, maxLinks: 100, maxLinksPerAddress: 100 });
  const hello = () => a.hello(a.open('A'), 0, null)?.reason ?? 'ok';
  assert.equal(hello(), 'ok');
  tick(3_600_000); // an hour quiet: still a burst of 4 (twice the rate of 2/s)
  assert.deepEqual(Array.from({ length: 6 }, hello), ['ok', 'ok', 'ok', 'ok', 'hello_rate', 'hello_rate']);
  tick(250); // half a hello refilled
  assert.equal(hello(), 'hello_rate');
  tick(250);
  assert.equal(hello(), 'ok');
  assert.equal(hello(), 'hello_rate');
});

test('the sweep: it runs when 1024 addresses have a bucket, and forgets one that refilled to its burst exactly', () => {
  const { a, tick } = books({ maxPendingHellos: 1e6, maxPendingHellosPerAddress: 1e6, maxLinks: 1e6, maxLinksPerAddress: 1e6, helloRate: 1 });
  for (let i = 0; i < 1024; i++) assert.equal(a.hello(a.open(`10.1.${i >> 8}.${i & 255}`), 0, null), null);
  assert.equal(a.tracked, 1024);
  tick(1000); // each took one hello of a burst of 2 at 1/s: refilled to exactly 2 now
  a.hello(a.open('10.2.0.0'), 0, null);
  assert.equal(a.tracked, 1, 'the 1024 refilled buckets were forgotten, the newcomer has its own');
});
