// stdio-output.ts at MCP_STDIO_MAX_QUEUED_BYTES's exact edge (found by mutation testing: replacing an
// answer that exactly fills the limit passed every test), over a real Writable whose host reads nothing.
import { Writable } from 'node:stream';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stdioOutput } from '../../dist/surfaces/stdio-output.js';

function stuckStdout() {
  let first = null;
  const stream = new Writable({ highWaterMark: 1 << 20, write(chunk, _encoding, _callback) { first = chunk.toString(); } });
  const lines = () => [first, ...stream.writableBuffer.map((entry) => entry.chunk.toString())].map((line) => JSON.parse(line));
  return { stream, lines };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const answer = (id) => ({ jsonrpc: '2.0', id, result: { text: 'é'.repeat(50) } });
const bytesOf = (message) => Buffer.byteLength(`${JSON.stringify(message)}\n`);

test('an answer that brings the unread bytes exactly to MCP_STDIO_MAX_QUEUED_BYTES is written whole; one byte less of room and it is replaced by -32003', () => {
  for (const [room, replaced] of [[0, false], [-1, true]]) {
    const { stream, lines } = stuckStdout();
    const max = bytesOf(answer(1)) + bytesOf(answer(2)) + room;
    const out = stdioOutput({ output: stream, log: quiet, highWaterBytes: 1 << 20, maxQueuedBytes: max, onWait() {}, onDrain() {}, onHostGone() {} });
    out.write(answer(1));
    out.write(answer(2));
    const [, second] = lines();
    assert.equal(second.id, 2);
    assert.equal(second.error?.code, replaced ? -32003 : undefined, `room ${room}`);
    assert.equal(out.replaced, replaced ? 1 : 0);
  }
});

test('the replacing of answers is logged once while stdout stays unread, and once more when a later wait replaces answers again', async () => {
  // a stdout that takes each line only when the test releases it
  const held = [];
  const stream = new Writable({ highWaterMark: 16, write(_chunk, _encoding, callback) { held.push(callback); } });
  const release = async () => {
    while (held.length > 0) held.shift()();
    await new Promise(setImmediate);
  };
  const warnings = [];
  const log = { ...quiet, warn: (line) => warnings.push(line) };
  let drains = 0;
  const out = stdioOutput({ output: stream, log, highWaterBytes: 1, maxQueuedBytes: bytesOf(answer(1)) + 10, onWait() {}, onDrain: () => drains++, onHostGone() {} });
  out.write(answer(1));
  out.write(answer(2));
  out.write(answer(3));
  assert.equal(out.replaced, 2);
  assert.equal(warnings.length, 1, 'one warning for the first episode');
  await release();
  assert.equal(drains, 1);
  assert.equal(out.waiting, false);
  out.write(answer(4));
  out.write(answer(5));
  assert.equal(out.replaced, 3);
  assert.equal(warnings.length, 2, 'a second episode after stdout drained is logged again');
  assert.match(warnings[1], /answers are replaced by -32003 errors until it reads/);
  await release();
});
