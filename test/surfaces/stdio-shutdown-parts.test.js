// The pure parts of the --stdio shutdown (src/surfaces/stdio-shutdown.ts): what a request read but not
// run gets at a signal, what one still running gets when the shutdown after EOF stops waiting, and the clock's two bounds on a Writable that is never (or slowly) drained.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { until } from '../helpers.js';
import { cutOff, cutOffReason, expiryMessage, refusal, refusalOf, shutdownClock } from '../../dist/surfaces/stdio-shutdown.js';

const REASON = 'SIGTERM received';

test('refusal: a request gets -32003 naming the reason; a batch gets one per request; notifications, responses and malformed messages get none (they are handled as usual)', () => {
  const one = refusal({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, REASON);
  assert.equal(one.id, 7);
  assert.equal(one.error.code, -32003);
  assert.match(one.error.message, /^Service Unavailable: the bridge is shutting down \(SIGTERM received\); this request was read but not run/);
  assert.equal(refusal({ jsonrpc: '2.0', id: 'a', method: 'ping' }, REASON).id, 'a');
  const batch = refusal([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], REASON);
  assert.deepEqual(batch.map((a) => a.id), [1, 2]);
  assert.equal(refusal([{ jsonrpc: '2.0', method: 'notifications/initialized' }], REASON), null);
  assert.equal(refusal([], REASON), null);
  assert.equal(refusal({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, REASON), null);
  assert.equal(refusal({ jsonrpc: '2.0', id: 3, result: {} }, REASON), null);
  assert.equal(refusal({ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, REASON), null);
  assert.equal(refusal('ping', REASON), null);
  assert.equal(refusalOf('{"jsonrpc":"2.0","id":9,"method":"ping"}', REASON).id, 9);
  assert.equal(refusalOf('{"jsonrpc":', REASON), null);
});

test('cutOff: a request still running when the shutdown stops waiting gets -32003 with the bound that ran out; a batch one per request; anything else none', () => {
  const bounds = { idleMs: 300, maxMs: 1000 };
  const one = cutOff({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: {} }, cutOffReason('idle', 0, bounds));
  assert.equal(one.id, 'c');
  assert.equal(one.error.code, -32003);
  assert.equal(one.error.message, 'Service Unavailable: stdin ended and the bridge stopped waiting for this request, still running: it did not finish within 300 ms (MCP_STDIO_SHUTDOWN_IDLE_MS) with nothing else for the host to read. It was cancelled; send it again to a running bridge');
  assert.match(cutOff({ jsonrpc: '2.0', id: 1, method: 'ping' }, cutOffReason('idle', 10, bounds)).error.message, /the host took no byte of stdout for 300 ms \(MCP_STDIO_SHUTDOWN_IDLE_MS\)\. It was cancelled/);
  assert.match(cutOff({ jsonrpc: '2.0', id: 1, method: 'ping' }, cutOffReason('max', 0, bounds)).error.message, /the shutdown took 1000 ms \(MCP_STDIO_SHUTDOWN_MAX_MS\)\. It was cancelled/);
  assert.deepEqual(cutOff([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }], 'x').map((a) => a.id), [1]);
  assert.equal(cutOff({ jsonrpc: '2.0', method: 'notifications/initialized' }, 'x'), null);
  assert.equal(cutOff({ jsonrpc: '2.0', id: 3, result: {} }, 'x'), null);
});

/** The clock's timers are unref'd (they never keep the bridge alive): the test holds the loop itself. */
function expiry(stream, bounds, { limit = true } = {}) {
  const hold = setInterval(() => {}, 1000);
  return new Promise((resolve) => {
    const clock = shutdownClock(stream, bounds, (...args) => resolve(args));
    if (limit) clock.limit();
  }).finally(() => clearInterval(hold));
}

/** A Writable that takes a chunk only when `take()` is called (a host reading at its own pace). */
function heldWritable() {
  const callbacks = [];
  const stream = new Writable({ highWaterMark: 1, write: (_chunk, _enc, cb) => callbacks.push(cb) });
  return { stream, take: () => callbacks.shift()?.() };
}

test('shutdownClock: a stream the host takes nothing of expires "idle", with the bytes still queued, before limit() too (the lines read still being run)', async () => {
  const { stream } = heldWritable();
  for (let i = 0; i < 3; i++) stream.write(Buffer.alloc(1000));
  const [why, unsent] = await expiry(stream, { idleMs: 100, maxMs: 3_600_000 }, { limit: false });
  assert.equal(why, 'idle');
  assert.equal(unsent, 3000);
});

test('shutdownClock: a host that keeps taking bytes is not cut off as idle, only at maxMs ("max"); stop() ends the clock without expiry', async () => {
  const { stream, take } = heldWritable();
  for (let i = 0; i < 1000; i++) stream.write(Buffer.alloc(10));
  // one chunk taken every 10 ms: progress well within idleMs every time
  const reader = setInterval(take, 10);
  const [why] = await expiry(stream, { idleMs: 2000, maxMs: 300 });
  clearInterval(reader);
  assert.equal(why, 'max');
  let expired = false;
  const clock = shutdownClock(stream, { idleMs: 100, maxMs: 200 }, () => (expired = true));
  clock.stop();
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(expired, false);
});

test('shutdownClock: with nothing queued (stdout a file, or a fast host) time does not count until limit(): the lines read are still being run; after limit() it does (a call or a close that hangs)', async () => {
  const stream = new Writable({ write: (_chunk, _enc, cb) => cb() });
  let expired = null;
  const hold = setInterval(() => {}, 1000);
  const clock = shutdownClock(stream, { idleMs: 20, maxMs: 3_600_000 }, (why, unsent) => (expired = { why, unsent }));
  stream.write('x');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(expired, null, 'no expiry while the bridge is still running the lines read');
  clock.limit();
  clock.limit(); // once is enough; a second call changes nothing
  await until(() => expired !== null);
  clearInterval(hold);
  assert.deepEqual(expired, { why: 'idle', unsent: 0 });
});

test('expiryMessage names the variable and what was not taken', () => {
  const bounds = { idleMs: 5000, maxMs: 60000 };
  assert.equal(expiryMessage('max', 12, bounds), 'the shutdown took 60000 ms (MCP_STDIO_SHUTDOWN_MAX_MS) with 12 bytes of stdout not taken by the host');
  assert.equal(expiryMessage('idle', 34, bounds), 'the host took no byte of stdout for 5000 ms (MCP_STDIO_SHUTDOWN_IDLE_MS) with 34 bytes not taken');
  assert.equal(expiryMessage('idle', 0, bounds), 'the shutdown waited 5000 ms (MCP_STDIO_SHUTDOWN_IDLE_MS) with nothing for the host to read: calls or links still closing');
});
