// A computer relinking (same id, same key) while something is under way on its old link: a call in
// flight, a probe over every computer, an answer half-written, a frame the old link sends after it
// was replaced. The old link's socket stays readable until its closing handshake ends (a computer that
// is slow to answer the close, or that never does), so these tests hold it on a raw TCP socket that
// never answers the close frame, and order every step on what the bridge has received or sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { FakeComputer, callTool, linkComputer, rpc, withBridge, until } from '../helpers.js';

const KEY = 'relinkKey_0123456789abcdefABCDEF';

/** One masked client text frame. */
function frame(payload) {
  const body = Buffer.from(payload);
  const mask = [0x11, 0x5a, 0x27, 0x6c];
  const head = [0x81];
  if (body.length < 126) head.push(0x80 | body.length);
  else head.push(0x80 | 126, body.length >> 8, body.length & 0xff);
  return Buffer.concat([Buffer.from(head), Buffer.from(mask), body.map((b, i) => b ^ mask[i % 4])]);
}

/** A computer on a raw socket (it never answers the bridge's close frame), linked with `hello`. */
async function rawComputer(bridge, hello) {
  const url = new URL(bridge.linkUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  const state = { socket, received: Buffer.alloc(0) };
  socket.on('data', (c) => (state.received = Buffer.concat([state.received, c])));
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write(`GET / HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  await until(() => state.received.includes('\r\n\r\n'));
  socket.write(frame(JSON.stringify(hello)));
  await until(() => state.received.includes('hello-ok'));
  return state;
}

/** The request frames the bridge sent on a raw socket so far (server frames are unmasked, < 64 KiB here). */
function requestsOn(state) {
  const out = [];
  const b = state.received.subarray(state.received.indexOf('\r\n\r\n') + 4);
  for (let at = 0; at + 2 <= b.length; ) {
    let len = b[at + 1] & 0x7f;
    let head = 2;
    if (len === 126) {
      len = b.readUInt16BE(at + 2);
      head = 4;
    }
    if (at + head + len > b.length) break;
    if ((b[at] & 0x0f) === 1) {
      const f = JSON.parse(b.subarray(at + head, at + head + len).toString());
      if (f.type === 'request') out.push(f);
    }
    at += head + len;
  }
  return out;
}

/** Sends `text` from the raw socket and waits until the bridge has read it as one more frame. */
async function sendRead(bridge, state, bytes) {
  const before = bridge.metrics.framesIn;
  state.socket.write(bytes);
  await until(() => bridge.metrics.framesIn > before);
}

test('bug: an info frame a replaced link sent before its socket closed still changed the computer id\'s label: the pinned id took the old link\'s label, so a call by the id\'s real label went to another computer saying it', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    const old = await rawComputer(bridge, { type: 'hello', computerId: 5, computerLabel: 'base', key: KEY });
    // the same computer relinks (same id, same key), as mcp-computer does after a network drop
    const again = new FakeComputer(bridge.linkUrl, { computerId: 5 });
    assert.equal((await again.link({ type: 'hello', computerId: 5, computerLabel: 'base', key: KEY })).type, 'hello-ok');
    await until(() => old.received.includes('replaced by a newer link'));
    // the old link, replaced, says another label: not this id's any more
    await sendRead(bridge, old, frame(JSON.stringify({ type: 'info', computerLabel: 'decoy', peripherals: [] })));
    await again.close();
    await until(() => bridge.links.get(5) === undefined);
    // another computer says "base": a call by that label is not handed to it while pinned 5 holds it
    const other = await linkComputer(bridge, { computerId: 6, computerLabel: 'base' });
    const result = await callTool(bridge, 'exec-lua', { computer: 'base', code: 'return 1' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /The label "base" is held by pinned computer 5, not linked now/);
    assert.deepEqual(other.received.filter((f) => f.type === 'request'), []);
    assert.deepEqual(bridge.logs.filter((l) => l.includes('decoy')), []);
    old.socket.destroy();
    await other.close();
  }),
);

test('a computer relinking while its answer frame is half-written: the call ends at the relink with "dropped ... replaced", once; the rest of the frame, read later on the old socket, answers nothing', { timeout: 60_000 }, () =>
  withBridge({ CC_EXEC_TIMEOUT_MS: '30000' }, async (bridge) => {
    const old = await rawComputer(bridge, { type: 'hello', computerId: 7, key: KEY });
    const call = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 7, code: 'return "x"' } } });
    await until(() => requestsOn(old).length === 1);
    const [request] = requestsOn(old);
    const answer = frame(JSON.stringify({ type: 'response', id: request.id, ok: true, result: { ok: true, output: 'old answer', returns: [] } }));
    old.socket.write(answer.subarray(0, 20));
    // the same computer relinks before the rest of its answer is written
    const again = new FakeComputer(bridge.linkUrl, { computerId: 7, onRequest: () => ({ ok: true, result: { ok: true, output: 'new link', returns: [] } }) });
    assert.equal((await again.link({ type: 'hello', computerId: 7, key: KEY })).type, 'hello-ok');
    const res = await call;
    assert.equal(res.json.result.isError, true);
    assert.match(res.json.result.content[0].text, /dropped before it answered \(replaced by a new link/);
    const dropped = bridge.metrics.framesRejected.get('unknown_id');
    await sendRead(bridge, old, answer.subarray(20));
    assert.equal(bridge.metrics.framesRejected.get('unknown_id'), dropped + 1);
    // the new link was never handed the old request, and serves new calls
    assert.deepEqual(again.received.filter((f) => f.type === 'request'), []);
    assert.equal((await callTool(bridge, 'exec-lua', { computerId: 7, code: 'return 1' })).structuredContent.output, 'new link');
    old.socket.destroy();
    await again.close();
  }),
);

test('a computer relinking while a probe over every computer is in flight: the probe ends its old link "disconnected" at the relink, keeps the others\' answers, never waits for its timeout, and never sends its ping to the new link', { timeout: 60_000 }, () =>
  withBridge({ CC_PROBE_TIMEOUT_MS: '30000' }, async (bridge) => {
    const old = await rawComputer(bridge, { type: 'hello', computerId: 8, key: KEY });
    let answerPing;
    const pinged = new Promise((resolve) => (answerPing = resolve));
    const other = await linkComputer(bridge, { computerId: 9, onRequest: () => pinged.then(() => ({ ok: true, result: 'pong from 9' })) });
    const probe = callTool(bridge, 'probe-computers');
    await until(() => requestsOn(old).length === 1 && other.received.some((f) => f.type === 'request'));
    const again = new FakeComputer(bridge.linkUrl, { computerId: 8 });
    assert.equal((await again.link({ type: 'hello', computerId: 8, key: KEY })).type, 'hello-ok');
    answerPing();
    const result = await probe;
    assert.deepEqual(result.structuredContent.computers.map((c) => [c.computerId, c.status]), [[8, 'disconnected'], [9, 'pong']]);
    assert.deepEqual(again.received.filter((f) => f.type === 'request'), []);
    // the old link's late pong matches nothing
    await sendRead(bridge, old, frame(JSON.stringify({ type: 'response', id: requestsOn(old)[0].id, ok: true, result: 'late pong' })));
    assert.equal(bridge.dispatcher.activeCalls, 0);
    old.socket.destroy();
    await Promise.all([again.close(), other.close()]);
  }),
);
