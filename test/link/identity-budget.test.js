// CC_MAX_IDENTITY_BYTES: the most bytes of JSON the bridge keeps of one computer's identity (hello and
// info frames). A richer hello still links; what does not fit is left out (whole entries, in order) and
// counted in `omitted`; one warning per link; hello-ok tells the budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_JOBS } from '../../dist/link/identity.js';
import { fitIdentity, jsonBytes, sizeBound } from '../../dist/link/identity-budget.js';
import { omittedText } from '../../dist/link/identity-text.js';
import { encodeHelloOk, parseComputerFrame } from '../../dist/link/frames.js';
import { LinkRegistry } from '../../dist/link/registry.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool, until, withBridge, FakeComputer } from '../helpers.js';

const BUDGET = 8192;

/** A hello as rich as a 1 MB frame holds: 1024 peripherals with long names and types, 64 jobs. */
function richHello(computerId, { peripherals = 1024, types = 7, jobs = 64 } = {}) {
  const tag = String(computerId).padStart(4, '0');
  return {
    type: 'hello',
    computerId,
    computerLabel: `rich-${tag}`,
    kind: 'turtle',
    advanced: true,
    host: 'ComputerCraft 1.109.0 (Minecraft 1.20.1)',
    ccVersion: '1.109.0',
    peripherals: Array.from({ length: peripherals }, (_, i) => ({
      name: `p${tag}_${i}_`.padEnd(200, 'n'),
      types: Array.from({ length: types }, (_, t) => `t${tag}_${i}_${t}_`.padEnd(100, 'x')),
    })),
    jobs: Array.from({ length: jobs }, (_, j) => ({ job: `j${j}`, kind: 'exec-lua', state: 'running', what: 'w'.repeat(200) })),
  };
}

const kept = (identity) => {
  const { kind, advanced, host, ccVersion, peripherals, jobs, omitted } = identity;
  return { kind, advanced, host, ccVersion, peripherals, jobs, ...(omitted ? { omitted } : {}) };
};

test('fitIdentity keeps an identity that fits as it is, and cuts a richer one to whole entries in order, counting what it left out', () => {
  const small = { kind: 'computer', advanced: false, host: 'h', ccVersion: '1', peripherals: [{ name: 'left', types: ['modem'] }], jobs: [] };
  assert.equal(fitIdentity(small, 4096).identity, small);
  assert.equal(fitIdentity(small, 4096).cut, null);
  const parsed = richHello(1);
  const rich = { kind: 'turtle', advanced: true, host: parsed.host, ccVersion: parsed.ccVersion, peripherals: parsed.peripherals, jobs: parsed.jobs, omitted: { peripherals: 7, jobs: 1 } };
  for (const budget of [4096, BUDGET, 32768, 100_000]) {
    const { identity, cut } = fitIdentity(rich, budget);
    assert.ok(jsonBytes(identity) <= budget, `${jsonBytes(identity)} > ${budget}`);
    assert.deepEqual(identity.peripherals, rich.peripherals.slice(0, identity.peripherals.length), 'a prefix, whole entries');
    assert.deepEqual(identity.jobs, rich.jobs.slice(0, identity.jobs.length));
    assert.deepEqual(cut, { peripherals: 1024 - identity.peripherals.length, jobs: 64 - identity.jobs.length, budget: true });
    assert.deepEqual(identity.omitted, { peripherals: 7 + cut.peripherals, jobs: 1 + cut.jobs, budget: true });
    assert.ok(identity.jobs.length > 0 && identity.peripherals.length > 0, 'jobs get up to an eighth, peripherals the rest');
    // the room left is less than the next peripheral or job would take
    const next = Math.min(jsonBytes(rich.peripherals[identity.peripherals.length]), jsonBytes(rich.jobs[identity.jobs.length]));
    assert.ok(jsonBytes(identity) + next + 1 > budget - 64, `room left unused at ${budget}: ${jsonBytes(identity)}`);
    assert.equal(identity.host, rich.host);
  }
  // a jobs-only identity: jobs fill the whole budget once there are no peripherals to take it
  const jobsOnly = fitIdentity({ ...rich, peripherals: null, omitted: undefined }, BUDGET);
  assert.equal(jobsOnly.identity.peripherals, null);
  assert.ok(jsonBytes(jobsOnly.identity.jobs) > BUDGET / 2, 'more than an eighth');
  assert.equal(omittedText({ peripherals: 3, jobs: 0, budget: true }), " (left out to fit its frame limit or the bridge's CC_MAX_IDENTITY_BYTES: 3 peripherals)");
  assert.equal(omittedText({ peripherals: 3, jobs: 1 }), ' (left out to fit its frame limit: 3 peripherals, 1 job)');
});

test('hello-ok tells the identity budget (maxIdentity) beside maxFrame; none when unbounded', () => {
  assert.deepEqual(JSON.parse(encodeHelloOk(1024, 4096)), { type: 'hello-ok', maxFrame: 1024, maxIdentity: 4096 });
  assert.deepEqual(JSON.parse(encodeHelloOk(1024)), { type: 'hello-ok', maxFrame: 1024 });
});

test('bug: a hello as rich as CC_MAX_FRAME_BYTES was kept whole (about 1.1 MB of heap per link); now it links and keeps at most CC_MAX_IDENTITY_BYTES of JSON, the rest counted in omitted, one warning per link', { timeout: 60_000 }, () =>
  withBridge({ CC_MAX_IDENTITY_BYTES: String(BUDGET) }, async (bridge) => {
    const hello = richHello(7);
    assert.ok(JSON.stringify(hello).length > 900_000 && JSON.stringify(hello).length < 1_048_576, 'near the default frame limit');
    const c = new FakeComputer(bridge.linkUrl, { computerId: 7 });
    const first = await c.link(hello);
    assert.equal(first.type, 'hello-ok', 'a rich hello is never refused for being rich');
    assert.equal(first.maxIdentity, BUDGET);
    const link = bridge.links.get(7);
    assert.ok(jsonBytes(kept(link.identity)) <= BUDGET, `kept ${jsonBytes(kept(link.identity))} bytes of identity`);
    const keptPeripherals = link.identity.peripherals.length;
    assert.ok(keptPeripherals > 0 && keptPeripherals < 1024);
    assert.deepEqual(link.identity.peripherals.map((p) => p.name), hello.peripherals.slice(0, keptPeripherals).map((p) => p.name));
    assert.deepEqual(link.identity.omitted, { peripherals: 1024 - keptPeripherals, jobs: 64 - link.identity.jobs.length, budget: true });
    const listed = await callTool(bridge, 'list-computers');
    const entry = listed.structuredContent.computers[0];
    assert.deepEqual(entry.omitted, { peripherals: 1024 - keptPeripherals, jobs: 64 - link.identity.jobs.length });
    assert.match(listed.content[0].text, new RegExp(`\\(left out to fit its frame limit or the bridge's CC_MAX_IDENTITY_BYTES: ${1024 - keptPeripherals} peripherals, ${64 - link.identity.jobs.length} jobs\\); connected `));
    const warned = () => bridge.logs.filter((l) => / warn computer 7 .*the bridge keeps \(CC_MAX_IDENTITY_BYTES: 8192 bytes of JSON, at most 1024 peripherals and 64 jobs\): left out \d+ peripherals and \d+ jobs/.test(l));
    assert.equal(warned().length, 1, bridge.logs.join('\n'));
    // info frames are cut the same way; the link warned already
    c.send({ type: 'info', computerLabel: 'renamed', peripherals: hello.peripherals.slice(1), jobs: [] });
    await until(() => bridge.links.get(7).label === 'renamed');
    assert.ok(jsonBytes(kept(link.identity)) <= BUDGET);
    assert.equal(link.identity.peripherals[0].name, hello.peripherals[1].name);
    assert.deepEqual(link.identity.jobs, []);
    assert.deepEqual(link.identity.omitted, { peripherals: 1023 - link.identity.peripherals.length, jobs: 0, budget: true });
    assert.equal(warned().length, 1, 'one warning per link');
    // the log names only what was kept as attached or detached
    const changed = bridge.logs.find((l) => /computer 7 \(Label: renamed\): label/.test(l));
    // the jobs' room went to peripherals: those kept now and not before are attached, nothing beyond
    assert.equal((changed.match(/ attached/g) ?? []).length, link.identity.peripherals.length - (keptPeripherals - 1), changed);
    assert.equal((changed.match(/ detached/g) ?? []).length, 1, changed);
    // an info frame that fits drops the marker
    c.send({ type: 'info', computerLabel: 'small', peripherals: [{ name: 'left', types: ['modem'] }], jobs: [] });
    await until(() => bridge.links.get(7).label === 'small');
    assert.equal('omitted' in link.identity, false);
    await c.close();
    // a new link from the same computer warns again
    const again = new FakeComputer(bridge.linkUrl, { computerId: 7 });
    assert.equal((await again.link(hello)).type, 'hello-ok');
    await until(() => warned().length === 2);
    await again.close();
  }));

test('bug: a hello listing more than 1024 peripherals or 64 jobs was refused (hello-error invalid); now it links, keeping the first 1024 and 64, the rest counted in omitted', { timeout: 60_000 }, () =>
  withBridge({ CC_MAX_IDENTITY_BYTES: String(1 << 20) }, async (bridge) => {
    const c = new FakeComputer(bridge.linkUrl, { computerId: 9 });
    const hello = {
      type: 'hello',
      computerId: 9,
      computerLabel: null,
      peripherals: Array.from({ length: 1100 }, (_, i) => ({ name: `p${i}`, types: ['t'] })),
      jobs: Array.from({ length: 70 }, (_, j) => ({ job: `j${j}`, kind: 'exec-lua', state: 'done', what: '' })),
      omitted: { peripherals: 2, jobs: 0 },
    };
    const first = await c.link(hello);
    assert.equal(first.type, 'hello-ok', JSON.stringify(first));
    const link = bridge.links.get(9);
    assert.deepEqual(link.identity.peripherals.map((p) => p.name), hello.peripherals.slice(0, 1024).map((p) => p.name));
    assert.deepEqual(link.identity.jobs.map((j) => j.job), hello.jobs.slice(0, 64).map((j) => j.job));
    assert.deepEqual(link.identity.omitted, { peripherals: 2 + 76, jobs: 6, budget: true });
    // an info frame too; a malformed entry past the kept ones still makes the frame malformed
    c.send({ type: 'info', computerLabel: 'x', peripherals: [...hello.peripherals, { name: 'p0', types: [] }] });
    c.send({ type: 'info', computerLabel: 'y', peripherals: hello.peripherals.slice(0, 1030) });
    await until(() => bridge.links.get(9).label === 'y');
    assert.ok(bridge.logs.some((l) => /info\.peripherals\[1100\]\.name repeats an earlier peripheral's name; frame dropped/.test(l)), bridge.logs.join('\n'));
    // the marker is the last frame's (as for the computer's own): this info said no jobs, so the 64 kept stay and none are counted
    assert.deepEqual(link.identity.omitted, { peripherals: 6, jobs: 0, budget: true });
    assert.equal(link.identity.jobs.length, 64);
    await c.close();
  }));

test('fitHello cuts a hello as it is parsed, before it can wait for anything; register keeps that and tells identityCut once', () => {
  const registry = new LinkRegistry();
  registry.maxIdentityBytes = BUDGET;
  const cuts = [];
  registry.identityCut = (link, cut) => cuts.push({ id: link.computerId, cut });
  const parsed = parseComputerFrame(JSON.stringify(richHello(3))).frame;
  const said = parsed.identity;
  registry.fitHello(parsed);
  assert.notEqual(parsed.identity, said, 'a new, smaller identity: the parsed lists are no longer held by the frame');
  assert.ok(jsonBytes(kept(parsed.identity)) <= BUDGET);
  assert.deepEqual(parsed.identityCut, { peripherals: 1024 - parsed.identity.peripherals.length, jobs: 64 - parsed.identity.jobs.length, budget: true });
  assert.deepEqual(cuts, [], 'no link yet: nothing told');
  const socket = { send() {}, close() {} };
  const { link } = registry.register(socket, parsed, '10.0.0.1:5');
  assert.equal(link.identity, parsed.identity);
  assert.deepEqual(cuts, [{ id: 3, cut: parsed.identityCut }]);
  // a hello that fits is left alone
  const small = parseComputerFrame(JSON.stringify({ type: 'hello', computerId: 4, peripherals: [{ name: 'left', types: ['modem'] }] })).frame;
  const before = small.identity;
  registry.fitHello(small);
  assert.equal(small.identity, before);
  assert.equal('identityCut' in small, false);
  registry.register(socket, small, '10.0.0.1:6');
  assert.equal(cuts.length, 1);
});

test('a rich keyed hello that waits for its pin to be written (CC_LINK_PINS_FILE) links with its identity cut and one warning', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'identity-pins-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await withBridge({ CC_MAX_IDENTITY_BYTES: String(BUDGET), CC_LINK_PINS_FILE: join(dir, 'pins') }, async (bridge) => {
    const c = new FakeComputer(bridge.linkUrl, { computerId: 11 });
    const first = await c.link({ ...richHello(11), key: 'k'.repeat(32) });
    assert.equal(first.type, 'hello-ok');
    const link = bridge.links.get(11);
    assert.ok(jsonBytes(kept(link.identity)) <= BUDGET);
    assert.equal(link.identity.omitted.budget, true);
    assert.equal(bridge.logs.filter((l) => / warn computer 11 .*the bridge keeps \(CC_MAX_IDENTITY_BYTES: 8192 bytes of JSON/.test(l)).length, 1, bridge.logs.join('\n'));
    await c.close();
  });
});

// What fitIdentity counts for an entry: its JSON and a comma, over the rest of the identity with the
// omitted marker at its widest (counts up to 9,999,999), so what it keeps stays within the budget
// whatever counts the marker ends up holding.
const WIDEST = { peripherals: 9_999_999, jobs: 9_999_999, budget: true };
const needFor = (identity, list, n) => jsonBytes({ ...identity, [list]: identity[list].slice(0, n), omitted: WIDEST }) + 1;

test('fitIdentity\'s budget is exact to the byte: an entry that fills it to the last byte is kept, one byte less leaves it out', () => {
  const peripherals = Array.from({ length: 24 }, (_, i) => ({ name: `p${i}_`.padEnd(200, 'n'), types: ['modem', `t${i}_`.padEnd(100, 'x'), 'inventory'] }));
  const withPeripherals = { kind: 'computer', advanced: false, host: 'h', ccVersion: '1', peripherals, jobs: [] };
  for (const n of [13, 17, 23]) {
    const budget = needFor(withPeripherals, 'peripherals', n);
    assert.ok(budget >= 4096, 'at least MIN_IDENTITY_BYTES');
    assert.equal(fitIdentity(withPeripherals, budget).identity.peripherals.length, n, `${n} fit ${budget} bytes`);
    assert.equal(fitIdentity(withPeripherals, budget - 1).identity.peripherals.length, n - 1, `${n} do not fit ${budget - 1} bytes`);
    assert.ok(jsonBytes(fitIdentity(withPeripherals, budget).identity) < budget);
  }
  // jobs (no peripherals to share with): the same count, up to the whole budget
  const jobs = Array.from({ length: 40 }, (_, j) => ({ job: `j${j}`, kind: 'exec-lua', state: 'running', what: 'w'.repeat(200) }));
  const withJobs = { kind: 'turtle', advanced: true, host: 'h', ccVersion: '1', peripherals: null, jobs };
  for (const n of [17, 30]) {
    const budget = needFor(withJobs, 'jobs', n);
    assert.ok(budget >= 4096, 'at least MIN_IDENTITY_BYTES');
    assert.equal(fitIdentity(withJobs, budget).identity.jobs.length, n, `${n} jobs fit ${budget} bytes`);
    assert.equal(fitIdentity(withJobs, budget - 1).identity.jobs.length, n - 1, `${n} jobs do not fit ${budget - 1} bytes`);
  }
  // no job fits: the one shared empty list every computer without jobs holds, not a new one per link
  const noJob = fitIdentity(withJobs, needFor(withJobs, 'jobs', 1) - 1);
  assert.equal(noJob.identity.jobs, NO_JOBS);
  assert.equal(noJob.cut.jobs, 40);
  // however large the budget: at most 64 jobs (MAX_JOBS), even when the list is small in bytes
  const tiny = Array.from({ length: 65 }, (_, j) => ({ job: `j${j}`, kind: 'k', state: 'done', what: '' }));
  const many = fitIdentity({ ...withJobs, jobs: tiny }, 1_000_000);
  assert.equal(many.identity.jobs.length, 64);
  assert.deepEqual(many.cut, { peripherals: 0, jobs: 1, budget: true });
});

test('an identity one byte over its budget is always cut, however its bytes are made (characters JSON escapes to 6 bytes, many small entries); one that fits is kept as it is', () => {
  // names of control characters JSON writes as \u00XX: 6 bytes each, the most a character can take
  // (not \b \t \n \f \r: those are 2)
  const SIX = [1, 2, 3, 4, 5, 6, 7, 11, ...Array.from({ length: 18 }, (_, i) => 14 + i)].map((c) => String.fromCharCode(c));
  const ctl = (i) => SIX[i % SIX.length] + SIX[Math.floor(i / SIX.length) % SIX.length];
  const base = { kind: 'computer', advanced: false, host: null, ccVersion: null };
  const smallJobs = Array.from({ length: 64 }, (_, j) => ({ job: `j${j}`, kind: 'k', state: 'done', what: '' }));
  const identities = {
    'many escaped names': { ...base, peripherals: Array.from({ length: 200 }, (_, i) => ({ name: ctl(i), types: [] })), jobs: [] },
    'few escaped names': { ...base, peripherals: Array.from({ length: 40 }, (_, i) => ({ name: ctl(i).repeat(8), types: [] })), jobs: [] },
    'escaped types': { ...base, peripherals: Array.from({ length: 100 }, (_, i) => ({ name: ctl(i), types: Array.from({ length: 32 }, (_, t) => ctl(t).slice(0, 1)) })), jobs: [] },
    'escaped host and CC version': { ...base, host: SIX[0].repeat(256), ccVersion: SIX[1].repeat(256), peripherals: Array.from({ length: 30 }, (_, i) => ({ name: ctl(i).repeat(8), types: [] })), jobs: [] },
    'small jobs': { ...base, peripherals: Array.from({ length: 16 }, (_, i) => ({ name: ctl(i).repeat(8), types: [] })), jobs: smallJobs },
  };
  for (const [what, identity] of Object.entries(identities)) {
    const size = jsonBytes(identity);
    assert.ok(size > 4096, `${what}: ${size} bytes`);
    for (const budget of [4096, size - 1]) {
      const fitted = fitIdentity(identity, budget);
      assert.ok(jsonBytes(fitted.identity) <= budget, `${what}: ${jsonBytes(fitted.identity)} bytes kept of a budget of ${budget}`);
      assert.ok(fitted.cut !== null && fitted.cut.peripherals + fitted.cut.jobs > 0, `${what}: cut at ${budget}`);
    }
    // room for it with its widest marker (and a comma counted per list): kept as it is, the same
    // object, nothing said to be left out (sizeBound is over this budget: the entries were measured)
    const roomy = jsonBytes({ ...identity, omitted: WIDEST }) + 2;
    assert.ok(sizeBound(identity) > roomy, what);
    const kept = fitIdentity(identity, roomy);
    assert.equal(kept.identity, identity, what);
    assert.equal(kept.cut, null, what);
  }
});
