// A computer's detached jobs in its hello and info frames (relinked computers listed no jobs until
// someone asked job-status): validated like every identity field, kept on the link, shown by
// list-computers and REST GET /computers, changes logged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseComputerFrame } from '../../dist/link/frames.js';
import { MAX_JOBS } from '../../dist/link/identity.js';
import { jobChanges, jobsLine } from '../../dist/link/identity-text.js';
import { validate } from '../../dist/tools/schema.js';
import { COMPUTER_SCHEMA } from '../../dist/tools/list-computers.js';
import { FakeComputer, callTool, linkComputer, until, withBridge } from '../helpers.js';

const parse = (value) => parseComputerFrame(JSON.stringify(value));
const hello = (extra) => parse({ type: 'hello', computerId: 1, ...extra });
const RUN = { job: 'a1', kind: 'exec-lua', state: 'running', what: 'while true do sleep(1) end' };
const DONE = { job: 'b2', kind: 'run-program', state: 'done', what: 'build' };

test('hello.jobs is kept; a hello without it has jobs null (a program that does not say)', () => {
  assert.deepEqual(hello({ jobs: [RUN, DONE] }).frame.identity.jobs, [RUN, DONE]);
  assert.deepEqual(hello({ jobs: [] }).frame.identity.jobs, []);
  assert.equal(hello({ jobs: [] }).frame.identity.jobs, hello({ jobs: [] }).frame.identity.jobs, 'no jobs: one shared empty list, not one per link');
  assert.equal(hello({}).frame.identity.jobs, null);
  assert.equal(hello({ jobs: null }).frame.identity.jobs, null);
  const extra = hello({ jobs: [{ ...RUN, outputBytes: 5 }] }).frame.identity.jobs;
  assert.deepEqual(extra, [RUN], 'fields besides job, kind, state and what are not kept');
});

test('bad hello.jobs refuse the hello, naming the field', () => {
  const bad = (jobs, error) => assert.deepEqual(hello({ jobs }), { ok: false, error });
  bad({}, 'hello.jobs must be an array');
  bad([1], 'hello.jobs[0] must be an object {job, kind, state, what}');
  bad([[]], 'hello.jobs[0] must be an object {job, kind, state, what}');
  bad([{ ...RUN, job: '' }], 'hello.jobs[0].job must be a non-empty string');
  bad([RUN, { ...DONE, job: 'a1' }], "hello.jobs[1].job repeats an earlier job's id");
  bad([{ ...RUN, kind: 7 }], 'hello.jobs[0].kind must be a non-empty string');
  bad([{ ...RUN, state: 'sleeping' }], 'hello.jobs[0].state must be one of running, done, failed, cancelled');
  bad([{ ...RUN, what: null }], 'hello.jobs[0].what must be a string');
  // over an entry size (an id over 128 characters, a kind over 64, a what over 256): left out and
  // counted in omitted, as entries over CC_MAX_IDENTITY_BYTES are (test/audit/identity-entries-audit.test.js)
  for (const over of [{ job: 'x'.repeat(129) }, { kind: 'k'.repeat(65) }, { what: 'x'.repeat(257) }]) {
    const parsed = hello({ jobs: [{ ...RUN, ...over }, DONE] });
    assert.deepEqual(parsed.frame.identity.jobs, [DONE]);
    assert.deepEqual(parsed.frame.identity.omitted, { peripherals: 0, jobs: 1, budget: true });
  }
  const many = Array.from({ length: MAX_JOBS + 1 }, (_, i) => ({ ...DONE, job: `j${i}` }));
  // parsed whole, not refused: the bridge keeps the first MAX_JOBS (fitIdentity, test/link/identity-budget.test.js)
  assert.equal(hello({ jobs: many }).frame.identity.jobs.length, MAX_JOBS + 1);
  assert.equal(hello({ jobs: many.slice(1) }).ok, true);
});

test('info frames may carry jobs (the whole current list); an info without it leaves jobs alone', () => {
  const info = (extra) => parse({ type: 'info', computerLabel: null, peripherals: [], ...extra });
  assert.deepEqual(info({ jobs: [DONE] }).frame.jobs, [DONE]);
  assert.equal('jobs' in info({}).frame, false);
  assert.deepEqual(info({ jobs: 'x' }), { ok: false, error: 'info.jobs must be an array' });
  assert.deepEqual(info({ jobs: [{ ...DONE, state: 1 }] }), { ok: false, error: 'info.jobs[0].state must be one of running, done, failed, cancelled' });
});

test('job changes for the log and the list-computers line', () => {
  assert.deepEqual(jobChanges(null, [RUN, DONE]), ['job "a1" started', 'job "b2" done']);
  assert.deepEqual(jobChanges([RUN, DONE], [{ ...RUN, state: 'cancelled' }]), ['job "a1" running -> cancelled', 'job "b2" gone']);
  assert.deepEqual(jobChanges([RUN], [RUN]), []);
  assert.deepEqual(jobChanges([], [{ ...RUN, job: 'a\nb' }]), ['job "a\\nb" started'], 'ids are quoted: no line breaks in the log');
  assert.equal(jobsLine(null), '');
  assert.equal(jobsLine([]), '');
  assert.equal(jobsLine([RUN, DONE]), '; jobs: a1 running (exec-lua: while true do sleep(1) end), b2 done (run-program: build)');
});

test('the bridge: hello jobs reach list-computers and GET /computers at once; info frames keep them current; bad ones are refused or dropped', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 3 });
    c.ws.close();
    const relinked = new FakeComputer(bridge.linkUrl, { computerId: 3 });
    assert.equal((await relinked.link({ type: 'hello', computerId: 3, jobs: [RUN, DONE] })).type, 'hello-ok');
    await until(() => bridge.links.get(3)?.identity.jobs !== null);
    const listed = await callTool(bridge, 'list-computers');
    const [entry] = listed.structuredContent.computers;
    assert.deepEqual(entry.jobs, [RUN, DONE]);
    assert.equal(validate(entry, COMPUTER_SCHEMA, 'computer'), null);
    assert.match(listed.content[0].text, /; peripherals not said; jobs: a1 running \(exec-lua: while true do sleep\(1\) end\), b2 done \(run-program: build\); connected /);
    const rest = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/computers'))).json();
    assert.deepEqual(rest[0].jobs, [RUN, DONE]);

    relinked.send({ type: 'info', computerLabel: null, peripherals: [], jobs: [{ ...RUN, state: 'done' }] });
    await until(() => bridge.links.get(3).identity.jobs.length === 1);
    assert.deepEqual(bridge.links.get(3).identity.jobs, [{ ...RUN, state: 'done' }]);
    assert.ok(bridge.logs.some((l) => /computer 3 \(Label: null\): job "a1" running -> done, job "b2" gone/.test(l)), bridge.logs.join('\n'));
    relinked.send({ type: 'info', computerLabel: 'x', peripherals: [] }); // an older program: jobs untouched
    await until(() => bridge.links.get(3).label === 'x');
    assert.deepEqual(bridge.links.get(3).identity.jobs, [{ ...RUN, state: 'done' }]);
    relinked.send({ type: 'info', computerLabel: 'y', peripherals: [], jobs: [{ job: 5 }] });
    await until(() => bridge.logs.some((l) => /info\.jobs\[0\]\.job must be a non-empty string.*frame dropped/.test(l)));
    assert.equal(bridge.links.get(3).label, 'x');

    const refused = new FakeComputer(bridge.linkUrl, { computerId: 4 });
    const answer = await refused.link({ type: 'hello', computerId: 4, jobs: [{ ...RUN, state: '?' }] });
    assert.equal(answer.type, 'hello-error');
    assert.match(answer.error, /hello\.jobs\[0\]\.state must be one of running, done, failed, cancelled/);
    await relinked.close();
  }));
