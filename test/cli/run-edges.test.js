// cc-mcp's runCli at edges its process tests did not reach (found by mutation testing), in this
// process against a real bridge (or a plain HTTP server that is not one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { linkComputer, rpc, until, withBridge } from '../helpers.js';
import { runCli } from '../../dist/cli/run.js';

async function cli(args, { env = {}, isTTY } = {}) {
  const out = { stdout: '', stderr: '' };
  const io = { out: (t) => (out.stdout += t), err: (t) => (out.stderr += t), readFile: async () => '', readStdin: async () => '', env, signal: new AbortController().signal };
  if (isTTY !== undefined) io.isTTY = isTTY;
  return { code: await runCli(args, io, '0.0.0'), ...out };
}

test('exec output: one trailing newline is not doubled; to a terminal control characters are escaped, piped they are kept', () =>
  withBridge({}, async (bridge) => {
    const outputs = { a: 'two lines\n\n', b: 'x\u001b[2Jy\n' };
    const c = await linkComputer(bridge, { computerId: 4, onRequest: (frame) => ({ ok: true, result: { output: outputs[frame.params.code], returns: [], truncated: false } }) });
    const at = ['--url', bridge.mcpUrl];
    assert.deepEqual(await cli([...at, 'exec', '4', '-e', 'a']), { code: 0, stdout: 'two lines\n', stderr: '' });
    assert.deepEqual(await cli([...at, 'exec', '4', '-e', 'b']), { code: 0, stdout: 'x\u001b[2Jy\n', stderr: '' });
    assert.deepEqual(await cli([...at, 'exec', '4', '-e', 'b'], { isTTY: true }), { code: 0, stdout: 'x\\u001b[2Jy\n', stderr: '' });
    await c.close();
  }));

test('a busy bridge (-32003) exits 1, not 2: only -32602 (the request as given) is a usage error', () =>
  withBridge({ MCP_MAX_CONCURRENT_CALLS: '1' }, async (bridge) => {
    const silent = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const held = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'held', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code: 'sleep(99)', timeoutMs: 60_000 } } });
    await until(() => bridge.metrics.callsInFlight === 1);
    const busy = await cli(['--url', bridge.mcpUrl, 'probe']);
    assert.equal(busy.code, 1, busy.stderr);
    assert.match(busy.stderr, /^cc-mcp: the bridge refused: .*busy/);
    await silent.close();
    await held;
  }));

test('health: an HTTP 200 whose body is not ok: true is not a bridge (exit 3)', async (t) => {
  const srv = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":false}'));
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(() => new Promise((r) => srv.close(r)));
  const r = await cli(['--url', `http://127.0.0.1:${srv.address().port}/mcp`, 'health']);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /answered HTTP 200; is this a cc-mcp-bridge\?/);
});

test('a tool whose result renders to nothing prints nothing, not an empty line (an empty text, or no content at all)', async (t) => {
  const { jsonUpstream } = await import('../upstream/fixture.js');
  const { writeConfig } = await import('../config/write.js');
  const { startTestBridge } = await import('../helpers.js');
  const input = { type: 'object' };
  const results = { blank: { content: [{ type: 'text', text: '' }] }, none: { content: [] }, some: { content: [{ type: 'text', text: 'x' }] } };
  const url = await jsonUpstream(t, (msg) =>
    msg.method === 'initialize'
      ? { result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'e', version: '1' } } }
      : msg.method === 'tools/list'
        ? { result: { tools: Object.keys(results).map((name) => ({ name, inputSchema: input })) } }
        : msg.method === 'tools/call'
          ? { result: results[msg.params.name] }
          : { error: { code: -32601, message: 'no such method' } },
  );
  const bridge = await startTestBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'e', url }] }) });
  t.after(() => bridge.close());
  await until(async () => (await (await fetch(new URL('/health', bridge.mcpUrl))).json()).servers[0].state === 'up');
  const at = ['--url', bridge.mcpUrl];
  assert.deepEqual(await cli([...at, 'call', 'e__blank']), { code: 0, stdout: '', stderr: '' });
  assert.deepEqual(await cli([...at, 'call', 'e__none']), { code: 0, stdout: '', stderr: '' });
  assert.deepEqual(await cli([...at, 'call', 'e__blank'], { isTTY: true }), { code: 0, stdout: '', stderr: '' });
  // and one that renders to something gets its newline (the same path, so the test can fail)
  assert.deepEqual(await cli([...at, 'call', 'e__some']), { code: 0, stdout: 'x\n', stderr: '' });
});
