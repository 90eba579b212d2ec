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
    const r = await child.exited;
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
  const r = await child.exited;
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
