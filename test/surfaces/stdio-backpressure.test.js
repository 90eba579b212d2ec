// --stdio backpressure, the bridge a real child process whose stdout this test leaves unread for a
// while: with more than MCP_STDIO_HIGH_WATER_BYTES waiting in stdout the bridge stops reading stdin
// (its memory stays put, the host's writes back up), HTTP goes on meanwhile, and once stdout is read
// again every answer arrives, each once. Tool list notices owed while stdout is stuck are folded to
// one per target. Asserted on byte counts and message counts, never on time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { VARIABLES } from '../../dist/config.js';
import { INIT } from './stdio-child.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MiB = 1024 * 1024;
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const SUB = 'io.modelcontextprotocol/subscriptionId';
const CHANGED = 'notifications/tools/list_changed';
const LINES_PER_TURN = 64; // src/surfaces/stdio.ts

/**
 * The bridge with --stdio and MCP_PORT (for /metrics); stdout split into lines as they come (a
 * remainder kept, no rescans: answers here add up to tens of MB), every line parsed as one message.
 */
function spawnBridge(env) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js', '--stdio'], {
    cwd: ROOT,
    env: { ...base, CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', MCP_PORT: '0', LOG_LEVEL: 'debug', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages = [];
  let rest = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) messages.push(JSON.parse(line));
  });
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  child.stdin.on('error', () => {});
  const exited = once(child, 'exit').then(([code]) => code);
  // after the exit and the end of stdout (every line parsed): 'exit' can come before the last lines are read
  const closed = once(child, 'close').then(([code]) => code);
  return Object.assign(child, {
    messages,
    exited,
    closed,
    stderr: () => stderr,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    answered: (id) => messages.some((m) => m.id === id && ('result' in m || 'error' in m)),
    async origin() {
      await until(() => /also over HTTP at http:\/\/\S+/.test(stderr));
      return new URL(/also over HTTP at (http:\/\/\S+)/.exec(stderr)[1]).origin;
    },
  });
}

async function withBridge(env, fn) {
  const child = spawnBridge(env);
  try {
    return await fn(child);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await child.exited;
    }
  }
}

/** A metric's value, or undefined when the bridge has no such metric. */
async function metric(origin, name) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

const rssBytes = (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

test('bug: --stdio wrote to stdout without bound when the host did not read it (memory grew with every line); now stdin waits, HTTP goes on, every answer arrives once read', () => {
  const HIGH_WATER = 256 * 1024;
  return withBridge({ MCP_STDIO_HIGH_WATER_BYTES: String(HIGH_WATER) }, async (bridge) => {
    const origin = await bridge.origin();
    bridge.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
    bridge.send({ jsonrpc: '2.0', id: 'warm', method: 'tools/list' });
    await until(() => bridge.answered('warm'));
    const tools = bridge.messages.find((m) => m.id === 'warm').result.tools.length;
    const answerBytes = JSON.stringify(bridge.messages.find((m) => m.id === 'warm')).length + 1;
    assert.ok(answerBytes > 10_000, `a tools/list answer is large (${answerBytes} bytes)`);
    const rssBefore = rssBytes(bridge.pid);

    // the host stops reading stdout, and sends 2,000 tools/list (unbounded: ~48 MB of answers in
    // stdout's buffer) and 20,000 pings (~1 MB of input: far more than the pipes and buffers take)
    bridge.stdout.pause();
    const LISTS = 2000;
    const PINGS = 20_000;
    for (let i = 0; i < LISTS; i++) bridge.send({ jsonrpc: '2.0', id: i, method: 'tools/list' });
    for (let i = 0; i < PINGS; i++) bridge.send({ jsonrpc: '2.0', id: `p${i}`, method: 'ping' });
    const grewBound = 24 * MiB;
    // the bridge reports that it waits (or, unbounded, its memory passes the bound first)
    await until(async () => (await metric(origin, 'cc_stdio_input_waiting')) === 1 || rssBytes(bridge.pid) - rssBefore > grewBound);
    const grew = rssBytes(bridge.pid) - rssBefore;
    const queued = await metric(origin, 'cc_stdio_output_queued_bytes');
    console.log(`stdout stuck: ${queued} bytes queued (mark ${HIGH_WATER}, one answer ${answerBytes}), RSS grew ${grew} bytes, ${bridge.stdin.writableLength} bytes of input not taken`);
    assert.ok(grew <= grewBound, `RSS grew ${grew} bytes while stdout was stuck`);
    // the mark, then at most the answers of one turn of lines and the one that crossed it
    assert.ok(queued > HIGH_WATER && queued <= HIGH_WATER + (LINES_PER_TURN + 1) * answerBytes, `${queued} bytes queued`);
    // stdin is not read: the host's writes back up (most of the ~1 MB of input is still on our side)
    assert.ok(bridge.stdin.writableLength > 512 * 1024, `${bridge.stdin.writableLength} bytes of input not taken`);

    // other work goes on: HTTP answers while stdout is stuck
    const ping = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(ping.status, 200);
    assert.deepEqual(await ping.json(), { jsonrpc: '2.0', id: 1, result: {} });
    // still stuck, nothing more queued by it
    assert.equal(await metric(origin, 'cc_stdio_output_queued_bytes'), queued);

    // the host closes its side of stdin and reads stdout again: every answer, each once, then exit 0
    bridge.stdin.end();
    bridge.stdout.resume();
    const code = await bridge.closed;
    assert.equal(code, 0);
    const answers = bridge.messages.filter((m) => m.id !== 'init' && m.id !== 'warm');
    assert.equal(answers.length, LISTS + PINGS);
    const lists = answers.filter((m) => typeof m.id === 'number');
    assert.deepEqual(new Set(lists.map((m) => m.id)).size, LISTS);
    assert.ok(lists.every((m) => m.result.tools.length === tools));
    assert.equal(new Set(answers.filter((m) => typeof m.id === 'string').map((m) => m.id)).size, PINGS);
    assert.ok(answers.filter((m) => typeof m.id === 'string').every((m) => 'result' in m));
    assert.match(bridge.stderr(), /stdin is not read until it drains/);
  });
});

test('bug: --stdio tool list notices piled up in stdout while the host did not read it; now one per target is owed and goes out once stdout drains', () => {
  const file = writeConfig({ tools: [{ name: 't0', target: { computerId: 1 }, lua: 'return 1' }] });
  return withBridge({ CC_CONFIG: file, MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024) }, async (bridge) => {
    const origin = await bridge.origin();
    bridge.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
    for (const id of ['a', 'b']) bridge.send({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } });
    await until(() => bridge.answered('init') && bridge.messages.filter((m) => m.method === 'notifications/subscriptions/acknowledged').length === 2);

    bridge.stdout.pause();
    for (let i = 0; i < 100; i++) bridge.send({ jsonrpc: '2.0', id: i, method: 'tools/list' });
    const stuck = await until(async () => {
      const waiting = await metric(origin, 'cc_stdio_input_waiting');
      return waiting === undefined ? 'no metric' : waiting === 1 ? 'waiting' : false;
    });
    const queued = await metric(origin, 'cc_stdio_output_queued_bytes');

    // 30 changes while stdout is stuck: each a notice for the plain target and both subscriptions
    const CHANGES = 30;
    for (let n = 1; n <= CHANGES; n++) {
      writeConfig({ tools: [{ name: `t${n}`, target: { computerId: 1 }, lua: 'return 1' }] }, file);
      bridge.kill('SIGHUP');
      await until(() => (bridge.stderr().match(/config file reloaded/g) ?? []).length === n);
    }
    if (stuck === 'waiting') {
      assert.equal(await metric(origin, 'cc_stdio_output_queued_bytes'), queued, 'nothing more queued for the changes');
      assert.equal(await metric(origin, 'cc_stdio_notices_coalesced_total'), 3 * (CHANGES - 1));
    }

    bridge.stdout.resume();
    bridge.send({ jsonrpc: '2.0', id: 'last', method: 'tools/list' });
    await until(() => bridge.answered('last'));
    const notices = (id) => bridge.messages.filter((m) => m.method === CHANGED && m.params?._meta?.[SUB] === id);
    assert.equal(notices(undefined).length, 1, 'one plain notice for the 30 changes');
    assert.equal(notices('a').length, 1);
    assert.equal(notices('b').length, 1);
    // owed notices go out before the answer of any line read after the stall
    const at = (m) => bridge.messages.indexOf(m);
    assert.ok(at(notices('a')[0]) < at(bridge.messages.find((m) => m.id === 'last')));
    assert.deepEqual(bridge.messages.find((m) => m.id === 'last').result.tools.filter((t) => t.name.startsWith('t')).map((t) => t.name).includes(`t${CHANGES}`), true);
    // the subscriptions still work after the stall: one change, one notice each
    writeConfig({ tools: [{ name: 'final', target: { computerId: 1 }, lua: 'return 1' }] }, file);
    bridge.kill('SIGHUP');
    await until(() => notices('a').length === 2 && notices('b').length === 2 && notices(undefined).length === 2);
    bridge.stdin.end();
    assert.equal(await bridge.closed, 0);
  });
});

test('bug: --stdio exited at EOF with answers still in stdout\'s buffer (a host piping many requests then closing stdin lost the last ones); now every answer is written before exit', () =>
  withBridge({}, async (bridge) => {
    const LISTS = 1000;
    const PINGS = 20_000;
    let text = '';
    for (let i = 0; i < PINGS; i++) text += `${JSON.stringify({ jsonrpc: '2.0', id: `p${i}`, method: 'ping' })}\n`;
    for (let i = 0; i < LISTS; i++) text += `${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' })}\n`;
    bridge.stdin.end(text);
    assert.equal(await bridge.closed, 0);
    // every line was answered, each once
    assert.equal(bridge.messages.length, LISTS + PINGS);
    assert.equal(new Set(bridge.messages.map((m) => m.id)).size, LISTS + PINGS);
    assert.match(bridge.stderr(), /end of input on stdin; shutting down/);
  }));

test('--stdio shutdown while stdout is stuck: a tool list notice owed to a subscription goes out before its complete result and the cancel that closes it, never after', () => {
  const file = writeConfig({ tools: [{ name: 't0', target: { computerId: 1 }, lua: 'return 1' }] });
  return withBridge({ CC_CONFIG: file, MCP_STDIO_HIGH_WATER_BYTES: String(64 * 1024) }, async (bridge) => {
    const origin = await bridge.origin();
    bridge.send({ jsonrpc: '2.0', id: 'a', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } });
    await until(() => bridge.messages.some((m) => m.method === 'notifications/subscriptions/acknowledged'));

    bridge.stdout.pause();
    for (let i = 0; i < 100; i++) bridge.send({ jsonrpc: '2.0', id: i, method: 'tools/list' });
    await until(async () => (await metric(origin, 'cc_stdio_input_waiting')) === 1);
    // a change while stdout is stuck: the subscription's notice is owed, not written
    writeConfig({ tools: [{ name: 't1', target: { computerId: 1 }, lua: 'return 1' }] }, file);
    bridge.kill('SIGHUP');
    await until(() => /config file reloaded/.test(bridge.stderr()));
    assert.equal(await metric(origin, 'cc_stdio_input_waiting'), 1, 'still stuck when the bridge is told to stop');
    bridge.kill('SIGTERM');
    bridge.stdout.resume();
    assert.equal(await bridge.closed, 0, bridge.stderr());
    const ofA = bridge.messages.filter((m) => m.params?._meta?.[SUB] === 'a' || m.id === 'a' || m.params?.requestId === 'a');
    assert.deepEqual(
      ofA.map((m) => m.method ?? `answer ${m.result?.resultType}`),
      ['notifications/subscriptions/acknowledged', CHANGED, 'answer complete', 'notifications/cancelled'],
    );
  });
});
