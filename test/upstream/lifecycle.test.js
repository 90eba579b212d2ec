// Upstream lifecycle details: the restart delay doubling from its first value, and a client that
// goes away (closes its HTTP request) cancelling the upstream call it started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../dist/log.js';
import { MAX_BACKOFF_MS, UpstreamServer } from '../../dist/upstream/server.js';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from './fixture.js';
import { until, withBridge } from '../helpers.js';

test('a server that keeps failing is retried after delays that double from the first (1, 2, 4 ... capped at 30 s)', async () => {
  const lines = [];
  const server = new UpstreamServer(
    { id: 'gone', command: '/nonexistent/server', args: [], env: {} },
    { log: createLogger('debug', (l) => lines.push(l)), timeoutMs: 1000, maxMessageBytes: 4096, version: '0', onChange: () => {}, backoffMs: 2 },
  );
  server.start();
  const delays = () => lines.map((l) => / upstream gone is down: .*; restarting in ([\d.]+) s$/.exec(l)).filter(Boolean).map((m) => Number(m[1]) * 1000);
  await until(() => delays().length >= 6);
  await server.stop();
  assert.deepEqual(delays().slice(0, 6), [2, 4, 8, 16, 32, 64]);
  assert.equal(server.status().state, 'stopped');
  assert.ok(server.status().restarts >= 6);
  assert.equal(MAX_BACKOFF_MS, 30_000);
});

test('a client that closes its HTTP request cancels the upstream call it started', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    await until(() => bridge.hub.serverStatus()[0]?.state === 'up');
    const controller = new AbortController();
    const pending = fetch(bridge.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'leaving', method: 'tools/call', params: { name: 'fx__slow' } }),
      signal: controller.signal,
    }).catch((err) => err);
    await until(() => bridge.dispatcher.activeCalls === 1);
    controller.abort();
    assert.equal((await pending).name, 'AbortError');
    await until(() => bridge.logs.some((l) => /upstream fx stderr: cancelled \d+ \(cancelled by the caller\)/.test(l)));
    await until(() => bridge.dispatcher.activeCalls === 0);
  }));
