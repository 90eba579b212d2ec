// The inbound throttle and the log budget with a hand-driven clock, and the throttle on a real link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chargeFrame, disposeThrottle, MIN_FRAME_COST } from '../../dist/link/throttle.js';
import { LogBudget } from '../../dist/link/log-budget.js';
import { linkComputer, withBridge, until } from '../helpers.js';

// the fields a socket carries for the throttle, over a socket stand-in that records pause/resume
function throttled(calls) {
  return { throttleStart: -Infinity, throttleUsed: 0, throttleTimer: null, raw: { pause: () => calls.push('pause'), resume: () => calls.push('resume') } };
}

test('chargeFrame: pauses once the second\'s budget is spent, resumes when the second is over', async () => {
  const calls = [];
  const state = throttled(calls);
  assert.equal(chargeFrame(state, 600, 1000, 0), false);
  assert.equal(chargeFrame(state, 300, 1000, 0), false);
  assert.equal(chargeFrame(state, 200, 1000, 0), true, 'over budget: paused');
  assert.notEqual(state.throttleTimer, null);
  assert.equal(chargeFrame(state, 5000, 1000, 0), false, 'already paused: no second pause');
  assert.deepEqual(calls, ['pause']);
  await until(() => calls.length === 2);
  assert.deepEqual(calls, ['pause', 'resume']);
  assert.equal(state.throttleTimer, null);
  assert.equal(chargeFrame(state, 900, 1000, 1000), false, 'a new second, a new budget');
  disposeThrottle(state);
});

test('chargeFrame: tiny frames count at least MIN_FRAME_COST; disposeThrottle drops the timer', () => {
  const calls = [];
  const state = throttled(calls);
  for (let i = 0; i < 4; i++) assert.equal(chargeFrame(state, 1, MIN_FRAME_COST * 4, 0), false);
  assert.equal(chargeFrame(state, 1, MIN_FRAME_COST * 4, 0), true);
  disposeThrottle(state);
  assert.equal(state.throttleTimer, null);
  disposeThrottle(state);
  assert.deepEqual(calls, ['pause']);
});

test('chargeFrame: a socket not yet known is counted but never paused', () => {
  const state = { ...throttled([]), raw: null };
  assert.equal(chargeFrame(state, 5000, 1000, 0), false);
  assert.equal(state.throttleUsed, 5000);
  assert.equal(state.throttleTimer, null);
});

test('LogBudget: at most n lines a second, then one line saying how many were suppressed', () => {
  let now = 0;
  const budget = new LogBudget(2, () => now);
  assert.equal(budget.take('a'), 'a');
  assert.equal(budget.take('b'), 'b');
  assert.equal(budget.take('c'), null);
  assert.equal(budget.take('d'), null);
  now = 1000;
  assert.equal(budget.take('e'), 'e (2 similar lines suppressed)');
  assert.equal(budget.take('f'), 'f');
  assert.equal(budget.take('g'), null);
  now = 2500;
  assert.equal(budget.take('h'), 'h (1 similar line suppressed)');
});

test('CC_LINK_MAX_BYTES_PER_S: a flooding link is paused (counted, logged once a second), frames still all arrive, others unaffected', () =>
  withBridge({ CC_LINK_MAX_BYTES_PER_S: '4096' }, async (bridge) => {
    const flooder = await linkComputer(bridge, { computerId: 1 });
    const quiet = await linkComputer(bridge, { computerId: 2 });
    for (let i = 0; i < 40; i++) flooder.send({ type: 'response', id: `nobody-${i}`, ok: true, result: 'x'.repeat(500) });
    await until(() => bridge.metrics.framesRejected.get('unknown_id') === 40);
    assert.ok(bridge.metrics.linksThrottled >= 1);
    assert.ok(bridge.logs.some((l) => /sent more than 4096 bytes in a second; reading paused/.test(l)));
    const probe = await (await import('../helpers.js')).callTool(bridge, 'probe-computers');
    assert.match(probe.content[0].text, /pong from 2/);
    await flooder.close();
    await quiet.close();
  }));

test('chargeFrame: a paused socket resumes when its second is over, not a whole second after the pause; disposeThrottle means it never resumes', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const calls = [];
  const state = throttled(calls);
  assert.equal(chargeFrame(state, 600, 1000, 5000), false); // its second starts at 5000
  assert.equal(chargeFrame(state, 600, 1000, 5400), true, 'over budget 400 ms into the second');
  t.mock.timers.tick(599);
  assert.deepEqual(calls, ['pause']);
  t.mock.timers.tick(1);
  assert.deepEqual(calls, ['pause', 'resume'], 'resumed 600 ms later, when the second is over');
  assert.equal(state.throttleTimer, null);
  // disposed while paused (the socket closed): the timer is gone, nothing resumes it
  assert.equal(chargeFrame(state, 2000, 1000, 6000), true);
  disposeThrottle(state);
  t.mock.timers.tick(5000);
  assert.deepEqual(calls, ['pause', 'resume', 'pause']);
});

test('bug: pings and pongs a computer sent were not charged to CC_LINK_MAX_BYTES_PER_S, so a computer sending pongs without pause was read at tens of MB a second', () =>
  withBridge({ CC_LINK_MAX_BYTES_PER_S: '4096' }, async (bridge) => {
    const flooder = await linkComputer(bridge, { computerId: 1 });
    const quiet = await linkComputer(bridge, { computerId: 2 });
    let pongs = 0;
    flooder.ws.on('pong', () => pongs++);
    // 100 pongs and 30 pings of 125 bytes (each counts at least 256): 33 KB, eight times the second's budget
    for (let i = 0; i < 100; i++) flooder.ws.pong(Buffer.alloc(125, 'p'));
    for (let i = 0; i < 30; i++) flooder.ws.ping(Buffer.alloc(125, 'q'));
    await until(() => bridge.metrics.linksThrottled >= 1);
    assert.ok(bridge.logs.some((l) => /link from 127\.0\.0\.1:\d+ sent more than 4096 bytes in a second; reading paused/.test(l)));
    // every ping is still answered (slowly): the link stays up
    await until(() => pongs === 30, 5, 60_000);
    const probe = await (await import('../helpers.js')).callTool(bridge, 'probe-computers');
    assert.match(probe.content[0].text, /pong from 1/);
    assert.match(probe.content[0].text, /pong from 2/);
    await flooder.close();
    await quiet.close();
  }));
