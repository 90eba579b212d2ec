// The end of a --stdio bridge, a real child process each time: a host still reading stdout slowly at
// EOF gets every answer; SIGTERM while stdin is paused for a stuck stdout answers every request read
// (run, or refused -32003) and reads no more; a host that stops reading, or reads too slowly, cannot
// keep the bridge alive past MCP_STDIO_SHUTDOWN_IDLE_MS / MCP_STDIO_SHUTDOWN_MAX_MS. Asserted on
// messages and log lines, never on time.
import { once } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeComputer, until } from '../helpers.js';
import { INIT, answerCounts, killAtEnd, spawnStdio } from './stdio-child.js';

/**
 * A host that takes `bytes` characters of stdout every `everyMs` and nothing else: a slow reader.
 * Resolves once it has read all of stdout (the bridge may exit before that: the rest is in the pipe).
 */
function readSlowly(child, bytes, everyMs) {
  child.stdout.pause();
  const timer = setInterval(() => {
    // in paused mode read() hands what it returns to the 'data' listeners (the message parser) too;
    // read(n) waits for n unless it is the end, so never more than is buffered
    child.stdout.read(Math.min(bytes, child.stdout.readableLength) || bytes);
  }, everyMs);
  return once(child.stdout, 'end').finally(() => clearInterval(timer));
}

/** One tools/list line (24 KB of answer) per id, as one string. */
const toolsList = (ids) => ids.map((id) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`).join('');
const INIT_LINE = `${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT })}\n`;
const idsOf = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

test('bug: a --stdio host still reading stdout slowly at the end of input lost the answers left when the 5 s shutdown deadline (from EOF) ran out; now every answer is handed over while it reads', async (t) => {
  // the mark high enough that stdin is never paused: every line is run at once and ~1.4 MB of
  // answers wait in stdout when stdin ends; the host then takes 8 KiB every 40 ms (~200 KB/s)
  const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024 * 1024) });
  killAtEnd(t, child);
  const ids = idsOf('l', 56);
  const allRead = readSlowly(child, 8192, 40);
  child.stdin.end(INIT_LINE + toolsList(ids));
  const r = await child.exited;
  await allRead;
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /MCP_STDIO_SHUTDOWN_(IDLE|MAX)_MS\)/);
  const counts = answerCounts(child.messages);
  const missing = ids.filter((id) => counts.get(id) !== 1);
  assert.deepEqual(missing, [], `${missing.length} of ${ids.length} tools/list answers lost`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`bug: ${signal} while stdin is paused for a stuck stdout left the requests already read but not run without an answer; now each is answered once (run, or -32003 "shutting down") and no further stdin is read`, async (t) => {
    const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024) });
    killAtEnd(t, child);
    child.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
    await child.answer('init');
    // the host stops reading; 400 tools/list (24 KB of answer each) in one write of ~20 KB, which the
    // bridge reads in one go: it runs them 64 at a time until stdout is stuck, the rest wait read
    child.stdout.pause();
    const ids = idsOf('s', 400);
    child.raw(toolsList(ids));
    await until(() => /stdin is not read until it drains/.test(child.out.stderr));
    child.kill(signal);
    await until(() => new RegExp(`${signal} received; shutting down`).test(child.out.stderr));
    // sent after the signal: never read, never answered
    for (let i = 0; i < 20; i++) child.send({ jsonrpc: '2.0', id: `after${i}`, method: 'ping' });
    child.stdout.resume();
    const r = await child.closed;
    assert.equal(r.code, 0, r.stderr);
    const counts = answerCounts(child.messages);
    const missing = ids.filter((id) => counts.get(id) !== 1);
    assert.deepEqual(missing, [], `${missing.length} of ${ids.length} requests read got no answer (or more than one)`);
    const refused = child.messages.filter((m) => m.error?.code === -32003);
    assert.ok(refused.length > 0, 'some requests were still waiting, read but not run, at the signal');
    for (const m of refused) {
      assert.ok(ids.includes(m.id), `refused ${m.id}`);
      assert.match(m.error.message, new RegExp(`the bridge is shutting down \\(${signal} received\\); this request was read but not run`));
    }
    assert.match(r.stderr, new RegExp(`${signal} received: stdin is no longer read; ${refused.length} request\\(s\\) read and not run yet answered -32003`));
    // the answers that were run come first, in the order sent; the refused ones are the rest
    const order = child.messages.filter((m) => ids.includes(m.id)).map((m) => m.id);
    assert.deepEqual(order, ids, 'answered in the order sent');
    for (let i = 0; i < 20; i++) assert.equal(counts.get(`after${i}`), undefined, `after${i} was read after the signal`);
  });
}

test('stdio shutdown bound: a host that stops reading stdout after the end of input does not keep the bridge: it exits 0 once MCP_STDIO_SHUTDOWN_IDLE_MS pass without a byte taken, saying how much it could not hand over', async (t) => {
  const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024 * 1024), MCP_STDIO_SHUTDOWN_IDLE_MS: '300' });
  killAtEnd(t, child);
  child.stdout.pause();
  child.stdin.end(INIT_LINE + toolsList(idsOf('l', 56)));
  const r = await child.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /the host took no byte of stdout for 300 ms \(MCP_STDIO_SHUTDOWN_IDLE_MS\) with \d+ bytes not taken; exiting/);
  // what the pipe held is still whole lines, each answer at most once
  child.stdout.resume();
  await once(child.stdout, 'end');
  for (const [id, n] of answerCounts(child.messages)) assert.equal(n, 1, `${id} answered ${n} times`);
});

test('stdio shutdown bound: a host that keeps reading, too slowly, cannot hold the bridge past MCP_STDIO_SHUTDOWN_MAX_MS: it exits 0 saying so, every answer the host got whole and once', async (t) => {
  const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024 * 1024), MCP_STDIO_SHUTDOWN_IDLE_MS: '60000', MCP_STDIO_SHUTDOWN_MAX_MS: '1000' });
  killAtEnd(t, child);
  const allRead = readSlowly(child, 8192, 40);
  child.stdin.end(INIT_LINE + toolsList(idsOf('l', 56)));
  const r = await child.exited;
  await allRead;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /the shutdown took 1000 ms \(MCP_STDIO_SHUTDOWN_MAX_MS\) with \d+ bytes of stdout not taken by the host; exiting/);
  assert.ok(child.messages.length > 0, 'the host got some answers');
  for (const [id, n] of answerCounts(child.messages)) assert.equal(n, 1, `${id} answered ${n} times`);
});

test('stdio: SIGTERM with a call in flight at a computer answers it (the link closes) and exits 0; no answer is lost or doubled', async (t) => {
  const child = spawnStdio({});
  killAtEnd(t, child);
  const computer = new FakeComputer(await child.linkUrl(), { computerId: 5, onRequest: () => null });
  t.after(() => computer.close());
  assert.equal((await computer.link()).type, 'hello-ok');
  child.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
  await child.answer('init');
  child.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 5, code: 'sleep(60)' } } });
  await computer.next((f) => f.type === 'request');
  child.kill('SIGTERM');
  const r = await child.closed;
  assert.equal(r.code, 0, r.stderr);
  const answer = child.messages.find((m) => m.id === 'long');
  assert.ok(answer, `the call in flight was answered: ${r.stderr}`);
  assert.equal(answerCounts(child.messages).get('long'), 1);
  assert.match(JSON.stringify(answer), /bridge shutting down|closed|disconnect/i);
});

test('bug: a host that ended stdin while it was paused for a stuck stdout, and then read nothing, kept the bridge alive for ever (its lines waited for a drain that never came); now it exits 0 after MCP_STDIO_SHUTDOWN_IDLE_MS without a byte taken', { timeout: 60_000 }, async (t) => {
  const child = spawnStdio({ MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024), MCP_STDIO_SHUTDOWN_IDLE_MS: '300' });
  killAtEnd(t, child);
  child.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
  await child.answer('init');
  child.stdout.pause();
  child.raw(toolsList(idsOf('s', 400)));
  await until(() => /stdin is not read until it drains/.test(child.out.stderr));
  child.stdin.end();
  // the host never reads again: the bridge must still exit (on the build before: never, the test's timeout)
  const r = await child.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /the host took no byte of stdout for 300 ms \(MCP_STDIO_SHUTDOWN_IDLE_MS\) with \d+ bytes not taken; exiting/);
});

/** A tools/call line of exec-lua on `computerId`. */
const execLine = (id, computerId) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId, code: 'return 1' } } })}\n`;

test('bug: a --stdio host that wrote its requests and closed stdin (printf ... | node dist/index.js --stdio) lost the answers of calls still in flight at EOF: they were cancelled at once (answered "error: cancelled"); now they finish and their answers are written, the links close with 1001, exit 0', { timeout: 60_000 }, async (t) => {
  const child = spawnStdio({ CC_EXEC_TIMEOUT_MS: '300000' });
  killAtEnd(t, child);
  // the computer answers only once the bridge has seen the end of stdin (its log line says so)
  const computer = new FakeComputer(await child.linkUrl(), {
    computerId: 5,
    onRequest: async (frame) => {
      await until(() => /end of input on stdin/.test(child.out.stderr));
      return { ok: true, result: { ok: true, values: [`done ${frame.id.length}`], output: 'printed\n' } };
    },
  });
  t.after(() => computer.close());
  assert.equal((await computer.link()).type, 'hello-ok');
  child.stdin.end(INIT_LINE + execLine('a', 5) + execLine('b', 5));
  const r = await child.closed;
  assert.equal(r.code, 0, r.stderr);
  for (const id of ['a', 'b']) {
    const answer = child.messages.find((m) => m.id === id);
    assert.ok(answer?.result, `${id} answered with a result: ${JSON.stringify(answer)}`);
    assert.equal(answer.result.isError, undefined, JSON.stringify(answer));
    assert.equal(answer.result.structuredContent.output, 'printed\n');
  }
  assert.equal(answerCounts(child.messages).get('a'), 1);
  assert.equal(answerCounts(child.messages).get('b'), 1);
  assert.deepEqual(computer.received.filter((f) => f.type === 'cancel'), [], 'nothing cancelled');
  assert.equal((await computer.closed).code, 1001);
  assert.match(r.stderr, /end of input on stdin: 2 request\(s\) still running may finish/);
});

test('stdio EOF: a call still running when MCP_STDIO_SHUTDOWN_IDLE_MS pass with nothing for the host to read gets a clear -32003 answer and is cancelled at its computer; a batch (2025-03-26) gets one per request; the links close with 1001, exit 0', { timeout: 60_000 }, async (t) => {
  const child = spawnStdio({ CC_EXEC_TIMEOUT_MS: '300000', MCP_STDIO_SHUTDOWN_IDLE_MS: '300' });
  killAtEnd(t, child);
  const computer = new FakeComputer(await child.linkUrl(), { computerId: 6, onRequest: () => null });
  t.after(() => computer.close());
  assert.equal((await computer.link()).type, 'hello-ok');
  const init = JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { ...INIT, protocolVersion: '2025-03-26' } });
  const call = (id) => JSON.parse(execLine(id, 6));
  const batch = JSON.stringify([call('b1'), { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }, call('b2')]);
  child.stdin.end(`${init}\n${execLine('hang', 6)}${batch}\n`);
  const r = await child.closed;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /3 request\(s\) still running answered -32003 and cancelled; exiting/);
  const single = child.messages.find((m) => m.id === 'hang');
  assert.equal(single.error.code, -32003);
  assert.match(single.error.message, /^Service Unavailable: stdin ended and the bridge stopped waiting for this request, still running: it did not finish within 300 ms \(MCP_STDIO_SHUTDOWN_IDLE_MS\) with nothing else for the host to read\. It was cancelled; send it again to a running bridge$/);
  const batchAnswer = child.messages.find((m) => Array.isArray(m));
  assert.deepEqual(batchAnswer.map((m) => [m.id, m.error.code]), [['b1', -32003], ['b2', -32003]]);
  assert.equal(child.messages.filter((m) => !Array.isArray(m) && m.id !== 'init').length, 1, 'no second answer for the calls cut off');
  const requests = computer.received.filter((f) => f.type === 'request').map((f) => f.id).sort();
  await until(() => computer.received.filter((f) => f.type === 'cancel').length === 3);
  assert.deepEqual(computer.received.filter((f) => f.type === 'cancel').map((f) => f.id).sort(), requests);
  assert.equal((await computer.closed).code, 1001);
});
