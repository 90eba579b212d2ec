// 2026-07-28 request headers checked against the body, at edges that no other test reached (found by
// mutation testing), over real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rpc, withBridge } from '../helpers.js';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** POSTs a 2026-07-28 request whose body carries `params` (with _meta) under the given headers. */
function post(bridge, id, method, params, headers) {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } };
  return rpc(bridge.mcpUrl, body, { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...headers });
}

test('Mcp-Name is checked exactly: prompts/get needs it too, and a text that only equals the body value loosely ("5" for 5) is a mismatch', () =>
  withBridge({}, async (bridge) => {
    const prompts = await post(bridge, 1, 'prompts/get', { name: 'greet' }, {});
    assert.equal(prompts.status, 400);
    assert.equal(prompts.json.id, 1);
    assert.equal(prompts.json.error.code, -32020);
    assert.match(prompts.json.error.message, /^Header mismatch: .*Mcp-Name header is required for prompts\/get/);
    const loose = await post(bridge, 2, 'tools/call', { name: 5 }, { 'mcp-name': '5' });
    assert.equal(loose.status, 400);
    assert.equal(loose.json.id, 2);
    assert.equal(loose.json.error.code, -32020);
    assert.match(loose.json.error.message, /^Header mismatch: Mcp-Name header value "5" does not match body params\.name 5$/);
  }));

test('a tab inside Mcp-Name is a valid header character: the value is compared with the body, not refused as invalid', () =>
  withBridge({}, async (bridge) => {
    const res = await post(bridge, 3, 'tools/call', { name: 'no\tsuch', arguments: {} }, { 'mcp-name': 'no\tsuch' });
    assert.equal(res.json.id, 3);
    assert.equal(res.json.error.code, -32602, JSON.stringify(res.json));
    assert.match(res.json.error.message, /^Unknown tool: /);
  }));

// (Its commit, 21aee07, said echoing data.requested whole passed every test; that was wrong: the
// mutation run had left out test/fuzz/regressions.test.js, whose 'client strings echoed whole in
// errors and log lines' fails with that mutant too. This test keeps the exact 60-character bound.)
test('an unsupported MCP-Protocol-Version is echoed in -32022 data.requested only so far (60 characters), however long the header', () =>
  withBridge({}, async (bridge) => {
    const version = `2099-${'9'.repeat(2000)}`;
    const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: META } }, { 'mcp-protocol-version': version, 'mcp-method': 'tools/list' });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32022);
    assert.equal(res.json.error.data.requested, version.slice(0, 60));
    assert.ok(res.text.length < 1000, `the answer is ${res.text.length} bytes`);
  }));

test('ping in 2026-07-28 is 404 Method not found saying the revision removed it; initialize says the revision has no handshake', () =>
  withBridge({}, async (bridge) => {
    for (const [method, hint] of [['ping', / \(ping was removed in 2026-07-28\)$/], ['initialize', / \(initialize belongs to the 2025 revisions; 2026-07-28 has no handshake\)$/]]) {
      const res = await post(bridge, 5, method, {}, {});
      assert.equal(res.status, 404, method);
      assert.equal(res.json.error.code, -32601, method);
      assert.match(res.json.error.message, new RegExp(`^Method not found: ${method}`), method);
      assert.match(res.json.error.message, hint, method);
    }
  }));
