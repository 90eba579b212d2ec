// Fuzz: a hostile Streamable HTTP MCP server (in this process, real HTTP on loopback) answers
// concurrent tools/call requests from several callers, each in a way a seeded PRNG picks: JSON or
// SSE answers, notifications and forged answers (ids the bridge never sent, the id as a string, an
// array of answers) before the real one, streams that end without an answer (with and without an
// event id to resume from), error statuses with and without a JSON-RPC body, bodies that are not
// JSON, cut short, oversize or dribbled a few bytes at a time, CRLF and multi-line SSE, or nothing.
// Invariants: no caller is handed a forged answer or another caller's echo, every call gets its own
// echo or a well-formed error, nothing fails inside the bridge, and the bridge keeps serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { rpc, until, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { echoCalls, fuzzSeed, internalFailures, prng, upstreamUp } from './lib.js';

const CALLERS = 6;
const CALLS_PER_CALLER = 30;
const LIMIT = 64 * 1024;

function hostileServer(seed) {
  const r = prng(seed);
  let maxId = 0;
  const server = createServer(async (req, res) => {
    if (req.method === 'GET') return res.writeHead(r.chance(0.5) ? 405 : 404).end();
    if (req.method === 'DELETE') return res.writeHead(200).end();
    let body = '';
    for await (const chunk of req) body += chunk;
    const msg = JSON.parse(body);
    if (typeof msg.id === 'number' && msg.id > maxId) maxId = msg.id;
    if (msg.id === undefined) return res.writeHead(202).end();
    const json = (status, text, type = 'application/json') => res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) }).end(text);
    const answer = (result, id = msg.id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`;
    if (msg.method === 'initialize') return json(200, answer(JSON.stringify({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile-http', version: '1' } })));
    if (msg.method === 'tools/list') return json(200, answer(JSON.stringify({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] })));
    if (msg.method !== 'tools/call') return json(200, `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"error":{"code":-32601,"message":"no"}}`);
    const args = msg.params.arguments ?? {};
    const real = answer(JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: { args } }));
    const forged = (id) => answer('{"content":[{"type":"text","text":"FORGED"}],"structuredContent":{"args":{"nonce":"FORGED"}}}', id);
    const unknownId = () => r.pick([String(msg.id), maxId + 1000, null, -1, msg.id + 0.5]);
    const sse = (events, { end = true, headers = {} } = {}) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
      for (const e of events) res.write(e);
      if (end) res.end();
    };
    switch (r.int(16)) {
      case 0:
        return sse([`event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n`, `: a comment\n\n`, `data: ${forged(unknownId())}\n\n`, `id: 1\ndata: ${real}\n\n`]);
      case 1: // CRLF line ends, data split over several data: lines, an event of another type first
        return sse([`event: other\r\ndata: ${forged(msg.id)}\r\n\r\n`, `data: ${real.slice(0, 20)}\r\ndata: ${real.slice(20)}\r\n\r\n`.replace(/\r\ndata: /, '\ndata: ')]);
      case 2: // ends without the answer and without an id to resume from
        return sse([`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n`]);
      case 3: // ends without the answer, with an event id: the bridge tries to resume (GET), which fails
        return sse([`id: 7\nretry: 10\ndata: \n\n`]);
      case 4: // the answer in an array with a forged one
        return json(200, `[${forged(unknownId())},${real}]`);
      case 5:
        return json(500, 'internal trouble', 'text/plain');
      case 6: // an error status that still carries the answer
        return json(r.pick([400, 500, 503]), real);
      case 7:
        return json(200, r.pick(['not json', '', '{"jsonrpc":"2.0"}', `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)}}`]));
      case 8: // cut short
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(real.length + 50) });
        res.write(real.slice(0, real.length >> 1));
        return setImmediate(() => res.destroy());
      case 9: // oversize, as JSON or as one SSE event
        return r.chance(0.5) ? json(200, answer(`{"content":[{"type":"text","text":"${'x'.repeat(LIMIT)}"}]}`)) : sse([`data: ${answer(`{"content":[{"type":"text","text":"${'x'.repeat(LIMIT)}"}]}`)}\n\n`]);
      case 10: // dribbled a few bytes at a time
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < real.length; i += 7) res.write(real.slice(i, i + 7));
        return res.end();
      case 11:
        return res.writeHead(202).end();
      case 12: // only a forged answer: the real one never comes
        return json(200, forged(unknownId()));
      case 13: // the answer twice, then a forged one under the same id
        return sse([`data: ${real}\n\n`, `data: ${real}\n\n`, `data: ${forged(msg.id)}\n\n`]);
      default:
        return json(200, real, r.pick(['application/json', 'application/json; charset=utf-8', 'text/plain']));
    }
  });
  return server;
}

test('fuzz HTTP upstream answers: forged, cut, oversize, streamed and missing answers never reach the wrong caller or crash the bridge', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_7);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const server = hostileServer(seed);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${server.address().port}/mcp`;
  try {
    await withBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'web', url, timeoutMs: 500 }] }), CC_UPSTREAM_MAX_MESSAGE_BYTES: String(LIMIT), LOG_LEVEL: 'info' }, async (bridge) => {
      await upstreamUp(bridge, 'web', until);
      const tally = await echoCalls(bridge, rpc, { tool: 'web__echo', prefix: 'h', callers: CALLERS, calls: CALLS_PER_CALLER });
      t.diagnostic(`calls answered with their own echo: ${tally.own}; with an error: ${tally.error}`);
      assert.deepEqual(tally.problems.slice(0, 10), []);
      assert.ok(tally.own > 0 && tally.error > 0);
      assert.deepEqual(internalFailures(bridge.logs), []);
      assert.equal(bridge.dispatcher.activeCalls, 0);
      assert.equal((await fetch(new URL('/health', bridge.mcpUrl))).status, 200);
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
