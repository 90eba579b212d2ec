// Tool results from an upstream server speaking a newer revision, as a 2025-03-26 client gets them:
// resource_link blocks (2025-06-18) become text naming the link; a result with only structuredContent
// gets it as JSON text too. Newer clients get the blocks as sent. A real HTTP upstream, a real bridge
// over HTTP and over --stdio.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { writeConfig } from '../config/write.js';
import { jsonUpstream } from '../upstream/fixture.js';
import { rpc, until, withBridge } from '../helpers.js';
import { VARIABLES } from '../../dist/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LINK = { type: 'resource_link', uri: 'file:///world/base.lua', name: 'base.lua', title: 'Base program', description: 'What the turtle runs', mimeType: 'text/x-lua', size: 120, annotations: { audience: ['assistant'], priority: 0.5 } };
const BARE_LINK = { type: 'resource_link', uri: 'cc://computer/7/startup', name: 'startup' };
const LINKS = {
  content: [{ type: 'text', text: 'two links' }, LINK, { type: 'image', data: 'AA==', mimeType: 'image/png' }, BARE_LINK],
  structuredContent: { n: 2 },
};
const ONLY_STRUCTURED = { content: [], structuredContent: { fuel: 80, ok: true } };

/** An HTTP MCP server offering "links" and "structured", each answering with the results above. */
const upstream = (t) =>
  jsonUpstream(t, (msg) => {
    if (msg.method === 'initialize') return { result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'up', version: '1' } } };
    if (msg.method === 'tools/list') {
      return { result: { tools: [{ name: 'links', inputSchema: { type: 'object' } }, { name: 'structured', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }] } };
    }
    if (msg.method === 'tools/call') return { result: msg.params.name === 'links' ? LINKS : ONLY_STRUCTURED };
    return { error: { code: -32601, message: 'no such method' } };
  });

const serverUp = (bridge) => until(async () => (await (await fetch(new URL('/health', bridge.mcpUrl))).json()).servers?.find((s) => s.id === 'up')?.state === 'up');

const call = async (bridge, name, headers) =>
  (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }, headers)).json.result;

const OLD_LINKS = [
  { type: 'text', text: 'two links' },
  { type: 'text', text: 'Resource link: Base program (base.lua) at file:///world/base.lua [text/x-lua, 120 bytes]: What the turtle runs', annotations: { audience: ['assistant'], priority: 0.5 } },
  { type: 'image', data: 'AA==', mimeType: 'image/png' },
  { type: 'text', text: 'Resource link: startup at cc://computer/7/startup' },
];

test('bug: resource_link blocks from an upstream server reached 2025-03-26 clients, whose revision has no such content type: they get a text block naming the link', { timeout: 60_000 }, async (t) => {
  const url = await upstream(t);
  await withBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'up', url }] }) }, async (bridge) => {
    await serverUp(bridge);
    // no MCP-Protocol-Version header: 2025-03-26, as the 2025 transports have it; and the header naming it
    for (const headers of [{}, { 'mcp-protocol-version': '2025-03-26' }]) {
      const old = await call(bridge, 'up__links', headers);
      assert.deepEqual(old.content, OLD_LINKS, JSON.stringify(headers));
      assert.deepEqual(old.structuredContent, { n: 2 }, 'extra result fields stay: the 2025-03-26 Result allows them');
      // the only data was structuredContent, which 2025-03-26 does not have: the JSON as text too
      const structured = await call(bridge, 'up__structured', headers);
      assert.deepEqual(structured.content, [{ type: 'text', text: '{"fuel":80,"ok":true}' }]);
      assert.deepEqual(structured.structuredContent, { fuel: 80, ok: true });
    }
    // 2025-06-18 and later have resource_link and structuredContent: unchanged
    for (const version of ['2025-06-18', '2025-11-25']) {
      const headers = { 'mcp-protocol-version': version };
      assert.deepEqual((await call(bridge, 'up__links', headers)).content, LINKS.content, version);
      assert.deepEqual((await call(bridge, 'up__structured', headers)).content, [], version);
    }
    // a built-in tool's result is not touched
    const probe = await call(bridge, 'probe-computers', {});
    assert.equal(probe.content[0].type, 'text');
  });
});

/** `node dist/index.js --stdio` with env; `request` writes one line and resolves with its answer. */
async function withStdio(env, fn) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js', '--stdio'], {
    cwd: ROOT,
    env: { ...base, CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages = [];
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const lines = (stdout += chunk).split('\n');
    stdout = lines.pop();
    for (const line of lines) messages.push(JSON.parse(line));
  });
  child.stderr.resume();
  const exited = once(child, 'exit');
  let id = 0;
  const request = (method, params) => {
    const mine = ++id;
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: mine, method, params })}\n`);
    return until(() => messages.find((m) => m.id === mine));
  };
  try {
    return await fn(request);
  } finally {
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

test('bug: over --stdio too, a client that initialized with 2025-03-26 got resource_link blocks; one on 2025-11-25 or 2026-07-28 gets them as sent', { timeout: 90_000 }, async (t) => {
  const url = await upstream(t);
  const CC_CONFIG = writeConfig({ servers: [{ id: 'up', url }] });
  const listed = async (request) => until(async () => (await request('tools/list', {})).result?.tools.some((tool) => tool.name === 'up__links'));
  await withStdio({ CC_CONFIG }, async (request) => {
    await request('initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '0' } });
    await listed(request);
    assert.deepEqual((await request('tools/call', { name: 'up__links', arguments: {} })).result.content, OLD_LINKS);
    // a 2026-07-28 message on the same pipe is answered as that revision has it
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    assert.deepEqual((await request('tools/call', { name: 'up__links', arguments: {}, _meta: meta })).result.content, LINKS.content);
  });
  await withStdio({ CC_CONFIG }, async (request) => {
    await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'new', version: '0' } });
    await listed(request);
    assert.deepEqual((await request('tools/call', { name: 'up__links', arguments: {} })).result.content, LINKS.content);
  });
});
