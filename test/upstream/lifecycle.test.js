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

test('a server that never came up: its first delay is capped at 30 s, no tool change is announced, only its own names resolve to "down" ("starting" before its first try ends), and stop() ends the wait at once', async (t) => {
  const lines = [];
  let changes = 0;
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const server = new UpstreamServer(
    { id: 'gone', command: '/nonexistent/server', args: [], env: {} },
    { log: createLogger('debug', (l) => lines.push(l)), timeoutMs: 1000, maxMessageBytes: 4096, version: '0', onChange: () => changes++, backoffMs: 60_000 },
  );
  t.after(() => server.stop());
  // before its first start has ended, a call says it is starting, not down
  assert.equal((await server.source.resolve('gone__tool').call({}, {})).content[0].text, 'upstream server "gone" is starting; try again shortly');
  server.start();
  await until(() => lines.some((l) => /upstream gone is down: /.test(l)));
  assert.ok(lines.some((l) => / upstream gone is down: .*; restarting in 30 s$/.test(l)), lines.join('\n'));
  assert.equal(changes, 0, 'it never offered a tool: nothing changed for the clients');
  assert.equal(server.source.resolve('other__tool'), undefined, "another server's name");
  assert.equal(server.source.resolve('gone'), undefined);
  assert.match((await server.source.resolve('gone__tool').call({}, {})).content[0].text, /upstream server "gone" is down: cannot start/);
  await server.stop(0, 'removed from CC_CONFIG');
  assert.deepEqual(server.status(), { id: 'gone', transport: 'stdio', state: 'stopped', tools: 0, restarts: 1, reason: 'removed from CC_CONFIG' });
  assert.equal(timers(), before, 'the 30 s wait is over: nothing keeps the process alive');
  assert.equal(changes, 0);
});

// Date is mocked here, so until() has no hang guard of its own: the test's timeout is that guard
test('a server up for 30 s or more starts its restart delays over; one that fails sooner keeps doubling them', { timeout: 60_000 }, async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-24T12:00:00Z') });
  const lines = [];
  const server = new UpstreamServer(fixtureServer('fx'), {
    log: createLogger('debug', (l) => lines.push(l)), timeoutMs: 10_000, maxMessageBytes: 1 << 20, version: '0', onChange: () => {}, backoffMs: 2,
  });
  t.after(() => server.stop());
  const delays = () => lines.map((l) => / upstream fx is down: .*; restarting in ([\d.]+) s$/.exec(l)).filter(Boolean).map((m) => Number(m[1]) * 1000);
  const crash = async (n) => {
    await until(() => server.status().state === 'up' && server.status().restarts === n - 1);
    void server.offered.find((tool) => tool.name === 'fx__crash').call({}, { signal: new AbortController().signal });
    await until(() => delays().length === n);
  };
  server.start();
  await crash(1); // up a moment: 2 ms, then
  await crash(2); // 4 ms
  await until(() => server.status().state === 'up' && server.status().restarts === 2);
  t.mock.timers.tick(30_000); // up 30 s by the clock it reads
  await crash(3);
  assert.deepEqual(delays(), [2, 4, 2]);
});

test('an upstream tool on the bridge: its title (else annotations.title, else its name), its description (else empty), its annotations and outputSchema kept', async (t) => {
  const { jsonUpstream } = await import('./fixture.js');
  const input = { type: 'object' };
  const tools = [
    { name: 'plain', inputSchema: input },
    { name: 'titled', title: 'Titled', description: 'd', annotations: { title: 'From annotations', readOnlyHint: true }, inputSchema: input, outputSchema: { type: 'object', properties: {} } },
    { name: 'annotated', annotations: { title: 'From annotations' }, inputSchema: input },
  ];
  const url = await jsonUpstream(t, (msg) =>
    msg.method === 'initialize'
      ? { result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'h', version: '1' } } }
      : msg.method === 'tools/list'
        ? { result: { tools } }
        : { error: { code: -32601, message: 'no such method' } },
  );
  const server = new UpstreamServer({ id: 'h', url }, { log: createLogger('silent'), timeoutMs: 5000, maxMessageBytes: 1 << 20, version: '0', onChange: () => {} });
  t.after(() => server.stop());
  server.start();
  await until(() => server.status().state === 'up');
  const shown = Object.fromEntries(server.offered.map(({ name, title, description, annotations, outputSchema }) => [name, { title, description, annotations, outputSchema }]));
  assert.deepEqual(shown, {
    h__plain: { title: 'plain', description: '', annotations: undefined, outputSchema: undefined },
    h__titled: { title: 'Titled', description: 'd', annotations: { title: 'From annotations', readOnlyHint: true }, outputSchema: { type: 'object', properties: {} } },
    h__annotated: { title: 'From annotations', description: '', annotations: { title: 'From annotations' }, outputSchema: undefined },
  });
  assert.equal('outputSchema' in server.offered[0], false);
  assert.equal('annotations' in server.offered[0], false);
});
