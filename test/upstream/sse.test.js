// The SSE parser: fields, multi-line data, line endings, split chunks, comments, oversize events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser } from '../../dist/upstream/sse.js';

function parse(chunks, max = 1000) {
  const events = [];
  const oversize = [];
  const parser = new SseParser(max, (e) => events.push(e), (n) => oversize.push(n));
  for (const c of chunks) parser.push(c);
  parser.end();
  return { events, oversize };
}

test('events: data lines joined by newlines, event names, ids, comments, any line ending', () => {
  const { events } = parse([': keep-alive\n', 'event: message\nid: 1\ndata: {"a":\ndata:1}\n\n', 'data: two\r\n\r\n', 'retry: 5\ndata:three\r\rfield-only\n\n', 'event: ping\ndata: x\n\n']);
  assert.deepEqual(events, [
    { event: 'message', data: '{"a":\n1}', id: '1' },
    { event: 'message', data: 'two', id: '1' },
    { event: 'message', data: 'three', id: '1' },
    { event: 'ping', data: 'x', id: '1' },
  ]);
});

test('an event split anywhere across chunks, \\r\\n split between chunks', () => {
  const text = 'data: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n';
  for (let cut = 1; cut < text.length; cut++) {
    const { events } = parse([text.slice(0, cut), text.slice(cut)]);
    assert.deepEqual(events, [{ event: 'message', data: '{"jsonrpc":"2.0","id":1,"result":{}}' }], `cut at ${cut}`);
  }
});

test('an event without its blank line at the end of the stream is not dispatched', () => {
  assert.deepEqual(parse(['data: half']).events, []);
  assert.deepEqual(parse(['\n\n', 'event: x\n\n']).events, [], 'no data, no event');
});

test('an oversize event is dropped whole and reported; the next one still arrives', () => {
  const { events, oversize } = parse([`data: ${'x'.repeat(50)}\ndata: ${'y'.repeat(50)}\n\ndata: ok\n\n`], 60);
  assert.deepEqual(events, [{ event: 'message', data: 'ok' }]);
  assert.deepEqual(oversize, [102]);
  const endless = parse([`data: ${'z'.repeat(100)}`, 'z'.repeat(100), '\n\ndata: after\n\n'], 60);
  assert.deepEqual(endless.events, [{ event: 'message', data: 'after' }]);
  assert.equal(endless.oversize.length, 1);
});

test('the last event id and the retry delay are kept for resuming; a retry that is not digits is ignored', () => {
  const parser = new SseParser(1000, () => {}, () => {});
  assert.equal(parser.lastEventId, undefined);
  assert.equal(parser.retryMs, undefined);
  parser.push('id: a\nretry: 250\ndata: x\n\nretry: soon\nid: b\n\n');
  assert.equal(parser.lastEventId, 'b', 'an id without data still counts');
  assert.equal(parser.retryMs, 250);
});

test('bug: a long line was searched again from its start at every chunk (a 4 MiB event in 16 KiB chunks: 1.5 s of CPU, 9 ms now); now each chunk is searched once', (t) => {
  // the characters given to RegExp exec and String indexOf/search while the parser reads, counted
  let searched = 0;
  const exec = RegExp.prototype.exec;
  const indexOf = String.prototype.indexOf;
  t.mock.method(RegExp.prototype, 'exec', function (text) {
    searched += String(text).length - (this.global || this.sticky ? this.lastIndex : 0);
    return exec.call(this, text);
  });
  t.mock.method(String.prototype, 'indexOf', function (...args) {
    searched += this.length;
    return indexOf.apply(this, args);
  });
  const chunk = 'x'.repeat(16384);
  const events = [];
  const parser = new SseParser(8 * 1024 * 1024, (e) => events.push(e), () => {});
  parser.push('data: ');
  for (let i = 0; i < 256; i++) parser.push(chunk);
  parser.push('\r');
  parser.push('');
  parser.push('\n\r\n');
  t.mock.restoreAll();
  assert.equal(events.length, 1);
  assert.equal(events[0].data.length, 256 * 16384);
  // before: about 256 * 256 / 2 chunks' worth (537 million characters)
  assert.ok(searched <= 2 * (256 * 16384 + 100), `searched ${searched} characters for ${256 * 16384} read`);
});

test('an empty chunk between a \\r and its \\n changes nothing', () => {
  assert.deepEqual(parse(['data: a\r', '', '\ndata: b\n\n']).events, [{ event: 'message', data: 'a\nb' }]);
});
