// Two bridges joined: one lists the other as an HTTP upstream. Its computers' tools appear as
// <id>__<tool>, calls go through, a cancel reaches the far computer, and the far bridge going
// away takes its tools out until it is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { callTool, linkComputer, rpc, session, startTestBridge, until } from '../helpers.js';

const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());

test('a second bridge as an HTTP upstream: listing, calls, cancel, down and back', async (t) => {
  const far = await startTestBridge({ MCP_AUTH_TOKEN: 'far-secret-token-0123456789' });
  t.after(() => far.close());
  const seen = [];
  await linkComputer(far, {
    computerId: 21,
    computerLabel: 'nether-turtle',
    onRequest: (frame) => {
      seen.push(frame);
      if (frame.method === 'ping') return { ok: true, result: 'pong from 21 (Label: nether-turtle)' };
      if (frame.params.code === 'sleep(60)') return null;
      return { ok: true, result: { output: 'hi\n', returns: [], truncated: false } };
    },
  });
  const config = writeConfig({ servers: [{ id: 'nether', url: far.mcpUrl, headers: { authorization: 'Bearer far-secret-token-0123456789' } }] });
  const near = await startTestBridge({ CC_CONFIG: config });
  t.after(() => near.close());

  await until(async () => (await health(near)).servers[0].state === 'up');
  const { json } = await rpc(near.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const names = json.result.tools.map((x) => x.name);
  assert.ok(names.includes('nether__probe-computers') && names.includes('nether__exec-lua'), names.join());
  const farExec = json.result.tools.find((x) => x.name === 'nether__exec-lua');
  assert.equal(farExec.title, 'Run Lua on a computer');
  assert.ok(farExec.outputSchema);

  assert.equal((await callTool(near, 'nether__probe-computers')).content[0].text, 'pong from 21 (Label: nether-turtle)');
  const exec = await callTool(near, 'nether__exec-lua', { computerId: 21, code: 'print("hi")' });
  assert.equal(exec.content[0].text, 'hi');
  assert.equal(exec.structuredContent.computerId, 21);

  // a cancel at the near bridge reaches the far computer as a cancel frame
  const s = await session(near.mcpUrl);
  const pending = rpc(near.mcpUrl, { jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'nether__exec-lua', arguments: { computerId: 21, code: 'sleep(60)' } } }, s);
  await until(() => seen.some((f) => f.params?.code === 'sleep(60)'));
  await rpc(near.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1' } }, s);
  const cancelled = (await pending).json.result;
  assert.equal(cancelled.isError, true);
  assert.match(cancelled.content[0].text, /cancelled/);
  await until(() => far.dispatcher.activeCalls === 0);

  // the far bridge goes away: the near one notices on its next request and takes the tools out
  const farPort = new URL(far.mcpUrl).port;
  await far.close();
  const down = await callTool(near, 'nether__probe-computers');
  assert.equal(down.isError, true);
  assert.match(down.content[0].text, /upstream server "nether" went down during the call: .*cannot reach http:\/\/127\.0\.0\.1:\d+\/mcp: ECONNREFUSED/);
  const status = await until(async () => (await health(near)).servers.find((s) => s.state === 'down'));
  assert.match(status.reason, /ECONNREFUSED/);
  const listed = (await rpc(near.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).json.result.tools;
  assert.ok(!listed.some((x) => x.name.startsWith('nether__')));

  // back on the same port: the supervisor reconnects and the tools return
  const again = await startTestBridge({ MCP_PORT: farPort, MCP_AUTH_TOKEN: 'far-secret-token-0123456789' });
  t.after(() => again.close());
  await until(async () => (await health(near)).servers[0].state === 'up');
  assert.equal((await callTool(near, 'nether__probe-computers')).content[0].text, 'No computers connected.');
});

test('a wrong token: the upstream is down with HTTP 401 in the reason', async (t) => {
  const far = await startTestBridge({ MCP_AUTH_TOKEN: 'far-secret-token-0123456789' });
  t.after(() => far.close());
  const near = await startTestBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'nether', url: far.mcpUrl }] }) });
  t.after(() => near.close());
  const status = await until(async () => (await health(near)).servers.find((s) => s.state === 'down'));
  assert.match(status.reason, /initialize (did not get through: HTTP 401|failed: Unauthorized)/);
});
