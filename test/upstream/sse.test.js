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
