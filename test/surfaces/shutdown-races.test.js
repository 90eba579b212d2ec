// SIGTERM to a real HTTP bridge process while calls are in flight on every path: MCP exec-lua to a
// computer that never answers, a probe over every computer, an upstream call, a REST call, and an
// open GET /mcp stream. Every caller gets a clear answer (never a cut connection), the links close
// with 1001, the upstream process ends, and the bridge exits 0. Ordered on what the computer and the
// bridge have seen, never on time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeComputer, processAlive, rpc, until } from '../helpers.js';
import { initialize, openStream, startProcess, tempDir, VERSION } from './bridge-process.js';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from '../upstream/fixture.js';

const settled = (promise) => promise.then((value) => ({ value }), (err) => ({ failed: String(err.cause ?? err) }));

test('SIGTERM with calls in flight on every path: each caller answered with why, an open GET stream does not hold the exit, links closed 1001, the upstream process gone, exit 0', { timeout: 90_000 }, async (t) => {
  const space = tempDir(t);
  const file = writeConfig({ servers: [fixtureServer('fx')] });
  const bridge = await startProcess(space, { CC_CONFIG: file, CC_EXEC_TIMEOUT_MS: '60000', CC_PROBE_TIMEOUT_MS: '60000' });
  await until(() => /upstream fx is up/.test(bridge.out.stderr));
  const pid = Number(/fixture started pid=(\d+)/.exec(bridge.out.stderr)[1]);
  const linkUrl = /^Computer link: (ws:\/\/\S+)/m.exec(bridge.out.stdout)?.[1];
  assert.ok(linkUrl, bridge.out.stdout);
  const computer = new FakeComputer(linkUrl, { computerId: 3, onRequest: () => null });
  assert.equal((await computer.link()).type, 'hello-ok');
  const sessionId = await initialize(bridge.mcpUrl);
  const h = { 'mcp-protocol-version': VERSION, 'mcp-session-id': sessionId };
  const stream = await openStream(bridge.mcpUrl, sessionId);
  assert.equal(stream.status, 200);
  const call = (id, name, args) => settled(rpc(bridge.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, h));
  const exec = call(1, 'exec-lua', { computerId: 3, code: 'sleep(60)' });
  const probe = call(2, 'probe-computers', {});
  const upstream = call(3, 'fx__slow', {});
  const rest = settled(fetch(new URL('/tools/exec-lua', bridge.mcpUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ computerId: 3, code: 'sleep(60)' }) }).then(async (r) => ({ status: r.status, json: await r.json() })));
  const inFlight = async () => Number(/^cc_tool_calls_in_flight (\d+)$/m.exec(await (await fetch(new URL('/metrics', bridge.mcpUrl))).text())[1]);
  await until(async () => computer.received.filter((f) => f.type === 'request').length === 3 && (await inFlight()) === 4);
  bridge.kill('SIGTERM');
  const results = { exec: await exec, probe: await probe, upstream: await upstream, rest: await rest };
  for (const [what, r] of Object.entries(results)) assert.equal(r.failed, undefined, `${what}: no answer (${r.failed})`);
  assert.match(results.exec.value.json.result.content[0].text, /computer 3 .*dropped before it answered \(bridge shutting down\)/);
  assert.deepEqual(results.probe.value.json.result.structuredContent.computers.map((c) => c.status), ['disconnected']);
  assert.match(results.upstream.value.json.result.content[0].text, /upstream server "fx" went down during the call: .*the bridge is shutting down/);
  assert.equal(results.rest.value.status, 503);
  assert.match(results.rest.value.json.error.message, /bridge shutting down/);
  assert.equal((await computer.closed).code, 1001);
  const exit = await bridge.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(processAlive(pid), false, `upstream process ${pid} still runs after the bridge exited`);
});
