// Audit: a hello or info frame whose peripheral or job entry was over an entry size (a peripheral name
// or type over 256 characters, more than 32 types; a job id over 128, a kind over 64, a what over 256)
// refused the whole hello (the computer could not link at all) or dropped the whole info frame, while
// a list over CC_MAX_IDENTITY_BYTES or over 1024 peripherals / 64 jobs was cut and counted in omitted.
// The identity budget bounds what is kept either way, so the refusal protected nothing: such an entry
// is now left out and counted in omitted like the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, FakeComputer, until, withBridge } from '../helpers.js';

const LONG_NAME = { name: 'n'.repeat(257), types: ['modem'] };
const MANY_TYPES = { name: 'many', types: Array.from({ length: 33 }, (_, i) => `t${i}`) };
const LONG_TYPE = { name: 'longtype', types: ['t'.repeat(257)] };
const LONG_JOB = { job: 'j'.repeat(129), kind: 'exec-lua', state: 'running', what: 'x' };

test('bug: a hello with one peripheral named over 256 characters (or over 32 types, or a job id over 128 characters) was refused outright; now it links, the entry counted in omitted', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    const computer = new FakeComputer(bridge.linkUrl, { computerId: 4 });
    const answer = await computer.link({
      type: 'hello',
      computerId: 4,
      computerLabel: 'odd',
      peripherals: [{ name: 'left', types: ['modem'] }, LONG_NAME, MANY_TYPES, LONG_TYPE],
      jobs: [LONG_JOB, { job: 'ok', kind: 'exec-lua', state: 'done', what: 'y' }],
    });
    assert.equal(answer.type, 'hello-ok', JSON.stringify(answer));
    const listed = (await callTool(bridge, 'list-computers')).structuredContent.computers[0];
    assert.deepEqual(listed.peripherals, [{ name: 'left', types: ['modem'] }]);
    assert.deepEqual(listed.jobs.map((j) => j.job), ['ok']);
    assert.deepEqual(listed.omitted, { peripherals: 3, jobs: 1 });
    // a later info frame with such an entry is taken too (before: dropped whole, the label kept stale)
    computer.send({ type: 'info', computerLabel: 'renamed', peripherals: [{ name: 'top', types: ['monitor'] }, LONG_NAME] });
    await until(() => bridge.links.get(4)?.label === 'renamed');
    assert.deepEqual(bridge.links.get(4).identity.peripherals, [{ name: 'top', types: ['monitor'] }]);
    assert.deepEqual(bridge.links.get(4).identity.omitted, { peripherals: 1, jobs: 0, budget: true });
    await computer.close();
  }));
