import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LinkRegistry, describe, FrameTooLargeError } from '../../dist/link/registry.js';

// A socket stand-in that records what the registry sends; the registry only ever calls send/close.
function recordingSocket({ failSend = false } = {}) {
  return {
    sent: [],
    closes: [],
    send(text) {
      if (failSend) throw new Error('socket closed');
      this.sent.push(JSON.parse(text));
    },
    close(code, reason) {
      this.closes.push({ code, reason });
    },
  };
}

const hello = (computerId, computerLabel = null) => ({ type: 'hello', computerId, computerLabel, version: null });

test('describe names a computer with its label or null', () => {
  assert.equal(describe(12, 'base-turtle'), '12 (Label: base-turtle)');
  assert.equal(describe(0, null), '0 (Label: null)');
});

test('register keeps id, label, times and remote address; list is ordered by id', () => {
  let now = 1000;
  const registry = new LinkRegistry(() => now);
  registry.register(recordingSocket(), hello(5, 'b'), '10.0.0.2:5');
  now = 2000;
  const { link } = registry.register(recordingSocket(), hello(2, 'a'), '10.0.0.1:4');
  assert.deepEqual(link.info(), {
    computerId: 2,
    label: 'a',
    version: null,
    connectedAt: 2000,
    lastSeenAt: 2000,
    remoteAddress: '10.0.0.1:4',
  });
  assert.deepEqual(registry.list().map((l) => l.computerId), [2, 5]);
  assert.equal(registry.size, 2);
  now = 3000;
  registry.touch(link);
  assert.equal(link.lastSeenAt, 3000);
});

test('a second link with the same id replaces the first, closes it with 4000 and ends its requests', async () => {
  const registry = new LinkRegistry();
  const oldSocket = recordingSocket();
  const { link: old } = registry.register(oldSocket, hello(1), 'a');
  const pending = registry.request(old, 'ping', undefined, { timeoutMs: 60_000 });
  const { link, replaced } = registry.register(recordingSocket(), hello(1), 'b');
  assert.equal(replaced, old);
  assert.equal(registry.get(1), link);
  assert.equal(oldSocket.closes[0].code, 4000);
  assert.match(oldSocket.closes[0].reason, /replaced/);
  const outcome = await pending;
  assert.equal(outcome.status, 'disconnected');
  assert.match(outcome.reason, /replaced by a new link from b/);
  // the old socket's close event arrives later: it must not unregister the new link
  assert.equal(registry.unregister(old, 'closed 4000'), false);
  assert.equal(registry.get(1), link);
});

test('a response resolves only the request on the link it arrived on', async () => {
  const registry = new LinkRegistry();
  const socketA = recordingSocket();
  const { link: a } = registry.register(socketA, hello(1), 'a');
  const { link: b } = registry.register(recordingSocket(), hello(2), 'b');
  const pending = registry.request(a, 'ping', undefined, { timeoutMs: 60_000 });
  const id = socketA.sent[0].id;
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.equal(registry.resolve(b, { type: 'response', id, ok: true, result: 'forged' }), false);
  assert.equal(registry.resolve(a, { type: 'response', id, ok: true, result: 'pong' }), true);
  assert.deepEqual({ ...(await pending), ms: 0 }, { status: 'ok', result: 'pong', ms: 0 });
  assert.equal(registry.resolve(a, { type: 'response', id, ok: true, result: 'again' }), false, 'answered once only');
});

test('error responses carry the error and any partial result; ok without result is null', async () => {
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  const failing = registry.request(link, 'exec-lua', { code: 'x' }, { timeoutMs: 60_000 });
  registry.resolve(link, { type: 'response', id: socket.sent[0].id, ok: false, error: 'boom', result: { output: 'o' } });
  const outcome = await failing;
  assert.equal(outcome.status, 'error');
  assert.equal(outcome.error, 'boom');
  assert.deepEqual(outcome.result, { output: 'o' });
  const bare = registry.request(link, 'ping', undefined, { timeoutMs: 60_000 });
  registry.resolve(link, { type: 'response', id: socket.sent[1].id, ok: true });
  assert.equal((await bare).result, null);
  const plainError = registry.request(link, 'ping', undefined, { timeoutMs: 60_000 });
  registry.resolve(link, { type: 'response', id: socket.sent[2].id, ok: false, error: 'e' });
  assert.equal('result' in (await plainError), false);
});

test('timeout ends the request; cancel is sent only when asked for', async () => {
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  assert.equal((await registry.request(link, 'ping', undefined, { timeoutMs: 5 })).status, 'timeout');
  assert.equal(socket.sent.length, 1, 'no cancel for a plain timeout');
  assert.equal((await registry.request(link, 'exec-lua', {}, { timeoutMs: 5, cancelOnTimeout: true })).status, 'timeout');
  assert.deepEqual(socket.sent[2], { type: 'cancel', id: socket.sent[1].id });
  assert.equal(link.pending.size, 0, 'nothing left pending');
});

test('abort sends cancel and ends the request as cancelled; an aborted signal sends nothing', async () => {
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  const controller = new AbortController();
  const pending = registry.request(link, 'exec-lua', {}, { timeoutMs: 60_000, signal: controller.signal });
  controller.abort();
  assert.equal((await pending).status, 'cancelled');
  assert.deepEqual(socket.sent[1], { type: 'cancel', id: socket.sent[0].id });
  const before = socket.sent.length;
  assert.equal((await registry.request(link, 'ping', undefined, { timeoutMs: 10, signal: controller.signal })).status, 'cancelled');
  assert.equal(socket.sent.length, before);
});

test('unregister ends pending requests at once and requests on a closed link never go out', async () => {
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  const pending = registry.request(link, 'ping', undefined, { timeoutMs: 60_000 });
  assert.equal(registry.unregister(link, 'closed 1006'), true);
  const outcome = await pending;
  assert.equal(outcome.status, 'disconnected');
  assert.equal(outcome.reason, 'closed 1006');
  assert.equal(registry.size, 0);
  const after = await registry.request(link, 'ping', undefined, { timeoutMs: 60_000 });
  assert.equal(after.status, 'disconnected');
  assert.equal(socket.sent.length, 1);
  assert.equal(link.pending.size, 0);
});

test('a send that throws ends the request as disconnected', async () => {
  const registry = new LinkRegistry();
  const { link } = registry.register(recordingSocket({ failSend: true }), hello(1), 'a');
  const outcome = await registry.request(link, 'ping', undefined, { timeoutMs: 60_000 });
  assert.equal(outcome.status, 'disconnected');
  assert.match(outcome.reason, /send failed: socket closed/);
  assert.equal(link.pending.size, 0);
});

test('a cancel that cannot be sent is swallowed', async () => {
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  const pending = registry.request(link, 'exec-lua', {}, { timeoutMs: 5, cancelOnTimeout: true });
  socket.send = () => {
    throw new Error('gone');
  };
  assert.equal((await pending).status, 'timeout');
});

test('a request larger than the computer accepts is refused before sending', async () => {
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  await assert.rejects(
    registry.request(link, 'exec-lua', { code: 'x'.repeat(200) }, { timeoutMs: 1000, maxFrameBytes: 100 }),
    (err) => err instanceof FrameTooLargeError && err.code === 'ERR_FRAME_TOO_LARGE' && /at most 100/.test(err.message),
  );
  assert.equal(socket.sent.length, 0);
});
