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
  const { computerId, label, version, connectedAt, lastSeenAt, remoteAddress } = link;
  assert.deepEqual(
    { computerId, label, version, connectedAt, lastSeenAt, remoteAddress },
    { computerId: 2, label: 'a', version: null, connectedAt: 2000, lastSeenAt: 2000, remoteAddress: '10.0.0.1:4' },
  );
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
  assert.match(id, /^[A-Za-z0-9_-]{22}$/);
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
  assert.equal(link.pendingCount, 0, 'nothing left pending');
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
  assert.equal(link.pendingCount, 0);
});

test('a send that throws ends the request as disconnected', async () => {
  const registry = new LinkRegistry();
  const { link } = registry.register(recordingSocket({ failSend: true }), hello(1), 'a');
  const outcome = await registry.request(link, 'ping', undefined, { timeoutMs: 60_000 });
  assert.equal(outcome.status, 'disconnected');
  assert.match(outcome.reason, /send failed: socket closed/);
  assert.equal(link.pendingCount, 0);
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

test("a single request's id is 128 random bits (22 base64url characters), fresh each time; its size limit counts the frame as sent (non-ASCII escaped)", async () => {
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const raw = [];
  const send = socket.send;
  socket.send = function (text, ascii) {
    raw.push({ text, ascii });
    send.call(this, text);
  };
  const { link } = registry.register(socket, hello(1), 'a');
  const code = '\u00e9'.repeat(20); // 20 characters, each sent as a 6-byte \u00e9
  const size = `{"type":"request","id":"${'x'.repeat(22)}","method":"exec-lua","params":{"code":"${'\\u00e9'.repeat(20)}"}}`.length;
  await assert.rejects(registry.request(link, 'exec-lua', { code }, { timeoutMs: 1000, maxFrameBytes: size - 1 }), FrameTooLargeError);
  const ids = new Set();
  for (let i = 0; i < 3; i++) {
    const pending = registry.request(link, 'exec-lua', { code }, { timeoutMs: 60_000, maxFrameBytes: size });
    const { text, ascii } = raw.at(-1);
    assert.equal(text.length, size);
    assert.equal(ascii, true, 'a request frame is ASCII by construction: the socket is told so');
    assert.match(socket.sent.at(-1).id, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(socket.sent.at(-1).params.code, code);
    ids.add(socket.sent.at(-1).id);
    registry.resolve(link, { type: 'response', id: socket.sent.at(-1).id, ok: true, result: 1 });
    assert.equal((await pending).status, 'ok');
  }
  assert.equal(ids.size, 3);
});

// requestAll: the probe's fan-out (one timer, one abort listener, one promise for every link)
const pong = (link, socket, i = -1) => {
  const id = socket.sent.at(i).id;
  return { type: 'response', id, ok: true, result: `pong ${link.computerId}` };
};

test('requestAll sends each link its own id and matches each answer only on its own link', async () => {
  const registry = new LinkRegistry();
  const sockets = [recordingSocket(), recordingSocket(), recordingSocket()];
  const links = sockets.map((s, i) => registry.register(s, hello(i + 1), `a${i}`).link);
  const all = registry.requestAll(registry.list(), 'ping', undefined, { timeoutMs: 60_000 });
  const ids = sockets.map((s) => s.sent[0].id);
  assert.equal(new Set(ids).size, 3, 'distinct ids');
  for (const s of sockets) assert.deepEqual(Object.keys(s.sent[0]).sort(), ['id', 'method', 'type']);
  // link 1 answering with link 2's id matches nothing
  assert.equal(registry.resolve(links[0], { type: 'response', id: ids[1], ok: true, result: 'spoof' }), false);
  assert.equal(registry.resolve(links[1], pong(links[1], sockets[1])), true);
  assert.equal(registry.resolve(links[0], pong(links[0], sockets[0])), true);
  assert.equal(registry.resolve(links[2], { type: 'response', id: ids[2], ok: false, error: 'boom', result: 7 }), true);
  const outcomes = await all;
  assert.deepEqual(outcomes.map((o) => o.status), ['ok', 'ok', 'error']);
  assert.deepEqual(outcomes.map((o) => o.result), ['pong 1', 'pong 2', 7]);
  assert.equal(outcomes[2].error, 'boom');
  for (const l of links) assert.equal(l.pendingCount, 0);
});

// Bug (08fd0ac -> this): single requests told the socket their frame is ASCII, the probe's fan-out
// did not, so every probe frame was scanned for non-ASCII once more before its one-string write.
test("requestAll's frames are ASCII by construction (params with non-ASCII text too): the socket is told so, corked or not", async () => {
  const { UNCORKED_FANOUT } = await import('../../dist/link/fanout.js');
  const registry = new LinkRegistry();
  const sent = [];
  const count = UNCORKED_FANOUT + 1;
  for (let i = 0; i < count; i++) {
    const socket = recordingSocket();
    socket.send = (text, ascii) => sent.push({ text, ascii, now: false });
    if (i === 0) socket.sendNow = (text, ascii) => sent.push({ text, ascii, now: true });
    registry.register(socket, hello(i + 1), `a${i}`);
  }
  const few = registry.requestAll(registry.list().slice(0, 2), 'exec-lua', { code: 'print("\u00e9")' }, { timeoutMs: 1 });
  const many = registry.requestAll(registry.list(), 'ping', undefined, { timeoutMs: 1 });
  assert.equal(sent.length, 2 + count);
  assert.deepEqual(sent.filter((f) => f.now).length, 1, 'the large fan-out writes at once where the socket can');
  for (const { text, ascii } of sent) {
    assert.doesNotMatch(text, /[^\x00-\x7f]/);
    assert.equal(ascii, true);
  }
  assert.equal(JSON.parse(sent[0].text).params.code, 'print("\u00e9")');
  await Promise.all([few, many]);
});

// requestEach (issue 16): the probe builds each computer's entry as its answer comes, not after the last
test('requestEach: the observer hears each outcome once with its index as it comes, the last before the promise settles; what it throws is dropped', async () => {
  const registry = new LinkRegistry();
  const sockets = [recordingSocket(), recordingSocket(), recordingSocket(), recordingSocket()];
  const links = sockets.map((s, i) => registry.register(s, hello(i + 1), `a${i}`).link);
  links[3].closed = true;
  const seen = [];
  let settled = false;
  const observer = {
    settled(outcome, index) {
      seen.push([index, outcome.status, outcome.result, settled]);
      if (index === 1 || index === 2) throw new Error('a bug in the caller');
    },
  };
  const all = registry.requestEach(links, 'ping', undefined, { timeoutMs: 20 }, observer);
  all.then(() => (settled = true));
  // the closed link ended at once
  assert.deepEqual(seen, [[3, 'disconnected', undefined, false]]);
  assert.equal(registry.resolve(links[1], pong(links[1], sockets[1])), true, 'a throwing observer does not fail the answer');
  assert.equal(registry.resolve(links[0], pong(links[0], sockets[0])), true);
  assert.deepEqual(seen.slice(1), [[1, 'ok', 'pong 2', false], [0, 'ok', 'pong 1', false]]);
  assert.equal(await all, undefined);
  // link 3 (index 2) timed out: the timer ended it, the observer heard it (and threw) before the promise settled
  assert.deepEqual(seen.slice(3), [[2, 'timeout', undefined, false]]);
  for (const l of links) assert.equal(l.pendingCount, 0);
  // an aborted signal ends every link at once, each told to the observer
  seen.length = 0;
  const controller = new AbortController();
  controller.abort();
  await registry.requestEach(links.slice(0, 2), 'ping', undefined, { timeoutMs: 20, signal: controller.signal }, observer);
  assert.deepEqual(seen, [[0, 'cancelled', undefined, true], [1, 'cancelled', undefined, true]]);
  assert.equal(sockets[0].sent.length, 1, 'nothing sent');
});

test('requestAll: the one timer ends every unanswered request as timeout (cancel only when asked)', async () => {
  const registry = new LinkRegistry();
  const a = recordingSocket();
  const b = recordingSocket();
  const la = registry.register(a, hello(1), 'a').link;
  const lb = registry.register(b, hello(2), 'b').link;
  const all = registry.requestAll([la, lb], 'ping', undefined, { timeoutMs: 5 });
  registry.resolve(la, pong(la, a));
  assert.deepEqual((await all).map((o) => o.status), ['ok', 'timeout']);
  assert.equal(b.sent.length, 1, 'no cancel for a plain timeout');
  const again = await registry.requestAll([la, lb], 'exec-lua', {}, { timeoutMs: 5, cancelOnTimeout: true });
  assert.deepEqual(again.map((o) => o.status), ['timeout', 'timeout']);
  assert.deepEqual(a.sent.at(-1), { type: 'cancel', id: a.sent.at(-2).id });
  assert.deepEqual(b.sent.at(-1), { type: 'cancel', id: b.sent.at(-2).id });
  assert.equal(la.pendingCount + lb.pendingCount, 0);
});

test('requestAll: abort cancels what is in flight; an aborted signal sends nothing', async () => {
  const registry = new LinkRegistry();
  const a = recordingSocket();
  const b = recordingSocket();
  const la = registry.register(a, hello(1), 'a').link;
  const lb = registry.register(b, hello(2), 'b').link;
  const controller = new AbortController();
  const all = registry.requestAll([la, lb], 'ping', undefined, { timeoutMs: 60_000, signal: controller.signal });
  registry.resolve(lb, pong(lb, b));
  controller.abort();
  assert.deepEqual((await all).map((o) => o.status), ['cancelled', 'ok']);
  assert.deepEqual(a.sent[1], { type: 'cancel', id: a.sent[0].id });
  assert.equal(b.sent.length, 1, 'the answered one is not cancelled');
  const sent = a.sent.length + b.sent.length;
  const late = await registry.requestAll([la, lb], 'ping', undefined, { timeoutMs: 60_000, signal: controller.signal });
  assert.deepEqual(late.map((o) => o.status), ['cancelled', 'cancelled']);
  assert.equal(a.sent.length + b.sent.length, sent);
});

test('requestAll: closed links, full links, failing sends and unregister end only their own request', async () => {
  const registry = new LinkRegistry();
  registry.maxPendingPerLink = 1;
  const ok = recordingSocket();
  const full = recordingSocket();
  const broken = recordingSocket({ failSend: true });
  const going = recordingSocket();
  const lOk = registry.register(ok, hello(1), 'a').link;
  const lFull = registry.register(full, hello(2), 'b').link;
  const lBroken = registry.register(broken, hello(3), 'c').link;
  const lGoing = registry.register(going, hello(4), 'd').link;
  const lClosed = registry.register(recordingSocket(), hello(5), 'e').link;
  registry.unregister(lClosed, 'closed 1000');
  const blocker = registry.request(lFull, 'ping', undefined, { timeoutMs: 60_000 });
  const all = registry.requestAll([lOk, lFull, lBroken, lGoing, lClosed], 'ping', undefined, { timeoutMs: 60_000 });
  registry.unregister(lGoing, 'closed 1006');
  registry.resolve(lOk, pong(lOk, ok));
  const outcomes = await all;
  assert.deepEqual(outcomes.map((o) => o.status), ['ok', 'error', 'disconnected', 'disconnected', 'disconnected']);
  assert.match(outcomes[1].error, /already has 1 requests in flight/);
  assert.match(outcomes[2].reason, /send failed: socket closed/);
  assert.equal(outcomes[3].reason, 'closed 1006');
  assert.equal(outcomes[4].reason, 'link closed');
  registry.resolve(lFull, pong(lFull, full));
  assert.equal((await blocker).status, 'ok');
  assert.deepEqual(await registry.requestAll([], 'ping', undefined, { timeoutMs: 5 }), []);
});

test('list is kept in id order across registers, replacements and unregisters', () => {
  const registry = new LinkRegistry();
  const l3 = registry.register(recordingSocket(), hello(3), 'a').link;
  registry.register(recordingSocket(), hello(1), 'b');
  assert.deepEqual(registry.list().map((l) => l.computerId), [1, 3]);
  assert.equal(registry.list(), registry.list(), 'not rebuilt while nothing changes');
  registry.register(recordingSocket(), hello(2), 'c');
  assert.deepEqual(registry.list().map((l) => l.computerId), [1, 2, 3]);
  const newer = registry.register(recordingSocket(), hello(3), 'd').link;
  assert.deepEqual(registry.list().map((l) => l.remoteAddress), ['b', 'c', 'd']);
  assert.equal(registry.unregister(l3, 'old'), false);
  assert.equal(registry.unregister(newer, 'gone'), true);
  assert.deepEqual(registry.list().map((l) => l.computerId), [1, 2]);
});

test('a request on one link never shows up in the pending requests of another (idle links share no state)', async () => {
  const registry = new LinkRegistry();
  const a = recordingSocket();
  const la = registry.register(a, hello(1), 'a').link;
  const lb = registry.register(recordingSocket(), hello(2), 'b').link;
  const lc = registry.register(recordingSocket(), hello(3), 'c').link;
  const one = registry.request(la, 'ping', undefined, { timeoutMs: 60_000 });
  const all = registry.requestAll([la, lb], 'ping', undefined, { timeoutMs: 60_000 });
  assert.equal(la.pendingCount, 2);
  assert.equal(lb.pendingCount, 1);
  assert.equal(lc.pendingCount, 0, 'the link that was sent nothing has nothing pending');
  assert.equal(registry.resolve(lc, { type: 'response', id: a.sent[0].id, ok: true, result: 'x' }), false);
  registry.unregister(la, 'gone');
  registry.unregister(lb, 'gone');
  assert.equal((await one).status, 'disconnected');
  assert.deepEqual((await all).map((o) => o.status), ['disconnected', 'disconnected']);
  assert.equal(lc.pendingCount, 0);
});

test('a link holds its one request without a map, a map only while it has more, and nothing once they end', async () => {
  const registry = new LinkRegistry();
  const a = recordingSocket();
  const b = recordingSocket();
  const la = registry.register(a, hello(1), 'a').link;
  const lb = registry.register(b, hello(2), 'b').link;
  assert.equal(la.inFlight, null, 'an idle link holds nothing');
  const one = registry.request(la, 'ping', undefined, { timeoutMs: 60_000 });
  assert.ok(!(la.inFlight instanceof Map), 'one request is held as itself');
  assert.equal(la.pendingCount, 1);
  const all = registry.requestAll([la, lb], 'ping', undefined, { timeoutMs: 60_000 });
  assert.ok(la.inFlight instanceof Map, 'a second request makes the map');
  assert.ok(!(lb.inFlight instanceof Map), "the other link's one request is held as itself");
  assert.equal(la.pendingCount, 2);
  assert.equal(la.pendingRequest(b.sent[0].id), undefined, "the other link's id is not in flight here");
  assert.equal(lb.pendingRequest(a.sent[0].id), undefined, "nor this link's there");
  assert.equal(registry.resolve(lb, { type: 'response', id: a.sent[1].id, ok: true, result: 'forged' }), false);
  registry.resolve(la, { type: 'response', id: a.sent[0].id, ok: true, result: 'x' });
  assert.equal(la.pendingCount, 1, 'one of its two requests still in flight');
  assert.equal(la.pendingRequest(a.sent[0].id), undefined, 'the answered one is gone');
  registry.resolve(la, { type: 'response', id: a.sent[1].id, ok: true, result: 'x' });
  registry.resolve(lb, { type: 'response', id: b.sent[0].id, ok: true, result: 'y' });
  assert.equal((await one).status, 'ok');
  assert.deepEqual((await all).map((o) => o.status), ['ok', 'ok']);
  assert.equal(la.inFlight, null, 'an emptied map is let go');
  assert.equal(lb.inFlight, null);
  const again = registry.request(lb, 'ping', undefined, { timeoutMs: 60_000 });
  assert.equal(lb.pendingCount, 1);
  assert.equal(la.pendingCount, 0, 'the other idle link sees nothing of it');
  assert.equal(registry.resolve(la, { type: 'response', id: b.sent[1].id, ok: true, result: 'forged' }), false);
  assert.equal(registry.resolve(lb, { type: 'response', id: 'x'.repeat(22), ok: true, result: 'guess' }), false, 'a wrong id does not match the one request');
  assert.equal(lb.pendingCount, 1);
  registry.resolve(lb, { type: 'response', id: b.sent[1].id, ok: true, result: 'z' });
  assert.deepEqual((await again).status, 'ok');
  assert.equal(lb.inFlight, null);
  assert.equal(registry.resolve(lb, { type: 'response', id: b.sent[1].id, ok: true, result: 'twice' }), false, 'an answer counts once');
});

test('requestTo hands each way a request ends to its sink: answered, refused before sending, timed out, aborted; a too large frame throws', async () => {
  const { Cancellation } = await import('../../dist/cancel.js');
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  const sink = () => {
    const got = [];
    return { got, settled: (outcome) => got.push(outcome) };
  };
  // answered: the sink gets the result once, and the frame is encodeRequest's
  const answered = sink();
  registry.requestTo(link, 'exec-lua', { code: 'return' }, { timeoutMs: 60_000 }, answered);
  const sent = socket.sent.at(-1);
  assert.deepEqual({ ...sent, id: 'x' }, { type: 'request', id: 'x', method: 'exec-lua', params: { code: 'return' } });
  assert.equal(answered.got.length, 0);
  assert.equal(registry.resolve(link, { type: 'response', id: sent.id, ok: true, result: { output: 'hi' } }), true);
  assert.deepEqual(answered.got.map((o) => [o.status, o.result]), [['ok', { output: 'hi' }]]);
  assert.equal(registry.resolve(link, { type: 'response', id: sent.id, ok: true }), false);
  // refused before sending: at once, nothing sent
  const before = socket.sent.length;
  const aborted = new Cancellation();
  aborted.abort();
  const refused = sink();
  registry.requestTo(link, 'exec-lua', { code: 'return' }, { timeoutMs: 60_000, signal: aborted }, refused);
  assert.deepEqual(refused.got.map((o) => o.status), ['cancelled']);
  assert.equal(socket.sent.length, before);
  // aborted in flight: cancelled, and the computer is told
  const signal = new Cancellation();
  const cancelled = sink();
  registry.requestTo(link, 'exec-lua', { code: 'return' }, { timeoutMs: 60_000, signal }, cancelled);
  const id = socket.sent.at(-1).id;
  signal.abort();
  assert.deepEqual(cancelled.got.map((o) => o.status), ['cancelled']);
  assert.deepEqual(socket.sent.at(-1), { type: 'cancel', id });
  // timed out: the sink gets timeout, and with cancelOnTimeout the computer is told
  const late = sink();
  registry.requestTo(link, 'exec-lua', { code: 'return' }, { timeoutMs: 5, cancelOnTimeout: true }, late);
  const lateId = socket.sent.at(-1).id;
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(late.got.map((o) => o.status), ['timeout']);
  assert.deepEqual(socket.sent.at(-1), { type: 'cancel', id: lateId });
  assert.equal(link.pendingCount, 0);
  // too large: thrown, nothing tracked or sent
  const big = sink();
  assert.throws(() => registry.requestTo(link, 'exec-lua', { code: 'x'.repeat(200) }, { timeoutMs: 60_000, maxFrameBytes: 100 }, big), FrameTooLargeError);
  assert.equal(big.got.length, 0);
  assert.equal(link.pendingCount, 0);
  // the link drops: disconnected
  const dropped = sink();
  registry.requestTo(link, 'exec-lua', { code: 'return' }, { timeoutMs: 60_000 }, dropped);
  registry.unregister(link, 'closed 1006');
  assert.deepEqual(dropped.got.map((o) => [o.status, o.reason]), [['disconnected', 'closed 1006']]);
});

test('a request that ended leaves no abort listener: a later abort of the same signal cancels only what is still in flight', async () => {
  const { getEventListeners } = await import('node:events');
  const registry = new LinkRegistry();
  const socket = recordingSocket();
  const { link } = registry.register(socket, hello(1), 'a');
  const controller = new AbortController();
  const signal = controller.signal;
  // one signal for a tool's sequence of requests (read-file's pieces): the first is answered, then one times out
  const first = registry.request(link, 'read-file', {}, { timeoutMs: 60_000, signal });
  registry.resolve(link, { type: 'response', id: socket.sent[0].id, ok: true, result: 1 });
  assert.equal((await first).status, 'ok');
  assert.equal((await registry.request(link, 'read-file', {}, { timeoutMs: 1, signal })).status, 'timeout');
  assert.equal(getEventListeners(signal, 'abort').length, 0);
  const third = registry.request(link, 'read-file', {}, { timeoutMs: 60_000, signal });
  controller.abort();
  assert.equal((await third).status, 'cancelled');
  const cancels = socket.sent.filter((f) => f.type === 'cancel');
  assert.deepEqual(cancels, [{ type: 'cancel', id: socket.sent[2].id }], 'only the request in flight is told to stop');
  assert.equal(getEventListeners(signal, 'abort').length, 0);
});

test('a fan-out leaves no abort listener on its signal: neither one that ended while it sent (every link closed or full) nor one answered', async () => {
  const { getEventListeners } = await import('node:events');
  const registry = new LinkRegistry();
  registry.maxPendingPerLink = 1;
  const { link: closed } = registry.register(recordingSocket(), hello(1), 'a');
  registry.unregister(closed, 'gone');
  const socket = recordingSocket();
  const { link: full } = registry.register(socket, hello(2), 'b');
  const held = registry.request(full, 'ping', undefined, { timeoutMs: 60_000 });
  const controller = new AbortController();
  const refused = await registry.requestAll([closed, full], 'ping', undefined, { timeoutMs: 60_000, signal: controller.signal });
  assert.deepEqual(refused.map((o) => o.status), ['disconnected', 'error']);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  registry.resolve(full, { type: 'response', id: socket.sent[0].id, ok: true, result: 'pong' });
  assert.equal((await held).status, 'ok');
  const answered = registry.requestAll([full], 'ping', undefined, { timeoutMs: 60_000, signal: controller.signal });
  registry.resolve(full, { type: 'response', id: socket.sent[1].id, ok: true, result: 'pong' });
  assert.deepEqual((await answered).map((o) => o.status), ['ok']);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});
