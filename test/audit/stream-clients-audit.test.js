// Audit: without MCP_AUTH_TOKEN the HTTP event streams had no per-client limit. A client could start
// session after session and hold every place of MCP_MAX_GET_STREAMS (a stream each), or open
// MCP_MAX_SUBSCRIPTIONS listens, and every other client was refused (503). Now a client is its token,
// or without tokens its remote address, and MCP_MAX_GET_STREAMS_PER_CLIENT /
// MCP_MAX_SUBSCRIPTIONS_PER_CLIENT end its oldest instead. Two clients on two loopback addresses
// (127.0.0.2, 127.0.0.3: Linux routes all of 127/8 to lo) against a bridge on 0.0.0.0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { until, withBridge } from '../helpers.js';
import { listen } from '../mcp/listen-client.js';

const OPEN = { MCP_HOST: '0.0.0.0', MCP_ALLOW_UNAUTHENTICATED: 'on' };
const url = (bridge) => `http://127.0.0.1:${new URL(bridge.mcpUrl).port}/mcp`;

async function initialize(target, headers = {}) {
  const res = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } }),
  });
  await res.text();
  return res.headers.get('mcp-session-id');
}

/** GET /mcp from `localAddress`: resolves at the answer's head with {status, comments, ended, close()}. */
function getStream(target, session, localAddress, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method: 'GET', localAddress, headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': session, ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const stream = { status: res.statusCode, text: '', ended: false, close: () => req.destroy() };
      res.setEncoding('utf8');
      res.on('data', (chunk) => (stream.text += chunk));
      res.on('end', () => (stream.ended = true));
      res.on('error', () => {});
      resolve(stream);
    });
    req.end();
  });
}

test('bug: without MCP_AUTH_TOKEN one client starting session after session held every MCP_MAX_GET_STREAMS place and another client got 503; now MCP_MAX_GET_STREAMS_PER_CLIENT (by address) ends its oldest', { timeout: 60_000 }, async () => {
  await withBridge({ ...OPEN, MCP_MAX_GET_STREAMS: '3', MCP_MAX_GET_STREAMS_PER_CLIENT: '2' }, async (bridge) => {
    const target = url(bridge);
    const greedy = [];
    for (let i = 0; i < 3; i++) greedy.push(await getStream(target, await initialize(target), '127.0.0.2'));
    assert.deepEqual(greedy.map((s) => s.status), [200, 200, 200]);
    // another client still gets a place (before: 503)
    const other = await getStream(target, await initialize(target), '127.0.0.3');
    assert.equal(other.status, 200);
    // the greedy client's third stream ended its first, naming the variable
    await until(() => greedy[0].ended);
    assert.match(greedy[0].text, /: ended: this client opened a newer GET \/mcp stream and may hold 2 over all its sessions \(MCP_MAX_GET_STREAMS_PER_CLIENT/);
    assert.equal(greedy[1].ended || greedy[2].ended, false);
    for (const s of [...greedy, other]) s.close();
  });
});

test('bug: with tokens, GET /mcp streams had no per-token limit either: one token held every place; now each token holds at most MCP_MAX_GET_STREAMS_PER_CLIENT', { timeout: 60_000 }, async () => {
  const A = { authorization: 'Bearer audit-stream-token-a-0123456789' };
  const B = { authorization: 'Bearer audit-stream-token-b-0123456789' };
  await withBridge({ MCP_AUTH_TOKEN: 'audit-stream-token-a-0123456789,audit-stream-token-b-0123456789', MCP_MAX_GET_STREAMS: '3', MCP_MAX_GET_STREAMS_PER_CLIENT: '2' }, async (bridge) => {
    const target = bridge.mcpUrl;
    const greedy = [];
    for (let i = 0; i < 3; i++) greedy.push(await getStream(target, await initialize(target, A), '127.0.0.1', A));
    const other = await getStream(target, await initialize(target, B), '127.0.0.1', B);
    assert.equal(other.status, 200);
    await until(() => greedy[0].ended);
    for (const s of [...greedy, other]) s.close();
  });
});

test('bug: without MCP_AUTH_TOKEN one client could hold every MCP_MAX_SUBSCRIPTIONS listen and another got 503; now MCP_MAX_SUBSCRIPTIONS_PER_CLIENT (by address) ends its oldest', { timeout: 60_000 }, async () => {
  await withBridge({ ...OPEN, MCP_MAX_SUBSCRIPTIONS: '3', MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: '2' }, async (bridge) => {
    const target = url(bridge);
    const greedy = [];
    for (let i = 1; i <= 3; i++) greedy.push(await listen(target, i, { toolsListChanged: true }, { localAddress: '127.0.0.2' }));
    const other = await listen(target, 9, { toolsListChanged: true }, { localAddress: '127.0.0.3' });
    assert.equal(other.status, 200);
    await until(() => greedy[0].ended);
    assert.equal(greedy[0].events.at(-1)?.error?.data?.variable, 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT');
    assert.equal(greedy[1].ended || greedy[2].ended, false);
    for (const s of [...greedy, other]) s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
});
