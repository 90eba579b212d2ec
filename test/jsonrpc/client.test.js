// The JSON-RPC client over an in-memory transport: ids, answers, errors, timeouts, cancellation,
// notifications both ways, requests from the server, and closing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonRpcClient, RpcClientError } from '../../dist/jsonrpc/client.js';
import { createLogger } from '../../dist/log.js';
import { memoryTransport } from './memory-transport.js';

async function started(options = {}, transportOptions) {
  const transport = memoryTransport(transportOptions);
  const lines = [];
  const client = new JsonRpcClient(transport, { timeoutMs: 10_000, log: createLogger('debug', (l) => lines.push(l)), name: 'upstream test', ...options });
  await client.start();
  return { client, transport, lines };
}

const rejectsWith = (promise, code, message) =>
  assert.rejects(promise, (err) => {
    assert.ok(err instanceof RpcClientError, String(err));
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  });

test('requests get increasing ids and resolve with their own answers, in any order', async () => {
  const { client, transport } = await started();
  const a = client.request('a', { x: 1 });
  const b = client.request('b');
  assert.deepEqual(transport.sent.map((s) => s.message), [
    { jsonrpc: '2.0', id: 1, method: 'a', params: { x: 1 } },
    { jsonrpc: '2.0', id: 2, method: 'b' },
  ]);
  assert.equal(client.inFlight, 2);
  transport.deliver([{ jsonrpc: '2.0', id: 2, result: 'B' }, { jsonrpc: '2.0', id: 1, result: { ok: true } }]);
  assert.deepEqual(await a, { ok: true });
  assert.equal(await b, 'B');
  assert.equal(client.inFlight, 0);
});

test('an error answer rejects with ERR_RPC_REMOTE carrying code and data', async () => {
  const { client, transport } = await started();
  const p = client.request('tools/call', {});
  transport.deliver({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Unknown tool', data: { name: 'x' } } });
  await assert.rejects(p, (err) => {
    assert.equal(err.code, 'ERR_RPC_REMOTE');
    assert.equal(err.rpcCode, -32602);
    assert.deepEqual(err.data, { name: 'x' });
    assert.equal(err.message, 'tools/call failed: Unknown tool (-32602)');
    return true;
  });
});

test('a timeout rejects with ERR_RPC_TIMEOUT, tells the server, and aborts the delivery', async () => {
  const { client, transport } = await started({ timeoutMs: 20 });
  const p = client.request('slow');
  await rejectsWith(p, 'ERR_RPC_TIMEOUT', /slow timed out after 20 ms/);
  const cancel = await transport.next((m) => m.method === 'notifications/cancelled');
  assert.deepEqual(cancel.params, { requestId: 1, reason: 'timed out after 20 ms' });
  assert.equal(transport.sent[0].signal.aborted, true);
  // a late answer is ignored
  transport.deliver({ jsonrpc: '2.0', id: 1, result: 'late' });
  const perCall = client.request('quick', undefined, { timeoutMs: 5 });
  await rejectsWith(perCall, 'ERR_RPC_TIMEOUT', /after 5 ms/);
});

test('requests time out on their own deadlines through one timer: a shorter one sent later first, the others keep waiting, and no timer is left once none is pending', async () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const { client, transport } = await started({ timeoutMs: 60_000 });
  const order = [];
  const long = client.request('long', undefined, { timeoutMs: 400 });
  const answered = client.request('answered');
  const short = client.request('short', undefined, { timeoutMs: 20 });
  long.catch(() => order.push('long'));
  short.catch(() => order.push('short'));
  assert.equal(timers(), before + 1, 'one timer for the three requests');
  await rejectsWith(short, 'ERR_RPC_TIMEOUT', /short timed out after 20 ms/);
  assert.equal(client.inFlight, 2, 'the others are still waiting');
  await rejectsWith(long, 'ERR_RPC_TIMEOUT', /long timed out after 400 ms/);
  assert.deepEqual(order, ['short', 'long']);
  transport.deliver({ jsonrpc: '2.0', id: 2, result: 'ok' });
  assert.equal(await answered, 'ok');
  assert.equal(client.inFlight, 0);
  assert.equal(timers(), before, 'no timer keeps the process alive once nothing is pending');
  // the next request reuses the timer, and an answer before its deadline lets it go again
  const quick = client.request('quick');
  assert.equal(timers(), before + 1);
  transport.deliver({ jsonrpc: '2.0', id: 4, result: 1 });
  assert.equal(await quick, 1);
  assert.equal(timers(), before);
});

test('aborting the signal cancels: ERR_RPC_CANCELLED and notifications/cancelled with the request id', async () => {
  const { client, transport } = await started();
  const controller = new AbortController();
  const p = client.request('tools/call', { name: 'x' }, { signal: controller.signal });
  controller.abort();
  await rejectsWith(p, 'ERR_RPC_CANCELLED', /tools\/call cancelled/);
  const cancel = await transport.next((m) => m.method === 'notifications/cancelled');
  assert.deepEqual(cancel.params, { requestId: 1, reason: 'cancelled by the caller' });
  await rejectsWith(client.request('y', {}, { signal: controller.signal }), 'ERR_RPC_CANCELLED', /before it was sent/);
  assert.equal(transport.sent.filter((s) => s.message.method === 'y').length, 0);
});

test('notifications go out; incoming ones reach their handlers until unsubscribed', async () => {
  const { client, transport } = await started();
  await client.notify('notifications/initialized');
  await client.notify('n', { a: 1 });
  assert.deepEqual(transport.sent.map((s) => s.message), [
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'n', params: { a: 1 } },
  ]);
  const seen = [];
  const off = client.onNotification('notifications/tools/list_changed', (params) => seen.push(params ?? null));
  transport.deliver({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  transport.deliver({ jsonrpc: '2.0', method: 'notifications/other', params: {} });
  off();
  transport.deliver({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  assert.deepEqual(seen, [null]);
});

test('requests from the server: ping is answered, anything else is method-not-found', async () => {
  const { transport } = await started();
  transport.deliver({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
  transport.deliver({ jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params: {} });
  assert.deepEqual(await transport.next((m) => m.id === 'p1'), { jsonrpc: '2.0', id: 'p1', result: {} });
  assert.deepEqual(await transport.next((m) => m.id === 7), {
    jsonrpc: '2.0',
    id: 7,
    error: { code: -32601, message: 'Method not found: sampling/createMessage' },
  });
});

test('garbage and answers to nobody are logged and ignored', async () => {
  const { client, transport, lines } = await started();
  transport.deliver({ hello: 1 });
  transport.deliver({ jsonrpc: '2.0', id: 99, result: 1 });
  transport.deliver({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  assert.ok(lines.some((l) => / warn upstream test sent an invalid JSON-RPC message/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /answered an unknown or finished request 99/.test(l)));
  const p = client.request('still-works');
  transport.deliver({ jsonrpc: '2.0', id: 1, result: 'yes' });
  assert.equal(await p, 'yes');
});

test('a send failure rejects the request with ERR_RPC_SEND; notify throws it', async () => {
  const { client } = await started({}, { failSend: (m) => m.method !== 'ok' });
  await rejectsWith(client.request('x'), 'ERR_RPC_SEND', /x did not get through: pipe broken/);
  await rejectsWith(client.notify('y'), 'ERR_RPC_SEND', /y could not be sent/);
  assert.equal(client.inFlight, 0);
});

test('requests whose sends share one promise (a stdio turn) fail together when it rejects, each with its own method', async () => {
  let fail;
  const shared = new Promise((_, reject) => (fail = reject));
  const sent = [];
  const transport = {
    async start() {},
    send: () => shared,
    sendRequest: (id, method, params) => (sent.push({ id, method, params }), shared),
    async close() {},
  };
  const client = new JsonRpcClient(transport, { timeoutMs: 10_000 });
  await client.start();
  const a = client.request('a', { x: 1 });
  const b = client.request('b');
  const c = client.request('c');
  assert.deepEqual(sent, [{ id: 1, method: 'a', params: { x: 1 } }, { id: 2, method: 'b', params: undefined }, { id: 3, method: 'c', params: undefined }], 'sendRequest gets the pieces');
  fail(new Error('EPIPE'));
  await rejectsWith(a, 'ERR_RPC_SEND', /^a did not get through: EPIPE$/);
  await rejectsWith(b, 'ERR_RPC_SEND', /^b did not get through: EPIPE$/);
  await rejectsWith(c, 'ERR_RPC_SEND', /^c did not get through: EPIPE$/);
  assert.equal(client.inFlight, 0);
});

test('a request answered before its shared send rejects keeps its answer; a later turn is a new group', async () => {
  let handlers;
  const turns = [];
  const turn = () => {
    const t = {};
    t.promise = new Promise((resolve, reject) => Object.assign(t, { resolve, reject }));
    turns.push(t);
    return t;
  };
  let current = turn();
  const transport = {
    async start(h) {
      handlers = h;
    },
    send: () => current.promise,
    async close() {},
  };
  const client = new JsonRpcClient(transport, { timeoutMs: 10_000 });
  await client.start();
  const a = client.request('a');
  const b = client.request('b');
  handlers.message({ jsonrpc: '2.0', id: 1, result: 'A' });
  turns[0].reject(new Error('broken'));
  assert.equal(await a, 'A');
  await rejectsWith(b, 'ERR_RPC_SEND', /^b did not get through: broken$/);
  // the next turn: its own promise, resolved; then the turn after fails only its own request
  current = turn();
  const c = client.request('c');
  current.resolve();
  await current.promise;
  current = turn();
  const d = client.request('d');
  current.reject(new Error('gone'));
  await rejectsWith(d, 'ERR_RPC_SEND', /^d did not get through: gone$/);
  handlers.message({ jsonrpc: '2.0', id: 3, result: 'C' });
  assert.equal(await c, 'C');
  // one settled promise returned again for every send still fails or answers each request once
  const done = Promise.resolve();
  current = { promise: done };
  const e = client.request('e');
  await done;
  const f = client.request('f');
  handlers.message([{ jsonrpc: '2.0', id: 5, result: 'E' }, { jsonrpc: '2.0', id: 6, result: 'F' }]);
  assert.deepEqual([await e, await f], ['E', 'F']);
  assert.equal(client.inFlight, 0);
});

test('a request with ends resolves with what they make of its answer or its failure, as .then(ok, failed) would', async () => {
  const seen = [];
  const ends = {
    ok: (result) => (seen.push(['ok', result]), { mapped: result }),
    failed: (err) => (seen.push(['failed', err.code]), { failedWith: err.code, message: err.message }),
  };
  const { client, transport } = await started({ timeoutMs: 20 });
  const answered = client.request('a', { x: 1 }, {}, ends);
  const remoteError = client.request('b', undefined, {}, ends);
  const timedOut = client.request('slow', undefined, {}, ends);
  const controller = new AbortController();
  const cancelled = client.request('c', undefined, { signal: controller.signal, timeoutMs: 10_000 }, ends);
  const throwing = client.request('d', undefined, {}, { ok: () => { throw new TypeError('bug in ok'); }, failed: ends.failed });
  transport.deliver([{ jsonrpc: '2.0', id: 1, result: 'A' }, { jsonrpc: '2.0', id: 2, error: { code: -1, message: 'no' } }, { jsonrpc: '2.0', id: 5, result: 'D' }]);
  controller.abort();
  assert.deepEqual(await answered, { mapped: 'A' });
  assert.deepEqual(await remoteError, { failedWith: 'ERR_RPC_REMOTE', message: 'b failed: no (-1)' });
  assert.deepEqual(await cancelled, { failedWith: 'ERR_RPC_CANCELLED', message: 'c cancelled' });
  await assert.rejects(throwing, (err) => err instanceof TypeError && err.message === 'bug in ok', 'a throw from ends rejects the promise with it');
  assert.deepEqual(await timedOut, { failedWith: 'ERR_RPC_TIMEOUT', message: 'slow timed out after 20 ms' });
  // before it is sent: an aborted signal, then a closed connection
  const aborted = new AbortController();
  aborted.abort();
  assert.deepEqual(await client.request('e', undefined, { signal: aborted.signal }, ends), { failedWith: 'ERR_RPC_CANCELLED', message: 'e cancelled before it was sent' });
  const failedThrows = { ok: ends.ok, failed: () => { throw new RangeError('bug in failed'); } };
  const inFlight = client.request('f', undefined, { timeoutMs: 10_000 }, failedThrows);
  transport.handlers.close('gone');
  await assert.rejects(inFlight, (err) => err instanceof RangeError);
  assert.deepEqual(await client.request('g', undefined, {}, ends), { failedWith: 'ERR_RPC_CLOSED', message: 'connection closed: gone' });
  await assert.rejects(client.request('h', undefined, {}, failedThrows), (err) => err instanceof RangeError);
  assert.deepEqual(seen.map(([kind, x]) => `${kind}:${x}`), ['ok:A', 'failed:ERR_RPC_REMOTE', 'failed:ERR_RPC_CANCELLED', 'failed:ERR_RPC_TIMEOUT', 'failed:ERR_RPC_CANCELLED', 'failed:ERR_RPC_CLOSED']);
  assert.equal(client.inFlight, 0);
});

test('the transport closing fails what is in flight and everything after', async () => {
  const { client, transport } = await started();
  const reasons = [];
  client.onClose((r) => reasons.push(r));
  const p = client.request('tools/call');
  transport.handlers.close('process exited with code 1');
  await rejectsWith(p, 'ERR_RPC_CLOSED', /before tools\/call was answered: process exited with code 1/);
  assert.equal(client.closed, 'process exited with code 1');
  await rejectsWith(client.request('again'), 'ERR_RPC_CLOSED', /connection closed: process exited/);
  await rejectsWith(client.notify('n'), 'ERR_RPC_CLOSED');
  transport.handlers.close('twice');
  assert.deepEqual(reasons, ['process exited with code 1']);
});

test('close() fails pending requests and closes the transport; a cancel after close is not sent', async () => {
  const { client, transport } = await started();
  const controller = new AbortController();
  const p = client.request('x', {}, { signal: controller.signal });
  await client.close('bridge shutting down');
  await rejectsWith(p, 'ERR_RPC_CLOSED', /bridge shutting down/);
  controller.abort();
  assert.equal(transport.closedCount, 1);
  assert.equal(transport.sent.filter((s) => s.message.method === 'notifications/cancelled').length, 0);
});

test('a broken answer that names a pending request fails it at once with ERR_RPC_MALFORMED; others are only logged', async () => {
  const { client, transport, lines } = await started();
  const neither = client.request('neither');
  const both = client.request('both');
  const badError = client.request('bad-error');
  const untouched = client.request('untouched');
  transport.deliver({ jsonrpc: '2.0', id: 1, outcome: 'x' });
  transport.deliver({ jsonrpc: '2.0', id: 2, result: 1, error: { code: 1, message: 'm' } });
  transport.deliver({ jsonrpc: '2.0', id: 3, error: 'nope' });
  await rejectsWith(neither, 'ERR_RPC_MALFORMED', /^neither: the answer is not JSON-RPC \(not a request, notification or response\)$/);
  await rejectsWith(both, 'ERR_RPC_MALFORMED', /^both: the answer is not JSON-RPC/);
  await rejectsWith(badError, 'ERR_RPC_MALFORMED', /^bad-error: the answer is not JSON-RPC \(error must have a numeric code and a string message\)$/);
  // a broken request from the server that reuses our id is not taken for an answer; a broken answer to nobody is logged
  transport.deliver({ jsonrpc: '2.0', id: 4, method: 7 });
  transport.deliver({ jsonrpc: '2.0', id: 77, outcome: 'x' });
  assert.equal(client.inFlight, 1);
  assert.equal(lines.filter((l) => / warn upstream test sent an invalid JSON-RPC message/.test(l)).length, 2, lines.join('\n'));
  transport.deliver({ jsonrpc: '2.0', id: 4, result: 'fine' });
  assert.equal(await untouched, 'fine');
});

test('a message nested deeper than maxDepth fails the request it answers (ERR_RPC_MALFORMED); otherwise it is dropped with a log line', async () => {
  const { client, transport, lines } = await started({ maxDepth: 8 });
  const deepValue = JSON.parse('['.repeat(100000) + ']'.repeat(100000));
  const a = client.request('tools/call');
  const b = client.request('tools/list');
  transport.deliver({ jsonrpc: '2.0', id: 1, result: { x: deepValue } });
  await rejectsWith(a, 'ERR_RPC_MALFORMED', /^tools\/call: the answer nests deeper than 8 levels \(CC_UPSTREAM_MAX_JSON_DEPTH\)$/);
  // a deep request from the server with the same id as one of ours, a deep notification, a deep batch item
  transport.deliver({ jsonrpc: '2.0', id: 2, method: 'x', params: deepValue });
  transport.deliver({ jsonrpc: '2.0', method: 'notifications/message', params: deepValue });
  transport.deliver([deepValue, { jsonrpc: '2.0', id: 2, result: 'B' }]);
  assert.equal(await b, 'B');
  assert.equal(lines.filter((l) => /upstream test sent a message that nests deeper than 8 levels; dropped/.test(l)).length, 3);
  // a transport that dropped an answer for its size fails that request; unknown ids are ignored
  const c = client.request('tools/call');
  transport.handlers.dropped(999, 'is too big');
  transport.handlers.dropped(null, 'is too big');
  transport.handlers.dropped(3, 'is over 10 bytes; dropped');
  await rejectsWith(c, 'ERR_RPC_MALFORMED', /^tools\/call: the answer is over 10 bytes; dropped$/);
  assert.equal(client.inFlight, 0);
});

test('a transport that gives the text length of a message (stdio) still has every too-deep answer refused; depth d needs 2d characters', async () => {
  const { client, transport, lines } = await started({ maxDepth: 8 });
  const deliverText = (text) => transport.handlers.message(JSON.parse(text), text.length);
  // depth 9 (the object and 8 arrays) in the shortest text it can have plus the envelope: walked, refused
  const a = client.request('tools/call');
  deliverText(`{"jsonrpc":"2.0","id":1,"result":${'['.repeat(8)}${']'.repeat(8)}}`);
  await rejectsWith(a, 'ERR_RPC_MALFORMED', /^tools\/call: the answer nests deeper than 8 levels/);
  // depth 8 exactly passes, with or without the length
  const b = client.request('tools/call');
  deliverText(`{"jsonrpc":"2.0","id":2,"result":${'['.repeat(7)}${']'.repeat(7)}}`);
  assert.deepEqual(await b, [[[[[[[]]]]]]]);
  // a batch's items are bounded with the batch's length too
  const c = client.request('tools/call');
  deliverText(`[{"jsonrpc":"2.0","method":"n","params":${'['.repeat(9)}${']'.repeat(9)}},{"jsonrpc":"2.0","id":3,"result":1}]`);
  assert.equal(await c, 1);
  assert.equal(lines.filter((l) => /nests deeper than 8 levels; dropped/.test(l)).length, 1);
  // a top-level object of depth 9 in few characters (22: at least 2 * 9) is still walked
  const short = `{"a":${'['.repeat(8)}${']'.repeat(8)}}`;
  assert.ok(short.length >= 2 * 9);
  transport.handlers.message(JSON.parse(short), short.length);
  assert.equal(lines.filter((l) => /nests deeper than 8 levels; dropped/.test(l)).length, 2);
});

test('bug: an upstream answer to an unknown request was logged with its whole id (a 10 KB id, a line break); now quoted and cut at 60 characters', async () => {
  const { client, transport, lines } = await started();
  transport.deliver({ jsonrpc: '2.0', id: 'i'.repeat(10_000), result: 1 });
  transport.deliver({ jsonrpc: '2.0', id: 'x\n2026-01-01T00:00:00.000Z warn forged', result: 1 });
  const text = lines.join('\n');
  assert.match(text, /answered an unknown or finished request "i{59}\.\.\. \(10002 characters\); ignored/);
  assert.match(text, /answered an unknown or finished request "x\\n2026-01-01T00:00:00\.000Z warn forged"; ignored/);
  assert.ok(!text.includes('i'.repeat(61)));
  assert.ok(!text.split('\n').some((l) => l.startsWith('2026-01-01T00:00:00.000Z warn forged')));
  await client.close();
});

test('a request that ended leaves no abort listener on its signal: aborting it later tells the server nothing', async () => {
  const { getEventListeners } = await import('node:events');
  const { client, transport } = await started({ timeoutMs: 10_000 });
  const controller = new AbortController();
  const answered = client.request('a', {}, { signal: controller.signal });
  transport.deliver({ jsonrpc: '2.0', id: 1, result: 'A' });
  assert.equal(await answered, 'A');
  const failed = client.request('b', {}, { signal: controller.signal });
  transport.deliver({ jsonrpc: '2.0', id: 2, error: { code: -1, message: 'no' } });
  await rejectsWith(failed, 'ERR_RPC_REMOTE');
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  controller.abort();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(transport.sent.filter((s) => s.message.method === 'notifications/cancelled').length, 0);
});
