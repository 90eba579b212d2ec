// stdio-output.ts over a real Writable that the "host" never reads (its write callbacks held): past
// MCP_STDIO_MAX_QUEUED_BYTES an answer is replaced by a -32003 error for its id, each response of a
// batch too, while notifications and answers that fit are written as they are.
import { Writable } from 'node:stream';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stdioOutput } from '../../dist/surfaces/stdio-output.js';

/** A stdout whose host reads nothing: the first line is taken by its write and never finishes, the rest wait in its buffer. */
function stuckStdout() {
  let first = null;
  const stream = new Writable({ highWaterMark: 1024, write(chunk, _encoding, _callback) { first = chunk.toString(); } });
  const lines = () => [first, ...stream.writableBuffer.map((entry) => entry.chunk.toString())].map((line) => JSON.parse(line));
  return { stream, lines };
}

const quiet = { debug() {}, info() {}, warn(line) { quiet.warned.push(line); }, error() {}, warned: [] };

test('stdio output: past MCP_STDIO_MAX_QUEUED_BYTES with bytes unread, a response (each of a batch) becomes a -32003 error for its id; notifications and a first answer of any size are written whole', () => {
  const { stream, lines: written } = stuckStdout();
  const out = stdioOutput({ output: stream, log: quiet, highWaterBytes: 1024, maxQueuedBytes: 4096, onWait() {}, onDrain() {}, onHostGone() {} });
  const big = 'y'.repeat(10_000);
  // nothing queued yet: written whole, though over the limit by itself
  out.write({ jsonrpc: '2.0', id: 1, result: { text: big } });
  out.write({ jsonrpc: '2.0', id: 'two', result: { text: big } });
  out.write([{ jsonrpc: '2.0', id: 3, result: {} }, { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'x'.repeat(5000) } }]);
  out.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: big } });
  out.write({ jsonrpc: '2.0', id: 5, result: {} });
  const lines = written();
  assert.equal(lines.length, 5);
  assert.equal(lines[0].result.text, big);
  assert.equal(lines[1].id, 'two');
  assert.equal(lines[1].error.code, -32003);
  assert.match(lines[1].error.message, /^Service Unavailable: the answer \(10050 bytes\) was not written: the host had not read 10046 bytes of stdout \(over MCP_STDIO_MAX_QUEUED_BYTES=4096\)\. The request was run; a host must read stdout while its calls run$/);
  assert.deepEqual(lines[2].map((m) => [m.id, m.error?.code]), [[3, -32003], [4, -32003]]);
  assert.equal(lines[3].params.reason, big, 'a notification is written as it is');
  assert.equal(lines[4].error.code, -32003, 'a small answer too, once the limit is passed');
  assert.equal(out.replaced, 4);
  assert.equal(quiet.warned.length, 1, 'one warn line per stuck spell');
  assert.match(quiet.warned[0], /answers are replaced by -32003 errors until it reads/);
});
