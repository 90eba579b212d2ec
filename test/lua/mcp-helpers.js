// The real bridge (dist/) with emulated computers running dist/mcp-computer.lua, called over real
// MCP HTTP: shared by the safe-tool tests.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { PROGRAM, useComputer } from './computer.js';

export async function bridgeFor(t, env = {}) {
  const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error', ...env }));
  t.after(() => bridge.close(100));
  return bridge;
}

let rpcId = 1;
/** tools/call over MCP HTTP; returns the tool result (asserting it is not a JSON-RPC error). */
export async function callTool(bridge, name, args = {}) {
  const res = await fetch(bridge.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  assert.equal(res.status, 200);
  const json = await res.json();
  assert.equal(json.error, undefined, JSON.stringify(json.error));
  return json.result;
}

export const textOf = (result) => result.content.map((c) => c.text).join('\n');

/** Polls `fn` every 50 ms, at most 300 times, until it returns `{ done: true, value }`; resolves with value. */
export async function untilDone(fn, what) {
  let last;
  for (let i = 0; i < 300; i++) {
    last = await fn();
    if (last?.done) return last.value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}; last: ${JSON.stringify(last?.value)}`);
}

/** A successful result (fails the test with the result's text otherwise). */
export async function callOk(bridge, name, args) {
  const result = await callTool(bridge, name, args);
  assert.equal(result.isError, undefined, `${name} failed: ${textOf(result)}`);
  return result;
}

/** An error result; returns its text. */
export async function callError(bridge, name, args) {
  const result = await callTool(bridge, name, args);
  assert.equal(result.isError, true, `${name} should have failed: ${textOf(result)}`);
  return textOf(result);
}

/** A computer linked to the bridge (waits for its status line). */
export async function linkedComputer(t, bridge, opts = {}) {
  const c = useComputer(t, { url: bridge.linkUrl, timeScale: 0.01, ...opts });
  await c.waitForOutput('waiting for requests', 30000);
  return c;
}

/** mcp-computer.lua with the method table lines for `methods` removed: a program older than they are. */
export function programWithout(...methods) {
  let source = readFileSync(PROGRAM, 'utf8');
  for (const method of methods) {
    const line = new RegExp(`^\\s*\\["${method}"\\] = .*\\n`, 'm');
    assert.match(source, line, `the method table has a line for ${method}`);
    source = source.replace(line, '');
  }
  return source;
}
