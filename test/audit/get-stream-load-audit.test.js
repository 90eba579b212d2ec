// GET /mcp's handler is loaded at the first GET (routes.ts). Requests that arrive while it loads must
// all reach the one handler: its SessionStreams is where MCP_MAX_GET_STREAMS_PER_SESSION and "one
// notice per change per session, on its newest stream" are kept. Real HTTP; this file's process has
// not loaded the module before its first GET.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { writeConfig } from '../config/write.js';
import { rpc, until, withBridge } from '../helpers.js';

const luaTool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });

function openStream(url, headers) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const stream = { status: res.statusCode, body: '', ended: false, close: () => req.destroy() };
      res.setEncoding('utf8');
      res.on('data', (chunk) => (stream.body += chunk));
      res.on('end', () => (stream.ended = true));
      res.on('error', () => {});
      resolve(stream);
    });
    req.end();
  });
}

test('bug: GETs that came while the GET /mcp handler was loading each made a handler of their own, so a session held more streams than MCP_MAX_GET_STREAMS_PER_SESSION and got a tool change notice on each; now they share the one handler', { timeout: 60_000 }, async () => {
  const file = writeConfig({ tools: [luaTool('one')] });
  await withBridge({ CC_CONFIG: file, MCP_MAX_GET_STREAMS_PER_SESSION: '1', MCP_MAX_GET_STREAMS: '100' }, async (bridge) => {
    const version = '2025-11-25';
    const init = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    const headers = { 'mcp-protocol-version': version, 'mcp-session-id': init.headers.get('mcp-session-id') };
    assert.equal((await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status, 202);
    // the first GETs of this process, all at once
    const streams = await Promise.all(Array.from({ length: 12 }, () => openStream(bridge.mcpUrl, headers)));
    assert.deepEqual(streams.map((s) => s.status), Array(12).fill(200));
    // a session may hold one: every stream but one is ended (before: one per handler made stayed open)
    await until(() => streams.filter((s) => s.ended).length === 11, 5, 20_000);
    writeConfig({ tools: [luaTool('one'), luaTool('two')] }, file);
    assert.equal((await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST' })).status, 200);
    const open = streams.find((s) => !s.ended);
    await until(() => open.body.includes('notifications/tools/list_changed'));
    assert.equal(streams.filter((s) => s.body.includes('notifications/tools/list_changed')).length, 1);
    for (const s of streams) s.close();
  });
});
