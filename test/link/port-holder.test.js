// holdLinkPort: waiting for a taken link port (--stdio, CC_LINK_RETRY_MS) in process, with real
// listeners; the retry schedule itself is driven by the `start` function the bridge passes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { holdLinkPort, every } from '../../dist/link/port-holder.js';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { createLogger } from '../../dist/log.js';
import { until } from '../helpers.js';

async function busyPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((resolve) => server.close(resolve)) };
}

const inUse = () => Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

function recorder() {
  const lines = [];
  const log = createLogger('debug', (line) => lines.push(line));
  return { lines, log };
}

test('every(): ms below a second, seconds above', () => {
  assert.equal(every(250), '250 ms');
  assert.equal(every(2000), '2 s');
  assert.equal(every(1500), '1.5 s');
});

test('a port error other than EADDRINUSE, or retryMs 0, is thrown as before', async () => {
  const { log } = recorder();
  const other = Object.assign(new Error('listen EACCES'), { code: 'EACCES' });
  await assert.rejects(holdLinkPort(() => Promise.reject(other), { host: '127.0.0.1', port: 80, retryMs: 100, log, onUnreachable() {} }), other);
  const taken = inUse();
  await assert.rejects(holdLinkPort(() => Promise.reject(taken), { host: '127.0.0.1', port: 80, retryMs: 0, log, onUnreachable() {} }), taken);
});

test('while waiting: other errors are logged once per kind and retried; a listener that comes up after close() is closed at once', async () => {
  const { lines, log } = recorder();
  const reasons = [];
  const attempts = [];
  // each call after the first hands the test a pending attempt to settle
  const start = () => (attempts.length === 0 ? (attempts.push(null), Promise.reject(inUse())) : new Promise((resolve, reject) => attempts.push({ resolve, reject })));
  const holder = await holdLinkPort(start, { host: '::1', port: 3001, retryMs: 1, log, onUnreachable: (r) => reasons.push(r) });
  assert.equal(holder.server, null);
  const status = holder.status();
  assert.equal(status.state, 'waiting');
  assert.equal(status.address, '[::1]:3001');
  assert.match(reasons[0], /^the link port \[::1\]:3001 is in use by another process/);
  const gone = Object.assign(new Error('listen EADDRNOTAVAIL ::1'), { code: 'EADDRNOTAVAIL' });
  for (const err of [gone, gone, inUse(), gone]) {
    const n = attempts.length;
    await until(() => attempts.length > n);
    attempts.at(-1).reject(err);
  }
  await until(() => attempts.length >= 6);
  assert.equal(lines.filter((l) => l.includes('cannot be taken over')).length, 2, lines.join('\n'));
  assert.equal(lines.filter((l) => l.includes('is in use by another process')).length, 1);
  // an attempt is under way when the bridge shuts down: its late listener is closed, not kept
  let closed = 0;
  const closing = holder.close();
  attempts.at(-1).resolve({ address: { port: 3001 }, close: async () => void closed++ });
  await closing;
  assert.equal(closed, 1);
  assert.equal(holder.server, null);
  assert.equal(holder.status().state, 'closed');
  assert.equal(reasons.at(-1), null);
  await holder.close();
});

test('a bridge waiting for its link port leaves no timer after close(), and takes the port once it frees', async () => {
  const busy = await busyPort();
  const logs = [];
  const config = loadConfig({ MCP_PORT: '0', CC_LINK_PORT: String(busy.port), CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'debug' });
  const before = timeouts();
  const waiting = await startBridge(config, createLogger('debug', (l) => logs.push(l)), { linkRetryMs: 60_000 });
  assert.equal(waiting.linkStatus().state, 'waiting');
  assert.equal(waiting.linkUrl, `ws://127.0.0.1:${busy.port}`);
  assert.ok(timeouts() > before);
  await waiting.close();
  assert.equal(timeouts(), before, process.getActiveResourcesInfo().join(','));

  const again = await startBridge(config, createLogger('debug', (l) => logs.push(l)), { linkRetryMs: 20 });
  try {
    assert.equal(again.links.unreachable, again.linkStatus().reason);
    await busy.close();
    await until(() => again.linkStatus().state === 'listening');
    assert.equal(again.links.unreachable, null);
    assert.equal(again.links.none('No computers are linked.'), 'No computers are linked.');
  } finally {
    await again.close();
  }
});

test('CC_LINK_RETRY_MS: 0 allowed (exit instead of waiting), negative or not a number refused', () => {
  assert.equal(loadConfig({}).linkRetryMs, 500);
  assert.equal(loadConfig({ CC_LINK_RETRY_MS: '0' }).linkRetryMs, 0);
  for (const bad of ['-1', 'soon', '3600001']) assert.throws(() => loadConfig({ CC_LINK_RETRY_MS: bad }), /CC_LINK_RETRY_MS/);
});
