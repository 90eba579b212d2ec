// Adversarial tests of --stdio backpressure (MCP_STDIO_HIGH_WATER_BYTES), the bridge a real child
// process: a call cancelled while stdout is stuck, a shutdown while stdin is paused, and a host that
// reads stdout a little at a time. Asserted on message counts, never on time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeComputer, until } from '../helpers.js';
import { INIT, answerCounts, killAtEnd, spawnStdio } from '../surfaces/stdio-child.js';

const HIGH_WATER = 64 * 1024;

/** Sends tools/list calls with the host not reading stdout until the bridge stops reading stdin. */
async function fillUntilStuck(child, prefix) {
  child.stdout.pause();
  const sent = [];
  // far more answer bytes than the mark and the pipe hold: the bridge must stop reading
  for (let i = 0; i < 400; i++) {
    const id = `${prefix}${i}`;
    sent.push(id);
    child.send({ jsonrpc: '2.0', id, method: 'tools/list' });
  }
  await until(() => /stdin is not read until it drains/.test(child.out.stderr));
  return sent;
}

test('stdio: a call cancelled while stdout is stuck is cancelled once the cancel is read (the computer gets its cancel frame), answered at most once, and every other call once', async (t) => {
  const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(HIGH_WATER) });
  killAtEnd(t, child);
  const linkUrl = await child.linkUrl();
  let request = null;
  const computer = new FakeComputer(linkUrl, {
    computerId: 3,
    onRequest: (frame) => {
      if (frame.method === 'ping') return { ok: true, result: 'pong' };
      request = frame;
      return null; // never answers: only the cancel ends it
    },
  });
  t.after(() => computer.close());
  assert.equal((await computer.link()).type, 'hello-ok');
  child.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
  await child.answer('init');
  child.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  child.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 3, code: 'sleep(60)' } } });
  await until(() => request !== null);
  const sent = await fillUntilStuck(child, 'a');
  // the host cancels the long call while stdout is stuck, then sends more
  child.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'user' } });
  for (let i = 0; i < 50; i++) child.send({ jsonrpc: '2.0', id: `b${i}`, method: 'ping' });
  child.send({ jsonrpc: '2.0', id: 'last', method: 'ping' });
  // now the host reads
  child.stdout.resume();
  await child.answer('last');
  const cancel = await computer.next((f) => f.type === 'cancel');
  assert.equal(cancel.id, request.id, 'the cancel frame names the long call');
  child.stdin.end();
  const r = await child.closed;
  assert.equal(r.code, 0, r.stderr);
  const counts = answerCounts(child.messages);
  for (const id of [...sent, ...Array.from({ length: 50 }, (_, i) => `b${i}`), 'last', 'init']) assert.equal(counts.get(id), 1, `${id} answered once`);
  assert.ok((counts.get('long') ?? 0) <= 1, 'the cancelled call is answered at most once');
  for (const [id, n] of counts) assert.equal(n, 1, `${id} answered ${n} times`);
});

test('stdio: SIGTERM while stdin is paused for a stuck stdout exits 0; what the host then reads is whole lines, each id at most once, and lines it never read make no crash', async (t) => {
  const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(HIGH_WATER) });
  killAtEnd(t, child);
  child.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
  await child.answer('init');
  await fillUntilStuck(child, 's');
  child.kill('SIGTERM');
  // the host goes on reading: the bridge hands over what it has, within its shutdown deadline
  child.stdout.resume();
  const r = await child.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /TypeError|RangeError|unhandled|ERR_STREAM/i);
  for (const [id, n] of answerCounts(child.messages)) assert.equal(n, 1, `${id} answered ${n} times`);
});

test('stdio: a host that reads stdout a few KiB at a time (pausing between) gets every answer exactly once, parse errors and oversized lines included, in the order of the lines for pings', async (t) => {
  const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(HIGH_WATER), MCP_MAX_BODY_BYTES: '65536' });
  killAtEnd(t, child);
  // a slow host: after each chunk it reads, it waits a turn before the next
  child.stdout.on('data', () => {
    child.stdout.pause();
    setImmediate(() => child.stdout.resume());
  });
  child.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
  const ids = [];
  let bad = 0;
  for (let i = 0; i < 1500; i++) {
    if (i % 97 === 0) {
      child.raw('{"jsonrpc":"2.0","id":\n');
      bad++;
    } else if (i % 131 === 0) {
      child.raw(`{"jsonrpc":"2.0","id":"big${i}","method":"ping","params":{"x":"${'y'.repeat(70_000)}"}}\n`);
      bad++;
    } else {
      const id = i % 3 === 0 ? `l${i}` : `p${i}`;
      ids.push(id);
      child.send({ jsonrpc: '2.0', id, method: i % 3 === 0 ? 'tools/list' : 'ping' });
    }
  }
  // stdin ends at once: a host this slow is still reading when it does, and the shutdown waits for it
  // while it takes bytes (MCP_STDIO_SHUTDOWN_IDLE_MS; test/surfaces/stdio-shutdown.test.js)
  child.send({ jsonrpc: '2.0', id: 'last', method: 'ping' });
  child.stdin.end();
  // `closed`, not `exited`: this slow host is still reading the last answers when the bridge exits
  const r = await child.closed;
  assert.equal(r.code, 0, r.stderr);
  const counts = answerCounts(child.messages);
  for (const id of [...ids, 'last']) assert.equal(counts.get(id), 1, `${id} answered once`);
  const nulls = child.messages.filter((m) => m.id === null && 'error' in m);
  assert.equal(nulls.length, bad, 'one error per bad or oversized line');
  const pingOrder = child.messages.filter((m) => typeof m.id === 'string' && m.id.startsWith('p')).map((m) => m.id);
  assert.deepEqual(pingOrder, ids.filter((id) => id.startsWith('p')), 'pings answered in the order sent');
});
