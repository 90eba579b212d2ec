// Config-defined Lua tools end to end: the real bridge with a CC_CONFIG file, mcp-computer.lua in an
// emulated computer. Arguments reach the chunk as data (`local args = ...`), byte for byte.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { useComputer } from './computer.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };

// returns the string, its length in bytes and every byte in hex, so the test sees what Lua sees
const ECHO = `local args = ...
local s = args.s
local hex = {}
for i = 1, #s do hex[i] = string.format("%02x", s:byte(i)) end
return s, #s, table.concat(hex), args.n, args.list[2], select("#", ...)`;

function configFile(content) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-config-lua-'));
  const file = path.join(dir, 'bridge.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

let rpcId = 1;
async function callTool(bridge, name, args = {}) {
  const res = await fetch(bridge.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  const json = await res.json();
  assert.equal(json.error, undefined, JSON.stringify(json.error));
  return json.result;
}

describeLua('config-defined Lua tools on the emulated computer', () => {
  test('hostile argument text arrives unchanged as data, even with CC_EXEC_LUA=off', T, async (t) => {
    const file = configFile({
      tools: [
        {
          name: 'echo-args',
          description: 'echoes its arguments',
          inputSchema: { type: 'object', properties: { s: { type: 'string' }, n: { type: 'number' }, list: { type: 'array' } }, required: ['s'] },
          target: 'argument',
          lua: ECHO,
        },
        { name: 'labelled', target: { label: 'turtle-1' }, lua: 'local args = ...\nreturn args.x * 2, os.getComputerLabel()' },
      ],
    });
    const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error', CC_EXEC_LUA: 'off', CC_CONFIG: file }));
    t.after(() => bridge.close(100));
    const c = useComputer(t, { url: bridge.linkUrl, timeScale: 0.01, id: 7, label: 'turtle-1' });
    await c.waitForOutput('waiting for requests');

    // every byte of this must reach the chunk as the same UTF-8 bytes
    const hostile = 'a]]b]=]c]==] "double" \'single\' \\ back\nnew\r\nline\ttab \0nul\0 é ü ß 中文 🐢 end';
    const result = await callTool(bridge, 'echo-args', { computer: 'turtle-1', s: hostile, n: 1.5, list: ['x', 'y]]'] });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    const [s, len, hex, n, second, count] = result.structuredContent.returns.map((d) => d.value);
    assert.equal(s, hostile);
    assert.equal(len, Buffer.byteLength(hostile, 'utf8'));
    assert.equal(hex, Buffer.from(hostile, 'utf8').toString('hex'));
    assert.equal(n, 1.5);
    assert.equal(second, 'y]]');
    assert.equal(count, 1, 'the chunk gets exactly one value: the arguments table');

    const labelled = await callTool(bridge, 'labelled', { x: 21 });
    assert.deepEqual(labelled.structuredContent.returns.map((d) => d.value), [42, 'turtle-1']);
    // exec-lua itself stays off
    const exec = await callTool(bridge, 'exec-lua', { computerId: 7, code: 'return 1' });
    assert.equal(exec.isError, true);
  });

  test('a computer that refuses exec-lua refuses config tools too', T, async (t) => {
    const file = configFile({ tools: [{ name: 'one', target: { computerId: 8 }, lua: 'return 1' }] });
    const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error', CC_CONFIG: file }));
    t.after(() => bridge.close(100));
    const c = useComputer(t, { url: bridge.linkUrl, timeScale: 0.01, id: 8, args: ['--no-exec'] });
    await c.waitForOutput('waiting for requests');
    const result = await callTool(bridge, 'one');
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /exec-lua is disabled on this computer/);
  });
});
