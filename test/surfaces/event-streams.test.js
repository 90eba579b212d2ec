// The event stream set and the tool change fan-out on their own: a client that does not read is cut
// off (bytes piled up past the bound, or nothing taken for the stall time), shutdown refuses new
// streams, keep-alives can be off. The sinks are node
// Writables that never finish a write (a client that reads nothing): what a socket looks like then.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { EventStreams, STREAM_MAX_QUEUED_BYTES } from '../../dist/surfaces/event-streams.js';
import { until } from '../helpers.js';

/** A Writable whose writes never complete (`stuck`), or complete at once, collecting the text. */
function sink({ stuck }) {
  const sink = new Writable({
    highWaterMark: 1024,
    decodeStrings: false,
    write(chunk, _enc, done) {
      sink.text += chunk;
      if (!stuck) done();
    },
  });
  sink.text = '';
  return sink;
}

const options = (extra = {}) => ({ maxStreams: 10, keepAliveMs: 10, stallMs: 40, ...extra });

test('a client that reads nothing cannot make a stream hold more than STREAM_MAX_QUEUED_BYTES: it is cut off and dropped', async () => {
  const streams = new EventStreams(options({ keepAliveMs: 3_600_000 }));
  const out = sink({ stuck: true });
  const stream = streams.adopt(out);
  let closed = 0;
  stream.onClose(() => closed++);
  const big = { jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(1000) } };
  let sent = 0;
  while (stream.send(big)) sent++;
  // it took writes while what waited was under the bound (the one that passed it too), and the next
  // write cut the stream off: at most the bound plus one message is ever held
  const event = `event: message\ndata: ${JSON.stringify(big)}\n\n`.length;
  assert.equal(sent, Math.floor(STREAM_MAX_QUEUED_BYTES / event) + 1);
  assert.ok(out.destroyed);
  assert.equal(streams.cutOff, 1);
  assert.equal(stream.open, false);
  assert.equal(stream.send(big), false);
  await until(() => streams.size === 0 && closed === 1);
});

test('a stream whose client takes none of what waits for stallMs is cut off at a keep-alive tick; a reading one is not', async () => {
  const streams = new EventStreams(options());
  const stuck = sink({ stuck: true });
  const reading = sink({ stuck: false });
  streams.adopt(stuck);
  const live = streams.adopt(reading);
  await until(() => stuck.destroyed);
  assert.equal(streams.cutOff, 1);
  // the stuck one got one keep-alive (its first write), then nothing more: writes stop while bytes wait
  assert.equal(stuck.text, ': keep-alive\n\n');
  await until(() => reading.text.split(': keep-alive\n\n').length > 5);
  assert.equal(reading.destroyed, false);
  assert.ok(live.open);
  streams.close();
  assert.equal(reading.writableEnded, true);
  await until(() => streams.size === 0);
});

test('over maxStreams open() refuses with "limit"; after close() with "closing", writing nothing', () => {
  const streams = new EventStreams(options({ maxStreams: 1 }));
  const heads = [];
  const res = () => ({ ...sink({ stuck: false }), writeHead: (...a) => heads.push(a), flushHeaders() {} });
  streams.adopt(sink({ stuck: false }));
  assert.equal(streams.open(res()), 'limit');
  streams.close();
  assert.equal(streams.open(res()), 'closing');
  assert.equal(heads.length, 0);
});

test('keepAliveMs 0: no comment lines, but a stalled client is still cut off (the tick runs every stallMs)', async () => {
  const streams = new EventStreams(options({ keepAliveMs: 0, stallMs: 10 }));
  const stuck = sink({ stuck: true });
  const reading = sink({ stuck: false });
  const a = streams.adopt(stuck);
  streams.adopt(reading);
  a.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  await until(() => stuck.destroyed);
  assert.equal(streams.cutOff, 1);
  assert.equal(reading.text, '');
  assert.equal(reading.destroyed, false);
  streams.close();
});

test('end(reason): a comment line with the reason (line breaks flattened), the answer ends, its place is free and its onClose functions run at once, once', async () => {
  const streams = new EventStreams(options({ keepAliveMs: 3_600_000 }));
  const out = sink({ stuck: false });
  const stream = streams.adopt(out);
  let closed = 0;
  stream.onClose(() => closed++);
  stream.replace('ended: one\r\ntwo');
  assert.equal(streams.size, 0);
  assert.equal(closed, 1);
  assert.equal(streams.replaced, 1);
  assert.equal(out.writableEnded, true);
  assert.equal(out.text, ': ended: one two\n\n');
  stream.end('again');
  await until(() => out.destroyed || out.closed);
  assert.equal(closed, 1);
  assert.equal(out.text, ': ended: one two\n\n');
});

test('a keep-alive tick skips a stream destroyed but not yet closed', () => {
  const streams = new EventStreams(options({ keepAliveMs: 3_600_000 }));
  const out = sink({ stuck: false });
  const stream = streams.adopt(out);
  out.destroy();
  stream.tick(0);
  assert.equal(out.text, '');
  streams.close();
});

test('the stall clock at its edges, ticked by hand (found by mutation testing): cut off exactly stallMs after bytes were first seen waiting, not a tick before; a drain in between starts it over; a stream holding exactly STREAM_MAX_QUEUED_BYTES may still be written', () => {
  const streams = new EventStreams(options({ keepAliveMs: 3_600_000, stallMs: 100 }));
  const held = [];
  const out = new Writable({ highWaterMark: 1 << 20, decodeStrings: false, write(_chunk, _enc, done) { held.push(done); } });
  const release = () => {
    while (held.length > 0) held.shift()();
  };
  const stream = streams.adopt(out);
  stream.send({ n: 1 });
  stream.tick(1000); // bytes seen waiting: the clock starts
  stream.tick(1099);
  assert.equal(streams.cutOff, 0);
  release();
  stream.tick(1150); // nothing waits: the clock is reset (and a keep-alive goes out, which waits)
  stream.tick(1160); // it starts again here
  stream.tick(1259);
  assert.equal(streams.cutOff, 0, 'not cut off 99 ms after the new start');
  stream.tick(1260);
  assert.equal(streams.cutOff, 1, 'cut off at exactly stallMs');
  assert.ok(out.destroyed);

  // an event of exactly the bound waiting: the next write still goes out; past it, the stream is cut
  const other = new EventStreams(options({ keepAliveMs: 3_600_000 }));
  const stuck = new Writable({ highWaterMark: 1 << 20, decodeStrings: false, write() {} });
  const full = other.adopt(stuck);
  const filler = { d: '' };
  filler.d = 'x'.repeat(STREAM_MAX_QUEUED_BYTES - `event: message\ndata: ${JSON.stringify(filler)}\n\n`.length);
  assert.equal(full.send(filler), true);
  assert.equal(stuck.writableLength, STREAM_MAX_QUEUED_BYTES);
  assert.equal(full.send({ n: 2 }), true, 'exactly the bound waits: written');
  assert.equal(full.send({ n: 3 }), false, 'past it: cut off');
  assert.equal(other.cutOff, 1);
});
