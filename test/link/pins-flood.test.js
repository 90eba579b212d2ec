// CC_LINK_MAX_PINS against a flood of keyed hellos (CC_LINK_PIN=on). The gap: anyone who could send
// hellos could pin 10,000 made-up ids, each pin for good, and from then on no new computer could be
// pinned (it linked unpinned, open to takeover). Now a new pin is unconfirmed until its links have
// stayed up CC_LINK_PIN_CONFIRM_MS in all; a full table evicts the oldest unconfirmed pin whose
// computer is not linked. Real WebSocket clients, a real pins file, a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBridge, until } from '../helpers.js';
import { attempt, sha } from './pins-helpers.js';

const keyOf = (id) => `floodKey${id}_0123456789abcdefABCDEF`;
const unconfirmedLines = (file) => readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('# unconfirmed ')).map((l) => Number(l.slice(14)));

test('bug: hellos that pinned made-up ids and went filled CC_LINK_MAX_PINS for good, and a new computer then linked unpinned; now it takes the place of the oldest unconfirmed pin', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-flood-'));
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: join(dir, 'pins'), CC_LINK_MAX_PINS: '2' });
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const id of [100, 101]) {
    const { c, first } = await attempt(bridge, id, keyOf(id));
    assert.equal(first.type, 'hello-ok');
    await c.close();
    await until(() => bridge.links.get(id) === undefined);
  }
  const fresh = await attempt(bridge, 2, keyOf(2));
  assert.equal(fresh.first.type, 'hello-ok');
  assert.equal(bridge.pins.has(2), true, 'the new computer is pinned');
  assert.equal(bridge.pins.has(100), false);
  assert.equal((await attempt(bridge, 2, keyOf(100))).first.code, 'key_mismatch', 'and so protected');
  await fresh.c.close();
});

test('unconfirmed pins whose computer is not linked are evicted first (oldest first), confirmed and linked ones never; the table full with none evictable links a new id unpinned, logged and counted; a restart keeps which pins are unconfirmed', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-flood-'));
  const file = join(dir, 'pins');
  // computer 1's pin is confirmed (a line without '# unconfirmed'); a day to confirm any other, so
  // no link here lasts long enough (confirming by time: the next test)
  writeFileSync(file, `1 ${sha(keyOf(1))}\n`, { mode: 0o600 });
  const env = { CC_LINK_PINS_FILE: file, CC_LINK_MAX_PINS: '3', CC_LINK_PIN_CONFIRM_MS: '86400000' };
  let bridge = await startTestBridge(env);
  // closed (its last pins written) before its directory is removed
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const metric = async (name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text())?.[1]);
  const flood = async (id) => {
    const { c, first } = await attempt(bridge, id, keyOf(id));
    assert.equal(first.type, 'hello-ok', `flood ${id}`);
    await c.close();
    await until(() => bridge.links.get(id) === undefined);
  };

  // the flood: hellos that pin made-up ids and go
  await flood(100);
  await flood(101);
  assert.equal(bridge.pins.size, 3, 'the table is full');
  assert.deepEqual(unconfirmedLines(file), [100, 101]);
  await flood(102);
  assert.equal(bridge.pins.has(100), false, 'the oldest unconfirmed pin made room');
  assert.equal(await metric('cc_link_pins_evicted_total'), 1);
  assert.ok(bridge.logs.some((l) => /computer 102 pinned in place of computer 100's unconfirmed pin \(CC_LINK_MAX_PINS 3 reached; its links had not stayed up CC_LINK_PIN_CONFIRM_MS in all, and it is not linked\)/.test(l)), bridge.logs.join('\n'));

  // a new computer still gets its pin, and keeps it while linked
  const fresh = await attempt(bridge, 2, keyOf(2));
  assert.equal(fresh.first.type, 'hello-ok');
  assert.equal(bridge.pins.has(2), true, 'the new computer is pinned');
  assert.equal(bridge.pins.has(101), false);
  await flood(103); // evicts 102, not the linked 2
  await flood(104); // evicts 103
  assert.deepEqual(bridge.pins.entries().map(([id]) => id), [1, 2, 104]);
  assert.equal((await attempt(bridge, 2, keyOf(100))).first.code, 'key_mismatch', 'the linked new computer stays pinned');
  assert.equal((await attempt(bridge, 1, keyOf(100))).first.code, 'key_mismatch', 'the confirmed pin is never evicted');
  await until(() => JSON.stringify(unconfirmedLines(file)) === '[2,104]');

  // nothing evictable (1 confirmed; 2 and 104 linked): the next new id links unpinned, told and counted
  const held = await attempt(bridge, 104, keyOf(104));
  assert.equal(held.first.type, 'hello-ok');
  const unpinned = await attempt(bridge, 105, keyOf(105));
  assert.equal(unpinned.first.type, 'hello-ok');
  assert.equal(bridge.pins.has(105), false);
  assert.equal(await metric('cc_link_pins_full_total'), 1);
  assert.equal(await metric('cc_link_pins_unconfirmed'), 2);
  assert.ok(bridge.logs.some((l) => l.includes('computer 105 linked without a pin: CC_LINK_MAX_PINS (3) ids are pinned, and none can be evicted (every unconfirmed pin\'s computer is linked); raise CC_LINK_MAX_PINS, or use CC_LINK_PIN=strict')), bridge.logs.join('\n'));
  await Promise.all([fresh.c.close(), held.c.close(), unpinned.c.close()]);

  // a restart keeps which pins are unconfirmed, oldest first
  await bridge.close();
  bridge = await startTestBridge(env);
  assert.ok(bridge.logs.some((l) => l.includes(`3 pins read from ${file} (2 not confirmed yet: CC_LINK_PIN_CONFIRM_MS)`)), bridge.logs.join('\n'));
  await flood(106);
  assert.deepEqual(bridge.pins.entries().map(([id]) => id), [1, 104, 106], 'the oldest unconfirmed (2) went first');
  assert.equal(readFileSync(file, 'utf8').includes(`\n1 ${sha(keyOf(1))}\n`), true);
});

test('a pin is confirmed once its links have stayed up CC_LINK_PIN_CONFIRM_MS in all: the pins file drops its mark, and a full table no longer evicts it', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-confirm-'));
  const file = join(dir, 'pins');
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file, CC_LINK_MAX_PINS: '1', CC_LINK_PIN_CONFIRM_MS: '1000' });
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const real = await attempt(bridge, 1, keyOf(1));
  assert.equal(real.first.type, 'hello-ok');
  await until(() => unconfirmedLines(file).length === 1);
  // at least CC_LINK_PIN_CONFIRM_MS later the link ends: its time confirms the pin
  await sleep(1100);
  await real.c.close();
  await until(() => bridge.pins.unconfirmedCount === 0 && unconfirmedLines(file).length === 0);
  const other = await attempt(bridge, 2, keyOf(2));
  assert.equal(other.first.type, 'hello-ok');
  assert.deepEqual(bridge.pins.entries().map(([id]) => id), [1], 'the confirmed pin stays; the new id links unpinned');
  await other.c.close();
});
