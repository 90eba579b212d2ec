// A link socket reads a chunk that is exactly one small ASCII text frame itself (computer-socket.ts
// readOneFrame) and hands every other chunk to ws's Receiver. These tests write raw bytes over TCP
// (a real WebSocket handshake, then hand-made frames, one write per chunk) and check that both
// ways read the same frames, in order, and that what ws refuses is still refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { callTool, withBridge, until } from '../helpers.js';

/** One client frame: masked unless `masked: false`; `len16` writes a short length in the 16-bit form. */
function frame(payload, { opcode = 1, fin = true, rsv = 0, masked = true, mask = [0x11, 0x5a, 0x27, 0x6c], len16 = false } = {}) {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const head = [(fin ? 0x80 : 0) | rsv | opcode];
  const m = masked ? 0x80 : 0;
  if (body.length < 126 && !len16) head.push(m | body.length);
  else head.push(m | 126, body.length >> 8, body.length & 0xff);
  if (!masked) return Buffer.concat([Buffer.from(head), body]);
  return Buffer.concat([Buffer.from(head), Buffer.from(mask), body.map((b, i) => b ^ mask[i % 4])]);
}

const json = (value) => JSON.stringify(value);
const info = (label) => json({ type: 'info', computerLabel: label, peripherals: [] });

/** A computer on a raw socket: the handshake done, its hello answered with hello-ok. */
async function rawComputer(bridge, computerId) {
  const url = new URL(bridge.linkUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  const state = { socket, received: Buffer.alloc(0), closedWith: null };
  socket.on('data', (c) => (state.received = Buffer.concat([state.received, c])));
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write(`GET / HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  await until(() => state.received.includes('\r\n\r\n'));
  assert.match(state.received.toString('latin1'), /^HTTP\/1\.1 101 /);
  state.received = state.received.subarray(state.received.indexOf('\r\n\r\n') + 4);
  socket.write(frame(json({ type: 'hello', computerId })));
  await until(() => state.received.includes('hello-ok'));
  await until(() => bridge.links.get(computerId) !== undefined);
  return state;
}

/** The close code of the first close frame the bridge sent, or null. */
function closeCode(received) {
  // server frames are unmasked; walk them
  let at = 0;
  while (at + 2 <= received.length) {
    const op = received[at] & 0x0f;
    let len = received[at + 1] & 0x7f;
    let head = 2;
    if (len === 126) {
      len = received.readUInt16BE(at + 2);
      head = 4;
    }
    if (op === 8) return len >= 2 ? received.readUInt16BE(at + head) : 1005;
    at += head + len;
  }
  return null;
}

test('link frames in every shape arrive whole and in order: one ASCII frame a chunk (7- and 16-bit lengths), two in a chunk, one split over chunks, non-ASCII text', () =>
  withBridge({}, async (bridge) => {
    const c = await rawComputer(bridge, 7);
    const link = () => bridge.links.get(7);
    const framesIn = bridge.metrics.framesIn;
    // one frame, one chunk
    c.socket.write(frame(info('one')));
    await until(() => link().label === 'one');
    // a 16-bit length: a label of 300 characters, and a short frame in the 16-bit form
    c.socket.write(frame(info('x'.repeat(300))));
    await until(() => link().label === 'x'.repeat(300));
    c.socket.write(frame(info('short16'), { len16: true }));
    await until(() => link().label === 'short16');
    // a mask of zeros
    c.socket.write(frame(info('zero mask'), { mask: [0, 0, 0, 0] }));
    await until(() => link().label === 'zero mask');
    // two frames in one chunk: both, in order
    c.socket.write(Buffer.concat([frame(info('first')), frame(info('second'))]));
    await until(() => link().label === 'second');
    // one frame over two chunks, then one in a chunk of its own
    const split = frame(info('split'));
    c.socket.write(split.subarray(0, 9));
    await sleep(30);
    c.socket.write(split.subarray(9));
    await until(() => link().label === 'split');
    c.socket.write(frame(info('after split')));
    await until(() => link().label === 'after split');
    // non-ASCII text in one chunk: read by ws, and intact (the socket did not leave it unmasked)
    c.socket.write(frame(info('café ☕')));
    await until(() => link().label === 'café ☕');
    c.socket.write(frame(info('ascii again')));
    await until(() => link().label === 'ascii again');
    assert.equal(bridge.metrics.framesIn - framesIn, 10);
    // and requests are answered through it as before
    const probe = callTool(bridge, 'probe-computers');
    await until(() => c.received.includes('"method":"ping"'));
    const id = /"id":"([\w-]+)","method":"ping"/.exec(c.received.toString('latin1'))[1];
    c.socket.write(frame(json({ type: 'response', id, ok: true, result: 'pong from 7' })));
    assert.equal((await probe).content[0].text, 'pong from 7');
    assert.equal(closeCode(c.received), null);
    c.socket.destroy();
  }));

// Each of these is one whole frame in one chunk (what the socket reads itself when it is a good one):
// ws's refusal and close code stand.
const refused = [
  { name: 'invalid UTF-8', bytes: () => frame(Buffer.concat([Buffer.from('{"type":"info","computerLabel":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","peripherals":[]}')])), code: 1007 },
  // unmasked, with a payload whose first four bytes, read as a mask, would unmask the rest to ASCII
  { name: 'an unmasked frame', bytes: () => frame(`abcd${info('unmasked')}`, { masked: false }), code: 1002 },
  { name: 'RSV1 set', bytes: () => frame(info('rsv1'), { rsv: 0x40 }), code: 1002 },
  { name: 'RSV2 set', bytes: () => frame(info('rsv2'), { rsv: 0x20 }), code: 1002 },
  { name: 'a reserved opcode', bytes: () => frame(info('op3'), { opcode: 3 }), code: 1002 },
  { name: 'a frame over CC_MAX_FRAME_BYTES', bytes: () => frame(info('y'.repeat(3000))), code: 1009 },
];

for (const r of refused) {
  test(`a link frame with ${r.name}, alone in its chunk, is refused as ws refuses it (close ${r.code})`, () =>
    withBridge({ CC_MAX_FRAME_BYTES: '2048' }, async (bridge) => {
      const c = await rawComputer(bridge, 3);
      c.socket.write(r.bytes());
      await until(() => closeCode(c.received) !== null);
      assert.equal(closeCode(c.received), r.code);
      assert.equal(bridge.links.get(3)?.label ?? null, null);
      c.socket.destroy();
    }));
}

test('a text frame after the computer\'s close frame is not read (ws stops reading at a close frame)', () =>
  withBridge({}, async (bridge) => {
    const c = await rawComputer(bridge, 5);
    const closeFrame = frame(Buffer.from([0x03, 0xe8]), { opcode: 8 });
    c.socket.write(closeFrame);
    await until(() => closeCode(c.received) !== null);
    // the same socket, still writable from this side: a frame the socket would read itself
    c.socket.write(frame(info('after close')));
    await sleep(50);
    assert.notEqual(bridge.links.get(5)?.label, 'after close');
    c.socket.destroy();
  }));
