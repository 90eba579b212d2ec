// CC's event queue holds at most 256 events per computer (ComputerExecutor.QUEUE_LIMIT) and drops
// what is queued beyond that, silently. cc-emu does the same; with holdEvents()/releaseEvents() the
// requests a bridge sent while the computer ran arrive together, as in CC, and with syncHost what the
// host sends in answer to a frame is queued before the computer goes on. These tests show the
// program's guards against that limit: send-input's budget across calls (its marks counted), the
// expiry of a mark CC dropped, and the bridge's 128 requests in flight leaving room for the rest.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { linkAddress, useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };

// The player's shell in background mode: counts the characters typed; enter prints the count.
const COUNTER = `
local n = 0
while true do
    local e, a = os.pullEvent()
    if e == "char" then n = n + 1
    elseif e == "key" and a == keys.enter then print("chars " .. n) end
end
`;

/** A computer in background mode (COUNTER as its shell), linked to a fake bridge; the link answers a ping. */
async function counting(t, opts = {}) {
  const bridge = await startFakeBridge();
  t.after(() => bridge.close());
  const c = useComputer(t, { url: bridge.url, args: ['--background'], files: { 'shell.lua': COUNTER }, ...opts });
  const link = await bridge.liveLink();
  return { bridge, c, link };
}

/** Sends the requests so that all arrive in CC's queue together; resolves with their answers. */
async function together(c, link, requests) {
  c.holdEvents();
  const answers = requests.map(([method, params]) => link.request(method, params, 30000));
  while (c.heldEvents < requests.length) await new Promise((r) => setTimeout(r, 5));
  c.releaseEvents();
  return Promise.all(answers);
}

/** Presses enter (again while the queue is still busy) and resolves with the count the shell printed. */
async function charsSeen(c, link) {
  const since = c.output.length;
  for (let i = 0; ; i++) {
    const r = await link.request('send-input', { keys: ['enter'] });
    if (r.ok) break;
    assert.match(r.error, /try again shortly/);
    assert.ok(i < 100, 'enter was refused 100 times');
    await new Promise((res) => setTimeout(res, 10));
  }
  const { match } = await c.waitForOutput(/chars (\d+)\n/, 10000, since);
  return Number(match[1]);
}

describeLua('cc-emu: CC\'s event queue', () => {
  test('holds 256 events; what is queued beyond that is dropped without an error', T, async (t) => {
    const c = useComputer(t, {
      command: 'p',
      files: {
        'p.lua': `
          print(pcall(function() for i = 1, 300 do os.queueEvent("e", i) end end))
          local n, last = 0, 0
          os.startTimer(0)
          while true do
            local name, i = os.pullEvent()
            if name == "timer" then break end
            n, last = n + 1, i
          end
          print(n, last)`,
      },
    });
    const { output, code } = await c.waitForExit();
    assert.equal(code, 0);
    assert.equal(output, 'true\n256\t256\n');
    assert.equal(c.dropped.length, 44);
    assert.ok(c.dropped.every((name) => name === 'e'));
  });
});

describeLua('send-input and CC\'s 256-event queue', () => {
  test('three calls arriving together: every event an answer says was queued reaches the shell (the later calls are refused)', T, async (t) => {
    const { c, link } = await counting(t);
    const answers = await together(c, link, [1, 2, 3].map(() => ['send-input', { text: 'x'.repeat(90) }]));
    const queued = answers.filter((a) => a.ok).reduce((n, a) => n + a.result.queued, 0);
    assert.equal(answers[0].ok, true, JSON.stringify(answers[0]));
    assert.equal(answers[0].result.queued, 90);
    // the second call is refused and queues a probe mark, one more event the third call counts
    for (const [a, held] of [[answers[1], 91], [answers[2], 92]]) {
      assert.equal(a.ok, false, JSON.stringify(a));
      assert.match(a.error, new RegExp(`still holds ${held} events of earlier send-input calls; with these 91 it would be over 100: try again shortly`));
    }
    assert.equal(await charsSeen(c, link), queued);
    assert.deepEqual(c.dropped, []);
  });

  test('bug: a mark CC dropped (its queue full) is settled by a later mark: the refused call queues a probe; before the 5 s rule, its events counted as waiting for ever', T, async (t) => {
    const { c, link } = await counting(t);
    // A chunk fills the queue to 253 behind the send-input that arrived with it: the call's 3 events
    // fit, its mark does not.
    const [filled, typed] = await together(c, link, [
      ['exec-lua', { code: 'for i = 1, 253 do os.queueEvent("filler") end' }],
      ['send-input', { keys: ['a'] }],
    ]);
    assert.equal(filled.ok, true, JSON.stringify(filled));
    assert.equal(typed.result.queued, 3, JSON.stringify(typed));
    assert.deepEqual(c.dropped, ['mcp_computer_input']);
    // Its 3 events and mark still count: 97 more (98 with their mark) are refused ...
    const refused = await link.request('send-input', { text: 'y'.repeat(97) });
    assert.equal(refused.ok, false, JSON.stringify(refused));
    assert.match(refused.error, /still holds 4 events/);
    // ... but the refused call queued a probe mark: back before the next request, it shows the
    // events before it left the queue (no clock involved).
    const later = await link.request('send-input', { text: 'y'.repeat(97) });
    assert.equal(later.ok, true, JSON.stringify(later));
    assert.equal(await charsSeen(c, link), 1 + 97);
  });

  test('bug: a mark still in CC\'s queue was taken as lost once os.clock had run 5 s (a computer CC runs slowly), so a call over the budget was let in', T, async (t) => {
    const { c, link } = await counting(t, { syncHost: true });
    // The computer is slow: between the first call and the second (both already in its queue),
    // 10 s of os.clock pass while the first call's events and mark still wait behind the second.
    let jumped = false;
    c.onSend = (text) => {
      if (!jumped && text.includes('"queued":90')) {
        jumped = true;
        c.advanceClock(10);
      }
    };
    const [first, second] = await together(c, link, [['send-input', { text: 'x'.repeat(90) }], ['send-input', { text: 'y'.repeat(90) }]]);
    assert.equal(first.result.queued, 90, JSON.stringify(first));
    assert.ok(jumped);
    assert.equal(second.ok, false, JSON.stringify(second));
    assert.match(second.error, /still holds 91 events of earlier send-input calls/);
    assert.equal(await charsSeen(c, link), 90);
  });

  test('bug: each call\'s mark took a place in CC\'s queue uncounted, so with the bridge\'s 128 requests in flight, calls of 1 event each overflowed it (requests dropped, never answered)', T, async (t) => {
    const { bridge, c, link } = await counting(t, { syncHost: true });
    // A bridge that keeps 128 requests in flight (CC_MAX_REQUESTS_PER_COMPUTER) and answers at once:
    // each answer the program sends is followed by the next request before the program goes on.
    const TOTAL = 400;
    const request = () => JSON.stringify({ type: 'request', id: randomUUID(), method: 'send-input', params: { text: 'x' } });
    let sent = 0;
    const answers = [];
    c.onSend = (text) => {
      const frame = JSON.parse(text);
      if (frame.type !== 'response' || frame.id === undefined) return;
      answers.push(frame);
      if (sent < TOTAL) {
        sent += 1;
        c.queueEvent('websocket_message', linkAddress(bridge.url), request(), false);
      }
    };
    c.holdEvents();
    for (; sent < 128; sent += 1) c.queueEvent('websocket_message', linkAddress(bridge.url), request(), false);
    c.releaseEvents();
    // until every request is answered, or CC dropped something (then some never will be)
    for (let i = 0; i < 4000 && answers.length < TOTAL && c.dropped.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    c.onSend = null;
    assert.deepEqual(c.dropped, [], 'nothing was dropped');
    assert.equal(answers.length, TOTAL, 'every request was answered');
    const queued = answers.filter((a) => a.ok).reduce((n, a) => n + a.result.queued, 0);
    assert.ok(queued > 0);
    for (const a of answers.filter((x) => !x.ok)) assert.match(a.error, /try again shortly/);
    assert.equal(await charsSeen(c, link), queued);
  });
});

describeLua('the program\'s own events and CC\'s 256-event queue', () => {
  test('bug: a chunk that filled CC\'s queue made the pacing event of its own answer get dropped, so the answer was never sent', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url });
    await c.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    // 256 events fill the queue; 0.3 s of running makes the answer yield to pace itself (after 0.25 s),
    // and the event it queues to go on is dropped.
    const code = 'for i = 1, 256 do os.queueEvent("flood") end local t = os.clock() repeat until os.clock() - t > 0.3 '
      + 'return { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }';
    const res = await link.request('exec-lua', { code }, 20000);
    assert.equal(res.ok, true, JSON.stringify(res));
    assert.deepEqual(res.result.returns, [{ type: 'table', value: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }]);
    assert.deepEqual(c.dropped, ['mcp_computer_pace'], 'the pacing event was dropped, then queued again');
    assert.equal((await link.request('ping')).ok, true);
  });
});

describeLua('the program\'s own timers and CC\'s 256-event queue', () => {
  test('bug: the reconnect wait\'s timer, dropped by CC while a detached job kept its queue full, left the program waiting forever', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    // waits below 2 s (the reconnect's) take 300 ms here, the rest 10 ms a second
    const c = useComputer(t, { url: bridge.url, syncHost: true, timerMs: (s) => (s < 2 ? 300 : s * 10) });
    await c.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    // a job that, once told, keeps CC's queue full until os.clock() jumps 1000 s
    const flood = 'os.pullEvent("flood") local t0 = os.clock() for i = 1, 256 do os.queueEvent("f") end '
      + 'while os.clock() - t0 < 1000 do os.pullEvent("f") os.queueEvent("f") os.queueEvent("f") end';
    const job = await link.request('exec-lua', { code: flood, detach: true });
    assert.equal(job.ok, true, JSON.stringify(job));
    const since = c.output.length;
    link.close(1000);
    const { match } = await c.waitForOutput(/retrying in ([\d.]+) s/, 10000, since);
    const [wait] = c.timersStarted.filter(([, s]) => s === Number(match[1])).at(-1);
    c.queueEvent('flood');
    // the reconnect wait's timer fires into the full queue and is dropped
    for (let i = 0; i < 1000 && !c.droppedTimers.includes(wait); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(c.droppedTimers.includes(wait), `dropped: ${[...new Set(c.dropped)]}, timers ${c.droppedTimers}`);
    c.advanceClock(1000); // the job ends its flood; the wait is long over
    const again = await bridge.link(1, 10000);
    await again.hello;
    assert.equal((await again.request('ping')).ok, true);
  });
  test('bug: the identity check\'s timer, dropped by CC while a job kept its queue full, was never started again: a label change went unreported', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url, syncHost: true, timerMs: (s) => s * 10 });
    await c.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    const flood = 'os.pullEvent("flood") local t0 = os.clock() for i = 1, 256 do os.queueEvent("f") end '
      + 'while os.clock() - t0 < 1000 do os.pullEvent("f") os.queueEvent("f") os.queueEvent("f") end';
    assert.equal((await link.request('exec-lua', { code: flood, detach: true })).ok, true);
    c.queueEvent('flood');
    // an identity check timer (every 2 s) fires into the full queue and is dropped
    const checks = () => c.timersStarted.filter(([, s]) => s === 2).map(([id]) => id);
    for (let i = 0; i < 1000 && !c.droppedTimers.some((id) => checks().includes(id)); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(c.droppedTimers.some((id) => checks().includes(id)), `dropped timers ${c.droppedTimers}`);
    c.advanceClock(1000); // the job ends its flood, which the next identity check reports
    await link.waitFrame((f) => f.type === 'info' && f.jobs?.[0]?.state === 'done', 10000);
    const set = await link.request('exec-lua', { code: 'os.setComputerLabel("relabelled")' });
    assert.equal(set.ok, true, JSON.stringify(set));
    const info = await link.waitFrame((f) => f.type === 'info' && f.computerLabel === 'relabelled', 10000);
    assert.equal(info.computerLabel, 'relabelled');
  });
  for (const [name, opts] of [['http.websocketAsync', {}], ['the blocking http.websocket (older CC)', { noAsync: true }]]) {
    test(`bug: a connect whose websocket_success CC dropped (its queue full) was waited for forever (${name})`, T, async (t) => {
      const bridge = await startFakeBridge();
      t.after(() => bridge.close());
      const c = useComputer(t, { url: bridge.url, syncHost: true, timerMs: (s) => (s < 2 ? 300 : s * 10), ...opts });
      await c.waitForOutput('waiting for requests');
      const link = await bridge.link(0);
      const flood = 'os.pullEvent("flood") local t0 = os.clock() for i = 1, 256 do os.queueEvent("f") end '
        + 'while os.clock() - t0 < 1000 do os.pullEvent("f") os.queueEvent("f") os.queueEvent("f") end';
      assert.equal((await link.request('exec-lua', { code: flood, detach: true })).ok, true);
      c.opts.holdConnect = true;
      link.close(1000);
      while (c.held.length === 0) await new Promise((r) => setTimeout(r, 5));
      // the reconnect waits for its answer; the queue fills; the answer comes and is dropped
      c.queueEvent('flood');
      c.releaseConnects();
      for (let i = 0; i < 1000 && !c.dropped.includes('websocket_success'); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(c.dropped.includes('websocket_success'), `dropped: ${[...new Set(c.dropped)]}`);
      c.advanceClock(1000); // the job ends its flood; 60 s without an answer are long over
      const again = await bridge.link(2, 10000); // link 1 is the connect whose answer was lost
      await again.hello;
      assert.equal((await again.request('ping')).ok, true);
      assert.match(c.output, /could not connect: no answer to the connect within 60 s/);
    });
  }

  test('a connect given up on after 60 s that succeeds after all is closed; the next one links', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url, holdConnect: true, timerMs: () => 300 });
    while (c.held.length === 0) await new Promise((r) => setTimeout(r, 5));
    c.advanceClock(61);
    c.queueEvent('anything'); // the first event after the 60 s ends the wait
    await c.waitForOutput('could not connect: no answer to the connect within 60 s');
    c.releaseConnects(); // its answer comes now, during the wait to reconnect
    const late = await bridge.link(0);
    assert.equal((await late.closed).code, 1006, 'the late socket was closed by the program');
    assert.deepEqual(late.frames, [], 'no hello on it');
    const linked = await bridge.link(1, 10000);
    await linked.hello;
    assert.equal((await linked.request('ping')).ok, true);
  });
});
