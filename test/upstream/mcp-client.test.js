// McpClient over an in-memory transport: the handshake, revisions, paging, malformed answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../dist/log.js';
import { KNOWN_PROTOCOL_VERSIONS, MAX_TOOL_PAGES, McpClient, OFFERED_PROTOCOL_VERSION } from '../../dist/upstream/mcp-client.js';
import { memoryTransport } from '../jsonrpc/memory-transport.js';

/** A client whose server answers each request with `answer(message)` (a result, or {error}). */
function withServer(answer) {
  const transport = memoryTransport();
  const lines = [];
  const send = transport.send;
  transport.versions = [];
  transport.setProtocolVersion = (v) => transport.versions.push(v);
  transport.send = async (message, signal) => {
    await send(message, signal);
    if (message.id === undefined || message.method === undefined) return;
    const reply = answer(message);
    if (reply === undefined) return;
    queueMicrotask(() => transport.deliver(reply.error ? { jsonrpc: '2.0', id: message.id, error: reply.error } : { jsonrpc: '2.0', id: message.id, result: reply }));
  };
  const client = new McpClient(transport, { timeoutMs: 5000, log: createLogger('debug', (l) => lines.push(l)), name: 'upstream t' });
  return { client, transport, lines };
}

const init = (extra = {}) => ({ protocolVersion: OFFERED_PROTOCOL_VERSION, capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' }, ...extra });

test('connect: offers 2025-11-25 with clientInfo, keeps what the server said, sends initialized', async () => {
  const { client, transport } = withServer((m) => (m.method === 'initialize' ? init({ protocolVersion: '2025-06-18', instructions: 'be nice' }) : {}));
  await client.connect();
  const [initialize, initialized] = transport.sent.map((s) => s.message);
  assert.equal(initialize.params.protocolVersion, '2025-11-25');
  assert.deepEqual(initialize.params.capabilities, {});
  assert.deepEqual(initialize.params.clientInfo, { name: 'cc-mcp-bridge', version: '0' });
  assert.deepEqual(initialized, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(client.protocolVersion, '2025-06-18');
  assert.deepEqual(client.serverInfo, { name: 's', version: '1' });
  assert.deepEqual(client.capabilities, { tools: {} });
  assert.equal(client.instructions, 'be nice');
  assert.deepEqual(transport.versions, ['2025-06-18']);
  assert.ok(KNOWN_PROTOCOL_VERSIONS.includes('2024-11-05'));
});

test('connect: an answer without a revision, or with an unknown one, fails and closes', async () => {
  for (const [result, reason] of [
    [{ capabilities: {} }, /initialize answered without a protocolVersion/],
    [init({ protocolVersion: '2030-01-01' }), /the server speaks MCP 2030-01-01; this bridge knows/],
    ['nope', /without a protocolVersion/],
  ]) {
    const { client, transport } = withServer(() => result);
    await assert.rejects(client.connect(), reason);
    assert.equal(transport.closedCount, 1);
  }
  const minimal = withServer((m) => (m.method === 'initialize' ? { protocolVersion: '2025-03-26', serverInfo: 'x', capabilities: null } : {}));
  await minimal.client.connect();
  assert.equal(minimal.client.serverInfo, null);
  assert.deepEqual(minimal.client.capabilities, {});
  assert.equal(minimal.client.instructions, null);
});

test('listTools follows nextCursor, skips malformed entries, and stops after MAX_TOOL_PAGES', async () => {
  const pages = { undefined: { tools: [{ name: 'a', inputSchema: {} }, { name: '' }, 'x'], nextCursor: 'p2' }, p2: { tools: [{ name: 'b', inputSchema: { type: 'object' }, extra: 1 }], nextCursor: '' } };
  const { client, lines } = withServer((m) => pages[m.params?.cursor]);
  await client.rpc.start();
  const tools = await client.listTools();
  assert.deepEqual(tools, [{ name: 'a', inputSchema: {} }, { name: 'b', inputSchema: { type: 'object' }, extra: 1 }]);
  assert.equal(lines.filter((l) => /upstream t listed a tool without a name or inputSchema; skipped/.test(l)).length, 2);

  const endless = withServer((m) => ({ tools: [{ name: `t${m.params.cursor ?? 0}`, inputSchema: {} }], nextCursor: String(Number(m.params.cursor ?? 0) + 1) }));
  await endless.client.rpc.start();
  assert.equal((await endless.client.listTools()).length, MAX_TOOL_PAGES);
  assert.ok(endless.lines.some((l) => /still had more tools after 100 pages/.test(l)));

  const bad = withServer(() => ({ nope: true }));
  await bad.client.rpc.start();
  await assert.rejects(bad.client.listTools(), /tools\/list answered without a tools array/);
});

test('callTool returns the result object untouched; a non-object result is an error', async () => {
  const result = { content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 }, isError: true, _meta: { m: 1 } };
  const { client, transport } = withServer((m) => (m.params.name === 'odd' ? 42 : result));
  await client.rpc.start();
  assert.deepEqual(await client.callTool('t', { a: 1 }), result);
  assert.deepEqual(transport.sent[0].message.params, { name: 't', arguments: { a: 1 } });
  await assert.rejects(client.callTool('odd', {}), /tools\/call of odd answered with something that is not a result object/);
  let changed = 0;
  const off = client.onToolsChanged(() => changed++);
  transport.deliver({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  off();
  transport.deliver({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  assert.equal(changed, 1);
});

test('callTool: a result whose content, blocks, isError or structuredContent are malformed is ERR_RPC_MALFORMED naming the field', async () => {
  const bad = {
    none: [{}, 'content must be an array, got nothing'],
    string: [{ content: 'x' }, 'content must be an array, got a string'],
    nullBlock: [{ content: [null] }, 'content[0] must be an object, got null'],
    arrayBlock: [{ content: [{ type: 'text', text: 'a' }, []] }, 'content[1] must be an object, got an array'],
    untyped: [{ content: [{ text: 'a' }] }, 'content[0] has no "type"'],
    isError: [{ content: [], isError: 'yes' }, 'isError must be true or false, got a string'],
    structured: [{ content: [], structuredContent: [1] }, 'structuredContent must be an object, got an array'],
  };
  const { client } = withServer((m) => bad[m.params.name][0]);
  await client.rpc.start();
  for (const [name, [, why]] of Object.entries(bad)) {
    await assert.rejects(client.callTool(name, {}), (e) => e.code === 'ERR_RPC_MALFORMED' && e.message === `tools/call of ${name}: the result's ${why}`);
  }
});

test('bug: a malformed upstream tool was logged with its whole name and its whole inputSchema.type; now each is quoted and cut at 60 characters', async () => {
  const name = 'n'.repeat(10_000);
  const { client, lines } = withServer((m) =>
    m.method === 'initialize'
      ? init()
      : m.method === 'tools/list'
        ? { tools: [{ name, title: 5, inputSchema: { type: 'object' } }, { name: 'typed', inputSchema: { type: 't'.repeat(5000) } }, { name: 'obj', inputSchema: { type: { deep: 'x'.repeat(5000) } } }] }
        : {},
  );
  await client.connect();
  assert.deepEqual(await client.listTools(), []);
  const text = lines.join('\n');
  assert.match(text, /warn upstream t listed tool "n{59}\.\.\. \(10002 characters\) with a malformed definition \("title" is a number, not a string\); skipped/);
  assert.match(text, /listed tool "typed" with a malformed definition \(inputSchema\.type must be "object", got "t{59}\.\.\. \(5002 characters\)\); skipped/);
  assert.match(text, /listed tool "obj" with a malformed definition \(inputSchema\.type must be "object", got an object\); skipped/);
  assert.ok(lines.every((l) => l.length < 400), 'no line holds a whole value');
  await client.close();
});
