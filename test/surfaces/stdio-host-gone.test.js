// A --stdio host that stops reading stdout (closes it, or quits) while calls are in flight: the
// calls are cancelled at their computers (the cancel frame notifications/cancelled would send),
// nothing more is written, and the bridge exits 0 with a line on stderr saying so. Over the socket
// pair a Node host's child_process gives (seen without a write) and over a real pipe (seen at the
// first write that fails). A real child process and a real fake computer each time; no timing.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, constants } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeComputer, until } from '../helpers.js';
import { INIT, killAtEnd, spawnStdio } from './stdio-child.js';

const line = (message) => `${JSON.stringify(message)}\n`;
const INIT_LINE = line({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
const execLine = (id, computerId) => line({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId, code: 'return 1' } } });
// an old build never cancels: it waits for the shutdown clock, which these tests set to an hour
const ENV = { CC_EXEC_TIMEOUT_MS: '300000', MCP_STDIO_SHUTDOWN_IDLE_MS: '3600000' };

/** A linked fake computer that never answers. */
async function silentComputer(t, child, computerId) {
  const computer = new FakeComputer(await child.linkUrl(), { computerId, onRequest: () => null });
  t.after(() => computer.close());
  assert.equal((await computer.link()).type, 'hello-ok');
  return computer;
}

const GONE = /warn stdout: the host no longer reads it \(EPIPE\); 1 request\(s\) in flight cancelled at their computers; nothing more is written; exiting$/m;

for (const closeStdin of [true, false]) {
  test(`bug: a --stdio host that closed stdout${closeStdin ? ' and stdin' : ' (stdin left open)'} with a call in flight kept the bridge up (until MCP_STDIO_SHUTDOWN_IDLE_MS, or for ever) and the computer got no cancel; now the call is cancelled at the computer and the bridge exits 0 saying why`, { timeout: 60_000 }, async (t) => {
    const child = spawnStdio(ENV);
    killAtEnd(t, child);
    const computer = await silentComputer(t, child, 5);
    child.stdin.write(INIT_LINE + execLine('call', 5));
    const request = await computer.next((f) => f.type === 'request');
    // the host goes: a Node host's child_process stdout is a socket pair, closed here without a byte
    // ever being written to it by the bridge after the request
    child.stdout.destroy();
    if (closeStdin) child.stdin.end();
    const cancel = await computer.next((f) => f.type === 'cancel');
    assert.equal(cancel.id, request.id, 'the cancel names the call in flight');
    const r = await child.exited;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, GONE);
    assert.doesNotMatch(r.stderr, /MCP_STDIO_SHUTDOWN_IDLE_MS\) with/, 'not the shutdown clock');
    assert.equal((await computer.closed).code, 1001);
  });
}

test('bug: a --stdio host that quit (stdin, stdout and stderr all closed) with a call in flight crashed the bridge (exit 1: the log line hit a closed stderr) before the call was cancelled, the link dropped (1006); now the computer gets the cancel, the link closes with 1001, exit 0', { timeout: 60_000 }, async (t) => {
  const child = spawnStdio(ENV);
  killAtEnd(t, child);
  const computer = await silentComputer(t, child, 9);
  child.stdin.write(INIT_LINE + execLine('call', 9));
  const request = await computer.next((f) => f.type === 'request');
  child.stderr.destroy();
  child.stdout.destroy();
  child.stdin.end();
  const r = await child.exited;
  assert.equal(r.code, 0, 'no crash');
  const cancel = await computer.next((f) => f.type === 'cancel');
  assert.equal(cancel.id, request.id);
  assert.equal((await computer.closed).code, 1001);
});

test('bug: a --stdio host reading a real pipe (a shell |, Python subprocess) that closed it with two calls in flight: the answer of the first failed (EPIPE) and the second ran on, uncancelled, until the shutdown clock; now that first failed write cancels the second at its computer and the bridge exits 0', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'stdio-pipe-'));
  const fifo = join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  // the host's end first (non-blocking), so opening the bridge's end does not wait
  const hostFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const bridgeFd = openSync(fifo, 'w');
  const child = spawnStdio(ENV, { stdout: bridgeFd });
  closeSync(bridgeFd);
  const host = new Socket({ fd: hostFd, readable: true, writable: false });
  let read = '';
  host.setEncoding('utf8').on('data', (c) => (read += c));
  killAtEnd(t, child);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const answers = [];
  const computer = new FakeComputer(await child.linkUrl(), { computerId: 6, onRequest: (frame) => new Promise((resolve) => answers.push(() => resolve({ ok: true, result: { ok: true, values: [frame.id.length], output: '' } }))) });
  t.after(() => computer.close());
  assert.equal((await computer.link()).type, 'hello-ok');
  child.stdin.write(INIT_LINE + execLine('first', 6) + execLine('second', 6));
  const requests = () => computer.received.filter((f) => f.type === 'request');
  await until(() => requests().length === 2 && read.includes('"id":"init"'));
  const [first, second] = requests();
  host.destroy();
  // a real pipe shows its closed reader only to a write: the first answer is that write
  answers[0]();
  const cancel = await computer.next((f) => f.type === 'cancel');
  assert.notEqual(first.id, second.id);
  assert.equal(cancel.id, second.id, 'the call still in flight is cancelled');
  const r = await child.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, GONE);
  assert.equal((await computer.closed).code, 1001);
});

test('stdio: SIGPIPE is not fatal (Node ignores it); the bridge goes on answering and exits 0 at EOF', { timeout: 60_000 }, async (t) => {
  const child = spawnStdio();
  killAtEnd(t, child);
  child.stdin.write(INIT_LINE);
  await child.answer('init');
  child.kill('SIGPIPE');
  child.send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
  assert.deepEqual((await child.answer('p')).result, {});
  child.stdin.end();
  const r = await child.closed;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.signal, null);
});

test('bug: a --stdio host that stopped reading stdout (stdin paused for it) and then closed it, stdin left open, kept the bridge up for ever: the close let it run the lines waiting (each answer a failed write) and read on; now it drops them, cancels the call in flight and exits 0', { timeout: 60_000 }, async (t) => {
  const child = spawnStdio({ ...ENV, MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024) });
  killAtEnd(t, child);
  const computer = await silentComputer(t, child, 7);
  child.stdin.write(INIT_LINE + execLine('call', 7));
  const request = await computer.next((f) => f.type === 'request');
  // the host stops reading; far more answer bytes than the mark and the pipe hold
  child.stdout.pause();
  for (let i = 0; i < 400; i++) child.send({ jsonrpc: '2.0', id: `l${i}`, method: 'tools/list' });
  await until(() => /stdin is not read until it drains/.test(child.out.stderr));
  child.stdout.destroy();
  const cancel = await computer.next((f) => f.type === 'cancel');
  assert.equal(cancel.id, request.id);
  const r = await child.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /warn stdout: the host no longer reads it \(EPIPE\); 1 request\(s\) in flight cancelled at their computers(, \d+ line\(s\) read and not run dropped)?; nothing more is written; exiting$/m);
});

/** One metric's value from the bridge's /metrics. */
async function metric(child, name) {
  const url = /also over HTTP at (http:\S+)\/mcp/.exec(child.out.stderr)[1];
  const text = await (await fetch(`${url}/metrics`)).text();
  const found = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  assert.ok(found, `${name} in /metrics`);
  return Number(found[1]);
}

test('bug: --stdio buffered every answer of the calls in flight when the host stopped reading stdout (the mark only stops stdin): 30 answers of 400 KB all queued; now past MCP_STDIO_MAX_QUEUED_BYTES an answer is replaced by a -32003 error for its id, and every id is still answered once', { timeout: 60_000 }, async (t) => {
  const LIMIT = 1024 * 1024;
  const N = 30;
  const child = spawnStdio({ CC_EXEC_TIMEOUT_MS: '300000', MCP_PORT: '0', MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024), MCP_STDIO_MAX_QUEUED_BYTES: String(LIMIT) });
  killAtEnd(t, child);
  const held = [];
  const computer = new FakeComputer(await child.linkUrl(), { computerId: 8, onRequest: () => new Promise((resolve) => held.push(resolve)) });
  t.after(() => computer.close());
  assert.equal((await computer.link()).type, 'hello-ok');
  child.stdin.write(INIT_LINE);
  await child.answer('init');
  await until(() => /also over HTTP at/.test(child.out.stderr));
  // the host stops reading; the calls are all in flight before their answers come
  child.stdout.pause();
  child.stdin.write(Array.from({ length: N }, (_, i) => execLine(i, 8)).join(''));
  await until(() => held.length === N);
  const output = 'x'.repeat(200_000);
  for (const answer of held) answer({ ok: true, result: { ok: true, values: [], output } });
  await until(async () => (await metric(child, 'cc_tool_calls_in_flight')) === 0);
  // the answer text carries the output twice (content and structuredContent): ~400 KB each
  const queued = await metric(child, 'cc_stdio_output_queued_bytes');
  assert.ok(queued <= LIMIT + 500_000, `${queued} bytes queued: at most the limit and one answer`);
  const replaced = await metric(child, 'cc_stdio_answers_replaced_total');
  assert.ok(replaced > 0);
  assert.match(child.out.stderr, /warn stdout: the host has not read \d+ bytes \(over MCP_STDIO_MAX_QUEUED_BYTES=1048576\); answers are replaced by -32003 errors until it reads/);
  child.stdout.resume();
  await until(() => child.messages.filter((m) => typeof m.id === 'number').length === N);
  const answers = child.messages.filter((m) => typeof m.id === 'number');
  assert.deepEqual(answers.map((m) => m.id).sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i), 'each id once');
  const errors = answers.filter((m) => m.error);
  assert.equal(errors.length, replaced);
  for (const m of errors) {
    assert.equal(m.error.code, -32003);
    assert.match(m.error.message, /^Service Unavailable: the answer \(\d+ bytes\) was not written: the host had not read \d+ bytes of stdout \(over MCP_STDIO_MAX_QUEUED_BYTES=1048576\)\. The request was run; a host must read stdout while its calls run$/);
  }
  for (const m of answers.filter((a) => a.result)) assert.equal(m.result.structuredContent.output, output);
  child.stdin.end();
  assert.equal((await child.closed).code, 0);
});
