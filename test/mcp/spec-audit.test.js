// MCP requirements an audit of every revision the bridge serves (2025-03-26 .. 2026-07-28) found it did
// not meet, each checked over real HTTP (and stdio where it differs) against a real bridge. Each test
// names the revision, the spec page or schema type, and the requirement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { jsonUpstream } from '../upstream/fixture.js';
import { rpc, until, withBridge } from '../helpers.js';
import { run } from '../surfaces/stdio-child.js';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const modernHeaders = (method) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method });
const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());

test('bug: spec 2025-03-26..2026-07-28 schema Tool (inputSchema.type "object" required; outputSchema.type too up to 2025-11-25): an upstream tool listed with inputSchema {} or an outputSchema without type was passed on as it was, so the TypeScript SDK 1.32.2 refused the bridge\'s whole tools/list ("expected \\"object\\"" at inputSchema.type); it is now listed with "type": "object" added, in both eras and on stdio, and still called', { timeout: 60_000 }, async (t) => {
  const bare = { name: 'bare', description: 'no type', inputSchema: {}, outputSchema: { properties: { n: { type: 'number' } } } };
  const typed = { name: 'typed', inputSchema: { type: 'object', properties: { a: { type: 'string' } } }, outputSchema: { type: 'object' } };
  const url = await jsonUpstream(t, (msg) =>
    msg.method === 'initialize'
      ? { result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } }
      : msg.method === 'tools/list'
        ? { result: { tools: [bare, typed] } }
        : msg.method === 'tools/call'
          ? { result: { content: [{ type: 'text', text: 'n=1' }], structuredContent: { n: 1 } } }
          : { error: { code: -32601, message: 'no such method' } },
  );
  const config = writeConfig({ servers: [{ id: 'u', url }] });
  const check = (tools, era) => {
    for (const tool of tools) assert.equal(tool.inputSchema.type, 'object', `${era}: ${tool.name} ${JSON.stringify(tool.inputSchema)}`);
    for (const tool of tools) if (tool.outputSchema) assert.equal(tool.outputSchema.type, 'object', `${era}: ${tool.name} ${JSON.stringify(tool.outputSchema)}`);
    const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
    // the rest of the definition as the upstream sent it
    assert.deepEqual(byName.u__bare, { name: 'u__bare', description: 'no type', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } } } }, era);
    assert.deepEqual(byName.u__typed, { ...typed, name: 'u__typed' }, era);
  };
  await withBridge({ CC_CONFIG: config }, async (bridge) => {
    await until(async () => (await health(bridge)).servers[0].state === 'up');
    check((await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' })).json.result.tools, '2025-11-25');
    check((await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } }, modernHeaders('tools/list'))).json.result.tools, MODERN);
    const call = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'u__bare', arguments: {} } });
    assert.deepEqual(call.json.result, { content: [{ type: 'text', text: 'n=1' }], structuredContent: { n: 1 } });
  });
  await run({ CC_CONFIG: config }, async (child) => {
    child.send({ jsonrpc: '2.0', id: 'i', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    await child.answer('i');
    // the upstream comes up after the start; list until its tools are there
    const tools = await until(async () => {
      const id = `l${Math.random()}`;
      child.send({ jsonrpc: '2.0', id, method: 'tools/list' });
      const listed = (await child.answer(id)).result.tools;
      return listed.some((x) => x.name === 'u__bare') && listed;
    }, 20);
    check(tools, 'stdio');
  });
});
