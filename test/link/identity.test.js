// Identity fields of the hello and info frames: validated like every frame, errors name the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseComputerFrame } from '../../dist/link/frames.js';
import { identityLine, omittedText, peripheralsLine } from '../../dist/link/identity-text.js';
import { callTool, linkComputer, until, withBridge, FakeComputer } from '../helpers.js';

const parse = (value) => parseComputerFrame(JSON.stringify(value));
const hello = (extra) => parse({ type: 'hello', computerId: 1, ...extra });

test('a hello with every identity field keeps them; a hello without them has nulls', () => {
  const full = hello({ kind: 'turtle', advanced: true, host: 'ComputerCraft 1.110.0 (Minecraft 1.21.1)', ccVersion: '1.110.0', peripherals: [{ name: 'left', types: ['modem'] }] });
  assert.deepEqual(full.frame.identity, { kind: 'turtle', advanced: true, host: 'ComputerCraft 1.110.0 (Minecraft 1.21.1)', ccVersion: '1.110.0', peripherals: [{ name: 'left', types: ['modem'] }], jobs: null });
  assert.deepEqual(hello({ kind: null, advanced: null, peripherals: null }).frame.identity, { kind: null, advanced: null, host: null, ccVersion: null, peripherals: null, jobs: null });
  // every identity field may be null, as a program that does not know it sends it
  const nulls = { kind: null, advanced: null, host: null, ccVersion: null, peripherals: null, jobs: null };
  assert.deepEqual(hello(nulls).frame.identity, nulls);
});

test('bad identity fields refuse the hello, naming the field', () => {
  const bad = (extra, error) => assert.deepEqual(hello(extra), { ok: false, error });
  bad({ kind: 'fridge' }, 'hello.kind must be one of computer, turtle, pocket, command');
  bad({ advanced: 'yes' }, 'hello.advanced must be a boolean');
  bad({ host: 5 }, 'hello.host must be a string of at most 256 characters');
  bad({ ccVersion: 'x'.repeat(300) }, 'hello.ccVersion must be a string of at most 256 characters');
  bad({ peripherals: {} }, 'hello.peripherals must be an array');
  bad({ peripherals: [1] }, 'hello.peripherals[0] must be an object {name, types}');
  bad({ peripherals: [{ name: '', types: [] }] }, 'hello.peripherals[0].name must be a non-empty string');
  bad({ peripherals: [{ name: 'a', types: [] }, { name: 'a', types: [] }] }, "hello.peripherals[1].name repeats an earlier peripheral's name");
  bad({ peripherals: [{ name: 'a', types: [3] }] }, 'hello.peripherals[0].types must be an array of non-empty strings');
});

test('info frames: label (string or null) and the whole peripheral list', () => {
  assert.deepEqual(parse({ type: 'info', computerLabel: 'x', peripherals: [] }), { ok: true, frame: { type: 'info', computerLabel: 'x', peripherals: [] } });
  assert.equal(parse({ type: 'info', computerLabel: '', peripherals: [] }).frame.computerLabel, null);
  assert.deepEqual(parse({ type: 'info', computerLabel: 3, peripherals: [] }), { ok: false, error: 'info.computerLabel must be a string or null' });
  assert.deepEqual(parse({ type: 'info', peripherals: [] }), { ok: false, error: 'info.computerLabel must be a string or null' });
  assert.deepEqual(parse({ type: 'info', computerLabel: null }), { ok: false, error: 'info.peripherals must be an array' });
});

test('identity lines say what was not said', () => {
  const none = { kind: null, advanced: null, host: null, ccVersion: null, peripherals: null };
  assert.equal(identityLine(none, null), 'computer (kind not said), mcp-computer version not said');
  assert.equal(peripheralsLine(null), 'peripherals not said');
  assert.equal(peripheralsLine([{ name: 'x', types: [] }]), 'peripherals: x (no type)');
  assert.equal(identityLine({ ...none, kind: 'pocket' }, '0.1.0'), 'pocket, mcp-computer 0.1.0');
});

test('the bridge: info before hello refuses the socket; a malformed info is dropped, the link stays; a good one updates label and peripherals', () =>
  withBridge({}, async (bridge) => {
    const early = new FakeComputer(bridge.linkUrl, { computerId: 1 });
    const answer = await early.link({ type: 'info', computerLabel: null, peripherals: [] });
    assert.equal(answer.type, 'hello-error');
    const old = await linkComputer(bridge, { computerId: 2, computerLabel: 'a' });
    const listed = await callTool(bridge, 'list-computers');
    assert.match(listed.content[0].text, /^2 \(Label: a\): computer \(kind not said\), mcp-computer version not said; peripherals not said; connected /);
    assert.equal(listed.structuredContent.computers[0].peripherals, null);
    old.send({ type: 'info', computerLabel: 'b', peripherals: 'none' });
    old.send({ type: 'info', computerLabel: 'b', peripherals: [{ name: 'top', types: ['monitor'] }] });
    await until(() => bridge.links.get(2).label === 'b');
    assert.ok(bridge.logs.some((l) => /info\.peripherals must be an array; frame dropped/.test(l)));
    assert.ok(bridge.logs.some((l) => /computer 2 \(Label: b\): label "a" -> "b", peripheral "top" attached/.test(l)));
    old.send({ type: 'info', computerLabel: 'b', peripherals: [] });
    await until(() => bridge.links.get(2).identity.peripherals.length === 0);
    assert.ok(bridge.logs.some((l) => /peripheral "top" detached/.test(l)));
    old.send({ type: 'info', computerLabel: 'b', peripherals: [] }); // nothing changed: nothing logged
    assert.equal((await callTool(bridge, 'list-computers')).structuredContent.computers[0].label, 'b');
    await old.close();
    assert.equal((await callTool(bridge, 'list-computers')).content[0].text, 'No computers are linked.');
  }));

test('a peripheral name with a line break cannot forge a bridge log line (it is quoted like a label)', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 3, peripherals: [] });
    const forged = 'top\n2026-01-01T00:00:00.000Z warn forged';
    computer.send({ type: 'info', computerLabel: null, peripherals: [{ name: forged, types: ['monitor'] }] });
    await until(() => bridge.links.get(3).identity.peripherals?.length === 1);
    computer.send({ type: 'info', computerLabel: null, peripherals: [] });
    await until(() => bridge.links.get(3).identity.peripherals.length === 0);
    const lines = bridge.logs.join('\n').split('\n');
    assert.ok(lines.some((l) => l.includes(`peripheral ${JSON.stringify(forged)} attached`)));
    assert.ok(lines.some((l) => l.includes(`peripheral ${JSON.stringify(forged)} detached`)));
    assert.ok(!lines.some((l) => l.startsWith('2026-01-01T00:00:00.000Z warn forged')));
    await computer.close();
  }));

test('hello-omitted: the "omitted" marker of hello and info frames (what the computer left out to fit its --max-frame)', () => {
  assert.deepEqual(hello({ omitted: { peripherals: 3, jobs: 1 } }).frame.identity.omitted, { peripherals: 3, jobs: 1 });
  assert.deepEqual(hello({ omitted: { jobs: 2 } }).frame.identity.omitted, { peripherals: 0, jobs: 2 });
  assert.equal('omitted' in hello({ omitted: { peripherals: 0, jobs: 0 } }).frame.identity, false, 'nothing left out is no marker');
  assert.equal('omitted' in hello({ omitted: null }).frame.identity, false);
  const bad = 'hello.omitted must be an object {peripherals, jobs} of counts';
  // counts up to a million each (the bridge's marker adds its own cuts below ten million)
  assert.deepEqual(hello({ omitted: { peripherals: 1_000_000, jobs: 1_000_000 } }).frame.identity.omitted, { peripherals: 1_000_000, jobs: 1_000_000 });
  for (const omitted of [[], 3, { peripherals: -1 }, { jobs: 1.5 }, { peripherals: '2' }, { jobs: 2_000_000 }, { peripherals: 1_000_001 }, { jobs: 1_000_001 }]) {
    assert.deepEqual(hello({ omitted }), { ok: false, error: bad }, JSON.stringify(omitted));
  }
  assert.deepEqual(parse({ type: 'info', computerLabel: null, peripherals: [], omitted: { peripherals: 1 } }).frame.omitted, { peripherals: 1, jobs: 0 });
  assert.deepEqual(parse({ type: 'info', computerLabel: null, peripherals: [], omitted: 'x' }), { ok: false, error: 'info.omitted must be an object {peripherals, jobs} of counts' });
  assert.equal(omittedText(undefined), '');
  assert.equal(omittedText({ peripherals: 1, jobs: 0 }), ' (left out to fit its frame limit: 1 peripheral)');
  assert.equal(omittedText({ peripherals: 0, jobs: 2 }), ' (left out to fit its frame limit: 2 jobs)');
  assert.equal(omittedText({ peripherals: 5, jobs: 1 }), ' (left out to fit its frame limit: 5 peripherals, 1 job)');
});

test('hello-omitted: the bridge logs and lists what a computer left out, and forgets it when an info frame leaves nothing out', () =>
  withBridge({}, async (bridge) => {
    const c = new FakeComputer(bridge.linkUrl, { computerId: 3 });
    const first = await c.link({ type: 'hello', computerId: 3, computerLabel: null, peripherals: [{ name: 'top', types: ['modem'] }], omitted: { peripherals: 4, jobs: 1 } });
    assert.equal(first.type, 'hello-ok');
    assert.ok(bridge.logs.some((l) => /linked 3 .*\(left out to fit its frame limit: 4 peripherals, 1 job\)$/.test(l)), bridge.logs.join('\n'));
    let listed = await callTool(bridge, 'list-computers');
    assert.deepEqual(listed.structuredContent.computers[0].omitted, { peripherals: 4, jobs: 1 });
    assert.match(listed.content[0].text, /; peripherals: top \(modem\) \(left out to fit its frame limit: 4 peripherals, 1 job\); connected /);
    c.send({ type: 'info', computerLabel: null, peripherals: [{ name: 'top', types: ['modem'] }], omitted: { peripherals: 2 } });
    await until(() => bridge.links.get(3).identity.omitted?.peripherals === 2);
    c.send({ type: 'info', computerLabel: null, peripherals: [] });
    await until(() => bridge.links.get(3).identity.peripherals.length === 0);
    assert.equal('omitted' in bridge.links.get(3).identity, false, 'no marker (not even an undefined one) once nothing is left out');
    c.send({ type: 'info', computerLabel: 'x', peripherals: [] });
    await until(() => bridge.links.get(3).label === 'x');
    assert.equal('omitted' in bridge.links.get(3).identity, false, 'an info frame on a link without a marker adds none');
    listed = await callTool(bridge, 'list-computers');
    assert.equal(listed.structuredContent.computers[0].omitted, undefined);
    assert.doesNotMatch(listed.content[0].text, /left out/);
    await c.close();
  }));

test('identity entry sizes are exact: names and types of 256 characters, 32 types, job ids of 128 are kept, one more is left out; host and CC version up to 256', async () => {
  const { parsePeripherals, parseJobs, NO_JOBS } = await import('../../dist/link/identity.js');
  const n = (c, k) => c.repeat(k);
  const peripherals = parsePeripherals([
    { name: n('a', 256), types: [n('t', 256)] },
    { name: n('b', 257), types: ['x'] },
    { name: 'c', types: [n('t', 257)] },
    { name: 'd', types: Array.from({ length: 32 }, (_, i) => `t${i}`) },
    { name: 'e', types: Array.from({ length: 33 }, (_, i) => `t${i}`) },
  ], 'info.peripherals');
  assert.deepEqual(peripherals.value.map((p) => p.name), [n('a', 256), 'd']);
  assert.equal(peripherals.skipped, 3);
  const job = (id, kind = 'lua', what = '') => ({ job: id, kind, state: 'running', what });
  const jobs = parseJobs([job(n('j', 128)), job(n('k', 129)), job('m', n('k', 64)), job('o', n('k', 65)), job('p', 'lua', n('w', 256)), job('q', 'lua', n('w', 257))], 'info.jobs');
  assert.deepEqual(jobs.value.map((j) => j.job), [n('j', 128), 'm', 'p']);
  assert.equal(jobs.skipped, 3);
  // every job left out: the one shared empty list every computer without jobs holds
  const none = parseJobs([job(n('k', 129)), job('o', n('k', 65))], 'info.jobs');
  assert.equal(none.value, NO_JOBS);
  assert.equal(none.skipped, 2);
  const hello = (extra) => parseComputerFrame(JSON.stringify({ type: 'hello', computerId: 1, ...extra }));
  for (const field of ['host', 'ccVersion']) {
    assert.equal(hello({ [field]: n('h', 256) }).ok, true, field);
    assert.deepEqual(hello({ [field]: n('h', 257) }), { ok: false, error: `hello.${field} must be a string of at most 256 characters` });
  }
});
