// Trust on first use of computer keys (CC_LINK_PIN) against a real bridge; fake computers are real ws
// clients on port 0. The bug: without CC_LINK_TOKEN (or with one every computer shares) any peer that
// reached the link port could say hello as any computer id, replace the real computer's link and be
// handed the code and arguments meant for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeComputer, callTool, rpc, withBridge } from '../helpers.js';
import { KeyPins } from '../../dist/link/pins.js';
import { keyDigest } from '../../dist/link/key-digest.js';
import { createHash } from 'node:crypto';
import { parseComputerFrame } from '../../dist/link/frames.js';
import { formatPins, parseDistrusted, parsePins } from '../../dist/link/pins-file.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const OTHER = 'impostorKey_0123456789abcdefABCD';
const hello = (computerId, key) => ({ type: 'hello', computerId, ...(key === undefined ? {} : { key }) });
const answering = (computerId, output) =>
  new FakeComputer(undefined, { computerId, onRequest: () => ({ ok: true, result: { ok: true, output, returns: [] } }) });

async function linked(bridge, computerId, key, output) {
  const c = answering(computerId, output);
  c.url = bridge.linkUrl;
  const first = await c.link(hello(computerId, key));
  return { c, first };
}

async function execOutput(bridge, computerId) {
  const result = await callTool(bridge, 'exec-lua', { computerId, code: 'return 1' });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  return result.structuredContent.output;
}

test('bug: an impostor with another key replaced a keyed computer (no CC_LINK_TOKEN): now refused key_mismatch, the real link stays and keeps answering', () =>
  withBridge({}, async (bridge) => {
    const { c: real, first } = await linked(bridge, 7, KEY, 'real\n');
    assert.equal(first.type, 'hello-ok');
    const { c: impostor, first: refused } = await linked(bridge, 7, OTHER, 'stolen\n');
    assert.equal(refused.type, 'hello-error');
    assert.equal(refused.code, 'key_mismatch');
    assert.match(refused.error, /computer id 7 is held by another key/);
    assert.match(refused.error, /resets the pin with: cc-mcp pin-reset 7 \(or POST \/pins\/7\/reset\)/);
    const closed = await impostor.closed;
    assert.equal(closed.code, 4409);
    assert.match(closed.reason, /^key_mismatch: this computer id is held by another key; the operator resets it with cc-mcp pin-reset <id>$/);
    assert.equal(real.ws.readyState, 1, 'the real link is left alone');
    assert.equal(await execOutput(bridge, 7), 'real\n');
    assert.deepEqual(impostor.received.map((f) => f.type), ['hello-error']);
    assert.equal(bridge.metrics.linksRefused.get('key_mismatch'), 1);
    assert.equal(bridge.metrics.linksReplaced, 0);
    const warning = bridge.logs.find((l) => /refused: another key than the one computer 7 is pinned to/.test(l));
    assert.ok(warning, bridge.logs.join('\n'));
    assert.match(warning, /link from 127\.0\.0\.1:\d+ \(computer 7\).*its link from 127\.0\.0\.1:\d+ is kept/);
    assert.ok(!bridge.logs.some((l) => l.includes(KEY) || l.includes(OTHER)), 'keys are never logged');
    const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
    assert.match(metrics, /cc_links_refused_total\{reason="key_mismatch"\} 1/);
    assert.match(metrics, /cc_link_pins 1/);
    await real.close();
  }));

test('bug: a keyless impostor replaced a computer that linked with a key: now refused key_mismatch, even after the real one went offline', () =>
  withBridge({}, async (bridge) => {
    const { c: real } = await linked(bridge, 8, KEY, 'real\n');
    const { c: impostor, first } = await linked(bridge, 8, undefined, 'stolen\n');
    assert.equal(first.code, 'key_mismatch');
    assert.match(first.error, /this hello carries no key/);
    assert.equal((await impostor.closed).code, 4409);
    assert.equal(await execOutput(bridge, 8), 'real\n');
    assert.ok(bridge.logs.some((l) => /refused: no key than the one computer 8 is pinned to/.test(l)));
    await real.close();
    // offline: the pin still holds, so the id cannot be taken while its computer is away
    const { c: later, first: again } = await linked(bridge, 8, OTHER, 'stolen\n');
    assert.equal(again.code, 'key_mismatch');
    assert.doesNotMatch(again.error, /is kept/);
    await later.closed;
    assert.equal(bridge.links.get(8), undefined);
    assert.equal(bridge.metrics.linksRefused.get('key_mismatch'), 2);
  }));

test('bug: with one CC_LINK_TOKEN shared by every computer, a token holder could take another computer\'s id: now refused key_mismatch', () =>
  withBridge({ CC_LINK_TOKEN: 'shared-token-0123456789abcdef' }, async (bridge) => {
    const token = 'shared-token-0123456789abcdef';
    const real = answering(13, 'real\n');
    real.url = bridge.linkUrl;
    assert.equal((await real.link({ ...hello(13, KEY), token })).type, 'hello-ok');
    const neighbour = answering(13, 'stolen\n');
    neighbour.url = bridge.linkUrl;
    const refused = await neighbour.link({ ...hello(13, OTHER), token });
    assert.equal(refused.code, 'key_mismatch');
    assert.equal((await neighbour.closed).code, 4409);
    assert.equal(await execOutput(bridge, 13), 'real\n');
    // the token is still checked first: a wrong token is unauthorized whatever the key
    const stranger = new FakeComputer(bridge.linkUrl, { computerId: 13 });
    assert.equal((await stranger.link({ ...hello(13, KEY), token: 'wrong-token-0123456789abcdef' })).code, 'unauthorized');
    await stranger.closed;
    await real.close();
  }));

test('the same key relinks (reboot, network drop) and replaces the old link as before', () =>
  withBridge({}, async (bridge) => {
    const { c: before } = await linked(bridge, 9, KEY, 'before\n');
    const { c: after, first } = await linked(bridge, 9, KEY, 'after\n');
    assert.equal(first.type, 'hello-ok');
    assert.equal((await before.closed).code, 4000);
    assert.equal(bridge.metrics.linksReplaced, 1);
    assert.equal(await execOutput(bridge, 9), 'after\n');
    await after.close();
    const { c: back, first: ok } = await linked(bridge, 9, KEY, 'back\n');
    assert.equal(ok.type, 'hello-ok', 'relinks after being offline');
    await back.close();
  }));

test('keyless hellos for ids never pinned behave as before: each replaces the last; a key then pins the id', () =>
  withBridge({}, async (bridge) => {
    const { c: a } = await linked(bridge, 10, undefined, 'a\n');
    const { c: b, first } = await linked(bridge, 10, undefined, 'b\n');
    assert.equal(first.type, 'hello-ok');
    assert.equal((await a.closed).code, 4000);
    const { c: keyed, first: ok } = await linked(bridge, 10, KEY, 'keyed\n');
    assert.equal(ok.type, 'hello-ok', 'a keyed hello takes over an unpinned id, as any hello did');
    await b.closed;
    const { c: c, first: refused } = await linked(bridge, 10, undefined, 'c\n');
    assert.equal(refused.code, 'key_mismatch');
    await c.closed;
    assert.equal(await execOutput(bridge, 10), 'keyed\n');
    assert.equal(bridge.metrics.linksRefused.get('key_mismatch'), 1);
    await keyed.close();
  }));

test('CC_LINK_PIN=off: keys are checked for form only and any hello replaces the link, as before', () =>
  withBridge({ CC_LINK_PIN: 'off' }, async (bridge) => {
    const { c: real } = await linked(bridge, 11, KEY, 'real\n');
    const { c: other, first } = await linked(bridge, 11, OTHER, 'other\n');
    assert.equal(first.type, 'hello-ok');
    assert.equal((await real.closed).code, 4000);
    const { c: keyless, first: ok } = await linked(bridge, 11, undefined, 'keyless\n');
    assert.equal(ok.type, 'hello-ok');
    await other.closed;
    assert.equal(bridge.metrics.linksRefused.get('key_mismatch'), 0);
    const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
    assert.doesNotMatch(metrics, /cc_link_pins/);
    const { first: bad } = await linked(bridge, 12, 'short', 'x\n');
    assert.equal(bad.code, 'invalid');
    await keyless.close();
  }));

test('CC_LINK_MAX_PINS: a keyed hello for a new id after the cap links unpinned, with a warning and a count', () =>
  withBridge({ CC_LINK_MAX_PINS: '1' }, async (bridge) => {
    const { c: first } = await linked(bridge, 20, KEY, 'a\n');
    const { c: second, first: ok } = await linked(bridge, 21, KEY, 'b\n');
    assert.equal(ok.type, 'hello-ok');
    assert.ok(bridge.logs.some((l) => /computer 21 linked without a pin: CC_LINK_MAX_PINS \(1\)/.test(l)));
    const { c: takeover, first: taken } = await linked(bridge, 21, OTHER, 'c\n');
    assert.equal(taken.type, 'hello-ok', 'unpinned: replaced as before');
    await second.closed;
    const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
    assert.match(metrics, /cc_link_pins 1\n/);
    assert.match(metrics, /cc_link_pins_full_total 2/);
    await first.close();
    await takeover.close();
  }));

test('a malformed hello key is refused invalid with a specific error that never echoes it', () =>
  withBridge({}, async (bridge) => {
    const cases = [
      [42, /hello\.key must be a string \(got a number\)/],
      ['abc', /hello\.key must be 16 to 128 characters long \(got 3\)/],
      ['x'.repeat(129), /hello\.key must be 16 to 128 characters long \(got 129\)/],
      ['0123456789abcdef 0123', /hello\.key may hold only the characters A-Z a-z 0-9 _ -/],
      ['0123456789abcdé0123', /may hold only/],
    ];
    for (const [key, error] of cases) {
      const c = new FakeComputer(bridge.linkUrl, { computerId: 30 });
      const first = await c.link(hello(30, key));
      assert.equal(first.code, 'invalid');
      assert.match(first.error, error);
      if (typeof key === 'string') assert.ok(!first.error.includes(key));
      assert.equal((await c.closed).code, 1008);
    }
    assert.equal(bridge.links.size, 0);
    const ok = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(ok.status, 200);
  }));

test('parseComputerFrame: key null or absent is no key; bounds are 16 and 128', () => {
  const parse = (key) => parseComputerFrame(JSON.stringify(hello(1, key)));
  assert.equal(parse(undefined).frame.key, null);
  assert.equal(parse(null).frame.key, null);
  assert.equal(parse('a'.repeat(16)).frame.key, 'a'.repeat(16));
  assert.equal(parse('Z_-9'.repeat(32)).frame.key, 'Z_-9'.repeat(32));
  assert.equal(parse('a'.repeat(15)).ok, false);
});

test('KeyPins: check and pin', () => {
  const pins = new KeyPins(2);
  assert.equal(pins.check(1, null), 'ok');
  assert.equal(pins.check(1, KEY), 'new');
  assert.equal(pins.pin(1, KEY), true);
  assert.equal(pins.check(1, KEY), 'ok');
  assert.equal(pins.check(1, OTHER), 'mismatch');
  assert.equal(pins.check(1, null), 'missing');
  assert.equal(pins.pin(2, OTHER), true);
  // full: the oldest unconfirmed pin whose id is not linked makes room
  assert.equal(pins.pin(3, OTHER), true);
  assert.equal(pins.lastEvicted, 1);
  assert.deepEqual(pins.unconfirmedIds(), [2, 3]);
  // every id linked (for less than confirmMs): nothing to evict, the new id is not pinned
  let now = 0;
  const linked = new KeyPins(2, { confirmMs: 1000, now: () => now });
  linked.linkedSince = () => 0;
  assert.equal(linked.pin(1, KEY), true);
  assert.equal(linked.pin(2, KEY), true);
  now = 999;
  assert.equal(linked.pin(3, OTHER), false);
  assert.equal(linked.size, 2);
  assert.equal(linked.full, 1);
  // a link up confirmMs confirms its pin (found by the full table's scan): confirmed pins stay
  now = 1000;
  assert.equal(linked.pin(3, OTHER), false);
  assert.equal(linked.unconfirmedCount, 0);
  // links that ended add up: 600 + 400 ms confirm
  const added = new KeyPins(5, { confirmMs: 1000, now: () => now });
  added.pin(7, KEY);
  now = 1600;
  added.linkEnded(7, 1000);
  assert.equal(added.unconfirmedCount, 1);
  now = 2000;
  added.linkEnded(7, 1600);
  assert.equal(added.unconfirmedCount, 0);
  // strict's pins come through the operator: never unconfirmed
  const strict = new KeyPins(5, { strict: true });
  strict.reset(4);
  strict.pin(4, KEY);
  assert.equal(strict.unconfirmedCount, 0);
});

test('KeyPins: hex SHA-256 digests, entries in id order, onChange on a pin and a reset (not strict)', () => {
  const pins = new KeyPins(10);
  let changes = 0;
  pins.onChange = () => changes++;
  assert.equal(keyDigest(KEY), createHash('sha256').update(KEY).digest('hex'));
  pins.load([[9, keyDigest(OTHER)]]);
  assert.equal(pins.check(9, OTHER), 'ok');
  assert.equal(pins.check(9, KEY), 'mismatch');
  pins.pin(4, KEY);
  assert.equal(changes, 1);
  assert.deepEqual(pins.entries(), [
    [4, keyDigest(KEY)],
    [9, keyDigest(OTHER)],
  ]);
  assert.deepEqual(pins.reset(9), { wasPinned: true, distrusting: true, lifted: false, openUntil: null, saved: null });
  assert.equal(changes, 2);
  assert.deepEqual(pins.reset(9), { wasPinned: false, distrusting: true, lifted: false, openUntil: null, saved: null });
  assert.equal(changes, 2, 'nothing changed, nothing to write');
  assert.equal(pins.has(9), false);
  assert.equal(pins.check(9, KEY), 'new', 'the next keyed hello pins it again');
  assert.equal(pins.check(9, OTHER), 'distrusted', 'but not with the key the reset forgot');
});

test('KeyPins strict: only pinned ids, or ids the operator opened (until enrollMs passes), link; an open id holds its place under the cap', () => {
  let now = 1000;
  const pins = new KeyPins(2, { strict: true, enrollMs: 500, now: () => now });
  assert.equal(pins.check(1, KEY), 'not_enrolled');
  assert.equal(pins.check(1, null), 'not_enrolled');
  assert.deepEqual(pins.reset(1), { wasPinned: false, distrusting: false, lifted: false, openUntil: 1500, saved: null });
  assert.equal(pins.opened, 1);
  assert.equal(pins.check(1, null), 'not_enrolled', 'enrolling takes a key');
  assert.equal(pins.check(1, KEY), 'new');
  assert.equal(pins.pin(1, KEY), true);
  assert.equal(pins.opened, 0);
  assert.equal(pins.check(1, KEY), 'ok');
  assert.deepEqual(pins.reset(2), { wasPinned: false, distrusting: false, lifted: false, openUntil: 1500, saved: null });
  assert.equal(pins.reset(3), 'full', 'one pin and one open id fill a cap of 2');
  assert.deepEqual(pins.reset(2), { wasPinned: false, distrusting: false, lifted: false, openUntil: 1500, saved: null }, 'reopening an open id takes no new place');
  now = 1500;
  assert.equal(pins.isOpen(2), false);
  assert.equal(pins.check(2, KEY), 'not_enrolled', 'the window passed');
  assert.deepEqual(pins.reset(1), { wasPinned: true, distrusting: true, lifted: false, openUntil: 2000, saved: null });
  assert.equal(pins.check(1, KEY), 'distrusted', 'not with the key the reset forgot');
  assert.equal(pins.check(1, OTHER), 'new', 'a reset id takes the next keyed hello');
  assert.equal(pins.pin(1, OTHER), true);
  assert.equal(pins.check(1, KEY), 'mismatch');
});

test('KeyPins: a reset distrusts the key it forgot until another key pins the id; allowOldKey lifts it; at most max distrusted ids (then the reset is refused, nothing changed); the pins file keeps them as comment lines, a malformed one stops the start', () => {
  let changes = 0;
  const pins = new KeyPins(2);
  pins.onChange = () => changes++;
  pins.load([[1, keyDigest(KEY)], [2, keyDigest(KEY)], [3, keyDigest(KEY)]]);
  assert.equal(pins.reset(1).distrusting, true);
  assert.equal(pins.check(1, KEY), 'distrusted');
  assert.equal(pins.check(1, null), 'ok', 'a keyless hello (not strict) links unpinned, as for any id not pinned');
  assert.equal(pins.reset(2).distrusting, true);
  assert.deepEqual(pins.distrusted(), [[1, keyDigest(KEY)], [2, keyDigest(KEY)]]);
  const before = changes;
  assert.equal(pins.reset(3), 'distrust_full', 'max (2) ids distrust a key already');
  assert.equal(pins.has(3), true, 'nothing changed');
  assert.equal(changes, before);
  assert.deepEqual(pins.reset(3, { allowOldKey: true }), { wasPinned: true, distrusting: false, lifted: false, openUntil: null, saved: null }, 'allowed: reset without a distrust');
  assert.equal(pins.check(3, KEY), 'new');
  // a new key pins id 1: its distrust is gone
  assert.equal(pins.pin(1, OTHER), true);
  assert.equal(pins.distrusts(1), false);
  assert.equal(pins.check(1, KEY), 'mismatch');
  // the operator lifts id 2's distrust without a pin
  assert.deepEqual(pins.reset(2, { allowOldKey: true }), { wasPinned: false, distrusting: false, lifted: true, openUntil: null, saved: null });
  assert.equal(pins.check(2, KEY), 'new');
  // in the pins file: comment lines an older bridge skips; a distrust for an id pinned since is left out at load
  const text = formatPins([[5, keyDigest(KEY)]], [], [[5, keyDigest(OTHER)], [6, keyDigest(OTHER)]]);
  assert.match(text, new RegExp(`^# distrusted 6 ${keyDigest(OTHER)}$`, 'm'));
  assert.deepEqual([...parsePins(text, 'f', 10)], [[5, keyDigest(KEY)]]);
  const loaded = new KeyPins(10);
  loaded.load(parsePins(text, 'f', 10));
  assert.equal(loaded.loadDistrusted(parseDistrusted(text, 'f', 10)), 1);
  assert.equal(loaded.check(6, OTHER), 'distrusted');
  assert.equal(loaded.check(5, KEY), 'ok');
  assert.throws(() => parseDistrusted('# distrusted 6 abc\n', 'f', 10), /CC_LINK_PINS_FILE f line 1: expected "# distrusted <computer id> <SHA-256 of 64 lowercase hex digits>"/);
  assert.throws(() => parseDistrusted(`# distrusted 6 ${keyDigest(KEY)}\n# distrusted 6 ${keyDigest(KEY)}\n`, 'f', 10), /line 2: computer id 6 is distrusted twice/);
  assert.throws(() => parseDistrusted(`# distrusted 6 ${keyDigest(KEY)}\n# distrusted 7 ${keyDigest(KEY)}\n`, 'f', 1), /line 2: more than CC_LINK_MAX_PINS \(1\) distrusted keys/);
  assert.equal(parseDistrusted('# distrustful remarks are comments\n', 'f', 10).size, 0);
});

test('KeyPins: a full table never evicts a pin whose write is still under way (its hello waits for it); once written, an unconfirmed, unlinked pin is evicted', async () => {
  const pins = new KeyPins(1);
  let release;
  const write = new Promise((resolve) => (release = resolve));
  pins.onChange = () => write;
  assert.equal(pins.check(1, KEY), 'new');
  assert.equal(pins.pin(1, KEY), true);
  assert.equal(pins.saving(1), write, 'the hello of computer 1 waits for this write');
  // computer 1 is not linked yet (its hello waits): only the write keeps its pin
  assert.equal(pins.check(2, OTHER), 'new');
  assert.equal(pins.pin(2, OTHER), false);
  assert.equal(pins.lastEvicted, null);
  assert.equal(pins.check(1, KEY), 'ok', 'the waiting hello still finds its pin');
  pins.onChange = null;
  release();
  await write;
  assert.equal(pins.saving(1), null);
  assert.equal(pins.pin(2, OTHER), true);
  assert.equal(pins.lastEvicted, 1);
});

test('KeyPins: an earlier write ending does not clear the wait of a later pin of the same id (pinned again after a reset)', async () => {
  const pins = new KeyPins(10);
  const writes = [];
  pins.onChange = () => {
    let release;
    const write = new Promise((resolve) => (release = resolve));
    writes.push({ write, release });
    return write;
  };
  assert.equal(pins.pin(1, KEY), true);
  const first = pins.saving(1);
  pins.reset(1);
  assert.equal(pins.check(1, OTHER), 'new');
  assert.equal(pins.pin(1, OTHER), true);
  const second = pins.saving(1);
  assert.notEqual(second, first);
  writes[0].release();
  await first;
  assert.equal(pins.saving(1), second, 'the new pin is still being written');
  for (const w of writes) w.release();
  await second;
  assert.equal(pins.saving(1), null);
});

test('KeyPins: an opening ends exactly at its end time, in every view of it; distrusted keys read from the file stop at max', () => {
  let now = 1000;
  const strict = new KeyPins(4, { strict: true, enrollMs: 500, now: () => now });
  const reset = strict.reset(5);
  assert.equal(reset.openUntil, 1500);
  now = 1499;
  assert.equal(strict.isOpen(5), true);
  assert.deepEqual(strict.openings(), [[5, 1500]]);
  now = 1500;
  assert.deepEqual(strict.openings(), []);
  assert.equal(strict.opened, 0);
  assert.equal(strict.isOpen(5), false);
  const pins = new KeyPins(2);
  const digest = keyDigest(KEY);
  assert.equal(pins.loadDistrusted([[1, digest], [2, digest], [3, digest]]), 2);
  assert.equal(pins.distrusts(2), true);
  assert.equal(pins.distrusts(3), false);
});

test('KeyPins bookkeeping edges: replace() forgets the old distrusted and unconfirmed ids; unconfirmed marks only for pinned ids and never in strict; a link that ended "before" it began adds no time; distrusted keys listed in id order; a digest in capitals is refused in the file', () => {
  let now = 1_000_000;
  const pins = new KeyPins(10, { confirmMs: 1000, now: () => now });
  assert.equal(pins.pin(1, KEY), true);
  assert.equal(pins.pin(2, KEY), true);
  pins.reset(2); // its key distrusted
  assert.equal(pins.distrustedCount, 1);
  assert.equal(pins.unconfirmedCount, 1, 'pin 1 is unconfirmed');
  pins.replace([[7, keyDigest(OTHER)]], [], [7]);
  assert.equal(pins.distrustedCount, 0, 'the distrusted key of the old table is gone');
  assert.deepEqual(pins.unconfirmedIds(), [7], 'only the new table\'s mark');
  assert.equal(pins.loadUnconfirmed([99]), 0, 'no mark for an id that is not pinned');
  assert.deepEqual(pins.unconfirmedIds(), [7]);
  // the clock went back: a link "ended" before it began counts 0, not minus 5 s
  pins.linkEnded(7, now + 5000);
  pins.linkEnded(7, now - 1000);
  assert.equal(pins.unconfirmedCount, 0, '1000 ms up in all: confirmed');
  // distrusted keys in id order, as the file lists them
  pins.load([[9, keyDigest(KEY)], [3, keyDigest(KEY)]]);
  pins.reset(9);
  pins.reset(3);
  assert.deepEqual(pins.distrusted().map(([id]) => id), [3, 9]);
  // strict keeps no unconfirmed marks (it never evicts)
  const strict = new KeyPins(10, { strict: true });
  strict.load([[4, keyDigest(KEY)]]);
  assert.equal(strict.loadUnconfirmed([4]), 0);
  assert.equal(strict.unconfirmedCount, 0);
  assert.throws(() => parsePins(`4 ${keyDigest(KEY).toUpperCase()}\n`, 'f', 10), /line 1: field 2 is not a SHA-256 of 64 lowercase hex digits/);
});

test('KeyPins reset and openings edges: lifting a distrusted key of an unpinned id is written; a reset drops the pin\'s unconfirmed mark; an opening read for an id pinned since is left out', () => {
  let writes = 0;
  const pins = new KeyPins(10);
  pins.onChange = () => (writes++, Promise.resolve());
  assert.equal(pins.loadDistrusted([[5, keyDigest(KEY)]]), 1);
  const lifted = pins.reset(5, { allowOldKey: true });
  assert.equal(lifted.lifted, true);
  assert.equal(lifted.wasPinned, false);
  assert.ok(lifted.saved instanceof Promise, 'the file loses its "# distrusted 5" line');
  assert.equal(writes, 1);
  assert.equal(pins.pin(6, KEY), true);
  assert.deepEqual(pins.unconfirmedIds(), [6]);
  pins.reset(6);
  assert.deepEqual(pins.unconfirmedIds(), [], 'no mark left for a pin that is gone');
  let now = 1_000_000;
  const strict = new KeyPins(10, { strict: true, now: () => now });
  strict.load([[4, keyDigest(KEY)]]);
  assert.equal(strict.loadOpenings([[4, now + 1000], [8, now + 1000]]), 1);
  assert.deepEqual(strict.openings().map(([id]) => id), [8]);
});

test('bug: another computer took the label of a pinned computer that was offline, and calls by that label went to it', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    const { request } = await import('./pins-helpers.js');
    const { until } = await import('../helpers.js');
    const labelled = async (computerId, key, label, output) => {
      const c = answering(computerId, output);
      c.url = bridge.linkUrl;
      const first = await c.link({ ...hello(computerId, key), computerLabel: label });
      assert.equal(first.type, 'hello-ok');
      return c;
    };
    const byLabel = (label) => callTool(bridge, 'exec-lua', { computer: label, code: 'return 1' });
    const real = await labelled(5, KEY, 'base', 'real\n');
    assert.equal((await byLabel('base')).structuredContent.output, 'real\n');
    await real.close();
    await until(() => bridge.links.get(5) === undefined);

    // with computer 5 away, its label is not up for grabs: at hello or by an info frame
    const impostor = await labelled(99, undefined, 'base', 'stolen\n');
    const alone = await byLabel('base');
    assert.equal(alone.isError, true, JSON.stringify(alone));
    assert.match(alone.content[0].text, /held by pinned computer 5, not linked now, and said by linked computer 99; use "computerId"/);
    const other = await labelled(98, undefined, 'elsewhere', 'stolen\n');
    other.send({ type: 'info', computerLabel: 'base', peripherals: [] });
    await until(() => bridge.links.get(98)?.label === 'base');
    const refused = await byLabel('base');
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /held by pinned computer 5, not linked now, and said by linked computers 98, 99; use "computerId".*cc-mcp pin-reset 5/);
    assert.equal([impostor, other].some((c) => c.received.some((f) => f.type === 'request' && f.method !== 'ping')), false, 'no code reached the others');
    // by id they are reached as before
    assert.equal(await execOutput(bridge, 99), 'stolen\n');
    await impostor.close();
    await other.close();
    await until(() => bridge.links.size === 0);
    const none = await byLabel('base');
    assert.equal(none.isError, true);
    assert.match(none.content[0].text, /No linked computer has the label "base": pinned computer 5, which had it, is not linked now/);

    // the real computer back: its label is its own again
    const back = await labelled(5, KEY, 'base', 'real again\n');
    assert.equal((await byLabel('base')).structuredContent.output, 'real again\n');
    // renamed: the old label is free, the new one held
    back.send({ type: 'info', computerLabel: 'base-2', peripherals: [] });
    await until(() => bridge.links.get(5)?.label === 'base-2');
    await back.close();
    await until(() => bridge.links.get(5) === undefined);
    const free = await labelled(97, undefined, 'base', 'new base\n');
    assert.equal((await byLabel('base')).structuredContent.output, 'new base\n');
    assert.equal((await byLabel('base-2')).isError, true);
    // the operator's pin reset forgets the label with the pin
    assert.equal((await request(bridge, '/pins/5/reset')).status, 200);
    await free.close();
    const after = await labelled(96, undefined, 'base-2', 'taken over\n');
    assert.equal((await byLabel('base-2')).structuredContent.output, 'taken over\n');
    await after.close();
  }));

test('KeyPins keeps the label of each pinned id only: shared labels, renames, resets and evictions', () => {
  let now = 0;
  const pins = new KeyPins(3, { now: () => now, confirmMs: 1000 });
  const ids = (label) => [...pins.idsLabelled(label)].sort((a, b) => a - b);
  pins.noteLabel(1, 'a');
  assert.deepEqual(ids('a'), [], 'an id not pinned has no label kept');
  pins.pin(1, KEY);
  pins.pin(2, OTHER);
  pins.noteLabel(1, 'a');
  pins.noteLabel(2, 'a');
  assert.deepEqual(ids('a'), [1, 2]);
  pins.noteLabel(1, 'b');
  assert.deepEqual(ids('a'), [2]);
  assert.deepEqual(ids('b'), [1]);
  assert.equal(pins.labelOf(1), 'b');
  pins.noteLabel(2, null);
  assert.deepEqual(ids('a'), []);
  pins.noteLabel(2, 'a');
  pins.reset(2);
  assert.deepEqual(ids('a'), [], 'a reset forgets the label');
  // a full table evicts the oldest unconfirmed pin not linked: its label goes with it
  pins.pin(3, 'third_0123456789abcdefABCDEFGHIJ');
  pins.pin(4, 'fourth_0123456789abcdefABCDEFGHI');
  assert.equal(pins.lastEvicted, null);
  pins.pin(5, 'fifth_0123456789abcdefABCDEFGHIJK');
  assert.equal(pins.lastEvicted, 1);
  assert.deepEqual(ids('b'), []);
  assert.equal(pins.labelOf(1), null);
});
