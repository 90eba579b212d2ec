// Duplicate JSON keys in a request: the last one wins (JSON.parse), and every check reads the same
// parsed value as the code that acts on it (README, Security: duplicate keys). MCP over real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rpc, withBridge } from '../helpers.js';

const META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const twoNames = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list-computers","arguments":{},"name":"exec-lua",${META}}}`;
const modern = (name) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });

test('duplicate keys: the last "name" is the one checked against Mcp-Name and the one called; the last "method" is the one run', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    // the header names the first copy: refused, since the bridge checks (and would call) the last
    const first = await rpc(bridge.mcpUrl, twoNames, modern('list-computers'));
    assert.equal(first.json.error?.code, -32020, first.text);
    assert.match(first.json.error.message, /Mcp-Name header value "list-computers" does not match body params.name "exec-lua"/);
    // the header names the last copy: exec-lua is what runs (and refuses its missing arguments)
    const last = await rpc(bridge.mcpUrl, twoNames, modern('exec-lua'));
    assert.equal(last.json.result?.isError, true, last.text);
    assert.match(last.json.result.content[0].text, /^Invalid arguments for exec-lua: /);
    // 2025: two "method"s and two "id"s: the last of each
    const methods = await rpc(bridge.mcpUrl, '{"jsonrpc":"2.0","id":"a","method":"tools/call","id":"b","method":"ping"}');
    assert.deepEqual(methods.json, { jsonrpc: '2.0', id: 'b', result: {} });
  }));
