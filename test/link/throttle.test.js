// The inbound throttle and the log budget with a hand-driven clock, and the throttle on a real link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InboundThrottle, MIN_FRAME_COST } from '../../dist/link/throttle.js';
import { LogBudget } from '../../dist/link/log-budget.js';
import { linkComputer, withBridge, until } from '../helpers.js';

test('InboundThrottle: pauses once the second\'s budget is spent, resumes when the second is over', async () => {
  let now = 0;
  const calls = [];
  const socket = { pause: () => calls.push('pause'), resume: () => calls.push('resume') };
  const throttle = new InboundThrottle(socket, 1000, () => now);
  assert.equal(throttle.charge(600), false);
  assert.equal(throttle.charge(300), false);
  assert.equal(throttle.charge(200), true, 'over budget: paused');
  assert.equal(throttle.paused, true);
  assert.equal(throttle.charge(5000), false, 'already paused: no second pause');
  assert.deepEqual(calls, ['pause']);
  await until(() => calls.length === 2);
  assert.deepEqual(calls, ['pause', 'resume']);
  assert.equal(throttle.paused, false);
  now = 1000;
  assert.equal(throttle.charge(900), false, 'a new second, a new budget');
  throttle.dispose();
});

test('InboundThrottle: tiny frames count at least MIN_FRAME_COST; dispose drops the timer', () => {
  let now = 0;
  const calls = [];
  const throttle = new InboundThrottle({ pause: () => calls.push('pause'), resume: () => calls.push('resume') }, MIN_FRAME_COST * 4, () => now);
  for (let i = 0; i < 4; i++) assert.equal(throttle.charge(1), false);
  assert.equal(throttle.charge(1), true);
  throttle.dispose();
  assert.equal(throttle.paused, false);
  throttle.dispose();
  assert.deepEqual(calls, ['pause']);
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
