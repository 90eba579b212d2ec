// The part B safe tools on the bridge side (peripherals, programs, screen, jobs) against fake computers
// (real WebSocket clients): what each sends, how answers render, and every malformed answer as a
// protocol error naming what was wrong. The Lua side is tested under test/lua/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, withBridge } from '../helpers.js';

const text = (result) => result.content.map((c) => c.text).join('\n');

/** A fake computer answering each method from `answers` (a value, or a function of the params). */
async function computerWith(bridge, answers, seen = []) {
  return linkComputer(bridge, {
    computerId: 3,
    onRequest: (frame) => {
      seen.push(frame);
      const a = answers[frame.method];
      if (a === undefined) return { ok: false, error: 'unknown method' };
      return typeof a === 'function' ? a(frame.params) : { ok: true, result: a };
    },
  });
}

test('every part B tool is offered with CC_EXEC_LUA=off, with the right annotations', () =>
  withBridge({ CC_EXEC_LUA: 'off' }, async (bridge) => {
    const byName = Object.fromEntries(bridge.tools.list().map((t) => [t.name, t]));
    for (const name of ['list-peripherals', 'check-lua', 'read-screen', 'job-status']) assert.equal(byName[name].annotations.readOnlyHint, true, name);
    for (const name of ['call-peripheral', 'run-program', 'send-input', 'job-cancel']) assert.equal(byName[name].annotations.readOnlyHint, false, name);
    assert.equal(byName['call-peripheral'].annotations.destructiveHint, true);
  }));

test('a program too old for a part B method: the update error', () =>
  withBridge({}, async (bridge) => {
    await computerWith(bridge, {});
    for (const [name, args] of [['list-peripherals', {}], ['read-screen', {}], ['job-status', {}], ['run-program', { command: 'ls' }]]) {
      const r = await callTool(bridge, name, { computerId: 3, ...args });
      assert.equal(r.isError, true);
      assert.match(text(r), new RegExp(`too old to know "${name}"; update it from the bridge`));
    }
  }));

test('detach on a program from before detach (it ran the chunk and answered its result): says so', () =>
  withBridge({}, async (bridge) => {
    await computerWith(bridge, { 'exec-lua': { output: '', returns: [{ type: 'number', value: 1 }], truncated: false } });
    const r = await callTool(bridge, 'exec-lua', { computerId: 3, code: 'return 1', detach: true });
    assert.equal(r.isError, true);
    assert.match(text(r), /^computer 3 \(Label: null\) ran the exec-lua without detaching: its mcp-computer predates detach:true; update it from the bridge/);
  }));

test('malformed answers are protocol errors that name what was expected', () =>
  withBridge({}, async (bridge) => {
    await computerWith(bridge, {
      'list-peripherals': { peripherals: [{ name: 'left', types: 'monitor', methods: [] }] },
      'call-peripheral': { returns: 'x' },
      'run-program': 42,
      'check-lua': { ok: false, errors: [{ line: 'one', message: 'x' }] },
      'read-screen': { width: 51, height: 19, cursorX: 1, cursorY: 1, lines: [1], foreground: [], background: [] },
      'send-input': {},
      'job-status': (p) => ({
        ok: true,
        result:
          p.job === 'done'
            ? { job: p.job, kind: 'exec-lua', what: '', state: 'done', outputBytes: 0, output: '', cursor: 0, returns: [{ type: 'table', value: {}, bytes: [{ path: ['a'], base64: '*' }] }] }
            : p.job
              ? { job: p.job, kind: 'exec-lua', what: '', state: 'weird', outputBytes: 0 }
              : { jobs: [{}] },
      }),
      'job-cancel': { job: 'j' },
    });
    const cases = [
      ['list-peripherals', {}, /expected \{peripherals: \[\{name, types, methods\}\]\}/],
      ['call-peripheral', { name: 'left', method: 'x' }, /"returns" is a string, not an array/],
      ['run-program', { command: 'ls' }, /the result is a number, not an object/],
      ['check-lua', { code: 'x' }, /expected errors as \[\{line, message\}\]/],
      ['read-screen', {}, /expected \{width, height, cursorX, cursorY, lines, foreground, background\}/],
      ['send-input', { text: 'x' }, /expected \{queued\}/],
      ['job-status', {}, /expected \{jobs: /],
      ['job-status', { job: 'j' }, /expected \{job, kind, what, state, outputBytes, output, cursor\}/],
      ['job-status', { job: 'done' }, /"returns"\[0\]\.bytes\[0\]\.base64 is not base64 text/],
      ['job-cancel', { job: 'j' }, /expected \{job, kind, what, state, outputBytes\}/],
      ['exec-lua', { code: 'x', detach: true }, /too old to know "exec-lua"/],
    ];
    for (const [name, args, pattern] of cases) {
      const r = await callTool(bridge, name, { computerId: 3, ...args });
      assert.equal(r.isError, true, name);
      assert.match(text(r), pattern, name);
      if (name !== 'exec-lua') assert.match(text(r), /^protocol error: computer 3 \(Label: null\) sent a malformed/, name);
    }
  }));

test('what the tools send, and how job answers render', () =>
  withBridge({}, async (bridge) => {
    const seen = [];
    const status = {
      running: { job: 'j1', kind: 'run-program', what: 'forever', state: 'running', outputBytes: 70000, output: 'tick\n', cursor: 70000, skipped: 4464, more: false, partial: 'tic' },
      ok: { job: 'j2', kind: 'run-program', what: 'ls', state: 'done', outputBytes: 3, output: 'a\n', cursor: 3, returns: [{ type: 'boolean', value: true }], ok: true },
      bad: { job: 'j3', kind: 'run-program', what: 'x', state: 'failed', outputBytes: 0, output: '', cursor: 0, returns: [{ type: 'boolean', value: false }], ok: true, more: true },
      err: { job: 'j4', kind: 'exec-lua', what: 'x', state: 'failed', outputBytes: 0, output: '', cursor: 0, returns: [], ok: false, error: 'boom' },
    };
    await computerWith(bridge, {
      'run-program': (p) => ({ ok: true, result: p.detach ? { job: 'j9', state: 'running' } : { output: 'hi\n', returns: [{ type: 'boolean', value: false }], truncated: true } }),
      'exec-lua': (p) => ({ ok: true, result: { job: 'j8' } }),
      'call-peripheral': { output: 'printed\n', returns: [], truncated: true },
      'check-lua': { ok: false, errors: [{ line: null, message: 'odd' }] },
      'send-input': { queued: 3 },
      'job-status': (p) => ({ ok: true, result: p.job ? status[p.job] : { jobs: [] } }),
      'job-cancel': { job: 'j2', kind: 'run-program', what: 'ls', state: 'done', outputBytes: 3 },
    }, seen);
    const run = await callTool(bridge, 'run-program', { computerId: 3, command: 'x y' });
    assert.equal(text(run), 'hi\n[program failed]\n[output was truncated to fit the link message limit]');
    assert.deepEqual(run.structuredContent, { computerId: 3, success: false, output: 'hi\n', truncated: true });
    const detached = await callTool(bridge, 'run-program', { computerId: 3, command: 'x', detach: true });
    assert.deepEqual(detached.structuredContent, { computerId: 3, success: true, output: '', truncated: false, job: 'j9' });
    assert.equal((await callTool(bridge, 'exec-lua', { computerId: 3, code: 'x', detach: true })).structuredContent.job, 'j8');
    const call = await callTool(bridge, 'call-peripheral', { computerId: 3, name: 'left', method: 'write', args: ['a', 1, null, { b: [true] }] });
    assert.equal(text(call), 'printed\n(nothing returned)\n[returned values were truncated to fit the link message limit]');
    assert.equal(text(await callTool(bridge, 'check-lua', { computerId: 3, path: 'a.lua' })), 'line ?: odd');
    assert.equal(text(await callTool(bridge, 'send-input', { computerId: 3, keys: ['enter'] })), 'Queued 3 input events.');
    assert.equal(text(await callTool(bridge, 'job-status', { computerId: 3 })), 'No jobs on computer 3 (Label: null).');
    assert.equal(
      text(await callTool(bridge, 'job-status', { computerId: 3, job: 'running', cursor: 5 })),
      '[4464 bytes of older output were dropped on the computer]\ntick\n(line in progress: "tic")\n[job j1 (run-program: forever): running; cursor 70000]',
    );
    assert.match(text(await callTool(bridge, 'job-status', { computerId: 3, job: 'ok' })), /^a\nprogram succeeded\n/);
    assert.match(text(await callTool(bridge, 'job-status', { computerId: 3, job: 'bad' })), /^program failed\n.*more output is waiting/);
    assert.match(text(await callTool(bridge, 'job-status', { computerId: 3, job: 'err' })), /^error: boom\n/);
    assert.equal(text(await callTool(bridge, 'job-cancel', { computerId: 3, job: 'j2' })), 'Job j2 had already ended (done); nothing to cancel.');

    const sent = Object.fromEntries(seen.map((f) => [`${f.method}${f.params?.detach ? '+detach' : ''}`, f.params]));
    assert.deepEqual(sent['run-program'], { command: 'x y' });
    assert.deepEqual(sent['run-program+detach'], { command: 'x', detach: true });
    assert.deepEqual(sent['exec-lua+detach'], { code: 'x', detach: true });
    assert.deepEqual(sent['call-peripheral'], { name: 'left', method: 'write', args: ['a', 1, null, { b: [true] }], argCount: 4 });
    assert.deepEqual(sent['check-lua'], { path: 'a.lua' });
    assert.deepEqual(sent['send-input'], { keys: ['enter'] });
    // argument checks before anything is sent
    assert.match(text(await callTool(bridge, 'send-input', { computerId: 3, keys: Array(65).fill('a') })), /at most 64 are allowed/);
  }));

test('a tool argument\'s maxLength counts characters: 128 non-BMP characters are a valid job id (256 UTF-16 units were refused), 129 are not', () =>
  withBridge({}, async (bridge) => {
    const seen = [];
    await computerWith(bridge, { 'job-status': (p) => ({ ok: false, error: `no job ${p.job.length / 2}` }) }, seen);
    const job = '\u{1F600}'.repeat(128);
    const ok = await callTool(bridge, 'job-status', { computerId: 3, job });
    assert.match(text(ok), /no job 128/);
    assert.equal(seen.at(-1).params.job, job);
    const long = await callTool(bridge, 'job-status', { computerId: 3, job: job + '\u{1F600}' });
    assert.equal(long.isError, true);
    assert.match(text(long), /argument "job" must be at most 128 characters/);
    assert.equal(seen.length, 1, 'the long one was not sent');
  }));

test('CC_EXEC_MAX_RESULT_VALUES bounds call-peripheral, run-program and job-status returns too: 1000 values pass, 1001 are a protocol error naming it', () =>
  withBridge({ CC_EXEC_MAX_RESULT_VALUES: '1000' }, async (bridge) => {
    // the returns array, the descriptor, its type and value, and n numbers: n + 4 values
    const returnsOf = (n) => [{ type: 'table', value: Array.from({ length: n }, (_, i) => i) }];
    const size = (s) => Number(s.slice(s.lastIndexOf(' ') + 1));
    await computerWith(bridge, {
      'call-peripheral': (p) => ({ ok: true, result: { returns: returnsOf(size(p.method)) } }),
      'run-program': (p) => ({ ok: true, result: { output: '', returns: returnsOf(size(p.command)) } }),
      'job-status': (p) => ({
        ok: true,
        result: { job: p.job, kind: 'exec-lua', what: '', state: 'done', outputBytes: 0, output: '', cursor: 0, returns: returnsOf(size(p.job)) },
      }),
    });
    for (const [name, args] of [
      ['call-peripheral', (n) => ({ name: 'left', method: `m ${n}` })],
      ['run-program', (n) => ({ command: `x ${n}` })],
      ['job-status', (n) => ({ job: `j ${n}` })],
    ]) {
      const ok = await callTool(bridge, name, { computerId: 3, ...args(996) });
      assert.doesNotMatch(text(ok), /protocol error/, name);
      const over = await callTool(bridge, name, { computerId: 3, ...args(997) });
      assert.equal(over.isError, true, name);
      assert.match(text(over), /"returns" holds more than 1000 values \(CC_EXEC_MAX_RESULT_VALUES\)/, name);
    }
  }));
