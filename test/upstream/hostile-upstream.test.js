// Issue 7 for upstream MCP servers: an answer nested 100,000 levels deep or a message over
// CC_UPSTREAM_MAX_MESSAGE_BYTES fails that call at once with a clear error (not a crash, not a hang
// until the timeout); the server stays up and the next call works. A real child process over stdio
// and a real HTTP server (JSON and SSE answers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from './fixture.js';
import { callTool, until, withBridge } from '../helpers.js';

const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());
const status = (bridge, id) => health(bridge).then((h) => h.servers.find((s) => s.id === id));
const deep = (levels) => '['.repeat(levels) + ']'.repeat(levels);
const LIMIT = 256 * 1024; // a 100,000-deep array (200,000 bytes) fits
// the call timeout is far longer than the test's own guard: an answer left to it would hang the test
const SLOW = { CC_UPSTREAM_TIMEOUT_MS: '600000', CC_UPSTREAM_MAX_MESSAGE_BYTES: String(LIMIT) };

test('stdio upstream: a 100,000-deep answer or a line over the size limit fails that call at once with a clear error; the server stays up', () =>
  withBridge({ ...SLOW, CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--hostile', '--big', String(4 * LIMIT))] }) }, async (bridge) => {
    await until(async () => (await status(bridge, 'fx'))?.state === 'up');
    const deepAnswer = await callTool(bridge, 'fx__deep');
    assert.equal(deepAnswer.isError, true);
    assert.match(deepAnswer.content[0].text, /^upstream server "fx" sent a malformed answer: tools\/call: the answer nests deeper than 64 levels \(CC_UPSTREAM_MAX_JSON_DEPTH\)$/);
    const first = await callTool(bridge, 'fx__huge-id-first');
    assert.equal(first.isError, true);
    assert.match(first.content[0].text, /^upstream server "fx" sent a malformed answer: tools\/call: the answer is over 262144 bytes \(CC_UPSTREAM_MAX_MESSAGE_BYTES\); dropped$/);
    const last = await callTool(bridge, 'fx__huge-id-last');
    assert.equal(last.isError, true);
    assert.match(last.content[0].text, /the answer is over 262144 bytes \(CC_UPSTREAM_MAX_MESSAGE_BYTES\); dropped$/);
    // a deep notification is dropped with a log line; the call it came with still answers
    assert.equal((await callTool(bridge, 'fx__deep-note')).content[0].text, 'after the deep notification');
    assert.ok(bridge.logs.some((l) => /upstream fx sent a message that nests deeper than 64 levels; dropped/.test(l)));
    assert.equal((await status(bridge, 'fx')).state, 'up');
    assert.deepEqual((await callTool(bridge, 'fx__echo', { a: 1 })).structuredContent, { args: { a: 1 } });
    assert.equal(bridge.dispatcher.activeCalls, 0);
  }));

/** A real Streamable HTTP MCP server whose tools answer too deep or too big, as JSON or as SSE. */
async function hostileHttpServer() {
  const TOOLS = ['deep-json', 'deep-sse', 'huge-json', 'huge-chunked', 'huge-sse', 'huge-line-sse', 'ok'];
  const big = 'x'.repeat(4 * LIMIT);
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST') return res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    let body = '';
    for await (const chunk of req) body += chunk;
    const msg = JSON.parse(body);
    if (msg.id === undefined) return res.writeHead(202).end();
    const json = (text) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    const sse = (text) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${text}\n\n`);
    const answer = (result) => `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}`;
    if (msg.method === 'initialize') return json(answer(JSON.stringify({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } })));
    if (msg.method === 'tools/list') return json(answer(JSON.stringify({ tools: TOOLS.map((name) => ({ name, inputSchema: { type: 'object' } })) })));
    if (msg.method !== 'tools/call') return json(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"error":{"code":-32601,"message":"no"}}`);
    const deepResult = `{"content":[],"structuredContent":{"x":${deep(100000)}}}`;
    const hugeResult = `{"content":[{"type":"text","text":"${big}"}]}`;
    switch (msg.params.name) {
      case 'deep-json':
        return json(answer(deepResult));
      case 'deep-sse':
        return sse(answer(deepResult));
      case 'huge-json':
        return json(answer(hugeResult));
      case 'huge-chunked':
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 8; i++) res.write(i === 0 ? answer(hugeResult).slice(0, LIMIT) : ' '.repeat(LIMIT));
        return res.end();
      case 'huge-sse':
        // the oversize answer in several data lines, then the stream ends
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message\ndata: ${answer(hugeResult).slice(0, LIMIT)}\n`);
        return res.end(`data: ${'y'.repeat(LIMIT)}\n\n`);
      case 'huge-line-sse':
        // one endless data line, in pieces, then the blank line that ends the event
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message\ndata: ${answer(hugeResult).slice(0, LIMIT)}`);
        res.write(big);
        return res.end('"}]}}\n\n');
      default:
        return json(answer('{"content":[{"type":"text","text":"fine"}]}'));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, close: () => new Promise((r) => server.close(r)) };
}

test('HTTP upstream: deep or oversize answers (JSON, chunked, SSE) fail that call at once with a clear error; the server stays up', async (t) => {
  const upstream = await hostileHttpServer();
  t.after(() => upstream.close());
  await withBridge({ ...SLOW, CC_CONFIG: writeConfig({ servers: [{ id: 'hh', url: upstream.url }] }) }, async (bridge) => {
    await until(async () => (await status(bridge, 'hh'))?.state === 'up');
    const prefix = '^upstream server "hh" sent a malformed answer: tools/call: the answer ';
    for (const [tool, problem] of [
      ['deep-json', 'nests deeper than 64 levels \\(CC_UPSTREAM_MAX_JSON_DEPTH\\)'],
      ['deep-sse', 'nests deeper than 64 levels \\(CC_UPSTREAM_MAX_JSON_DEPTH\\)'],
      ['huge-json', 'is over 262144 bytes \\(CC_UPSTREAM_MAX_MESSAGE_BYTES\\); dropped'],
      ['huge-chunked', 'is over 262144 bytes \\(CC_UPSTREAM_MAX_MESSAGE_BYTES\\); dropped'],
      ['huge-sse', 'is over 262144 bytes \\(CC_UPSTREAM_MAX_MESSAGE_BYTES\\); dropped'],
      ['huge-line-sse', 'is over 262144 bytes \\(CC_UPSTREAM_MAX_MESSAGE_BYTES\\); dropped'],
    ]) {
      const result = await callTool(bridge, `hh__${tool}`);
      assert.equal(result.isError, true, tool);
      assert.match(result.content[0].text, new RegExp(prefix + problem + '$'), tool);
    }
    assert.equal((await status(bridge, 'hh')).state, 'up');
    assert.equal((await callTool(bridge, 'hh__ok')).content[0].text, 'fine');
    assert.equal(bridge.dispatcher.activeCalls, 0);
  });
});
