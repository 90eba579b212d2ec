// Streamable HTTP client edges pinned by mutation testing: CC_UPSTREAM_MAX_MESSAGE_BYTES at its exact
// edge (declared by Content-Length and counted while chunked).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { JsonRpcClient } from '../../dist/jsonrpc/client.js';
import { createLogger } from '../../dist/log.js';
import { HttpTransport } from '../../dist/upstream/http.js';

/** A local HTTP server; `handle(req, body, res)` answers. Closed when the test ends. */
async function server(t, handle) {
  const requests = [];
  const srv = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? JSON.parse(text) : null;
    requests.push({ method: req.method, url: req.url, headers: req.headers, body });
    await handle(req, body, res);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(() => {
    srv.closeAllConnections();
    return new Promise((r) => srv.close(r));
  });
  return { url: `http://127.0.0.1:${srv.address().port}/mcp`, base: `http://127.0.0.1:${srv.address().port}`, requests };
}

async function client(t, url, extra = {}) {
  const lines = [];
  const transport = new HttpTransport({ url, maxMessageBytes: 4096, log: createLogger('debug', (l) => lines.push(l)), name: 'upstream web', listen: false, ...extra });
  const rpc = new JsonRpcClient(transport, { timeoutMs: 60_000 });
  await rpc.start();
  t.after(() => rpc.close());
  return { transport, rpc, lines };
}

/** An answer to `id` whose JSON text is exactly `bytes` bytes long. */
function answerOf(id, bytes) {
  const empty = JSON.stringify({ jsonrpc: '2.0', id, result: '' });
  const text = JSON.stringify({ jsonrpc: '2.0', id, result: 'x'.repeat(bytes - empty.length) });
  assert.equal(Buffer.byteLength(text), bytes);
  return text;
}

test('an answer of exactly CC_UPSTREAM_MAX_MESSAGE_BYTES is taken and one byte more refused, declared or chunked (found by mutation testing)', async (t) => {
  const srv = await server(t, (req, body, res) => {
    const [how, size] = body.method.split(':');
    const text = answerOf(body.id, Number(size));
    if (how === 'declared') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      return res.end(text);
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(text.slice(0, 100));
    res.end(text.slice(100));
  });
  const { rpc } = await client(t, srv.url);
  for (const how of ['declared', 'chunked']) {
    assert.match(await rpc.request(`${how}:4096`), /^x+$/, how);
    await assert.rejects(rpc.request(`${how}:4097`), (e) => e.code === 'ERR_RPC_MALFORMED' && /the answer is over 4096 bytes/.test(e.message), how);
  }
});

test('an answer cut short says the connection closed before the whole answer arrived, with the socket\'s reason, JSON or event stream (found by mutation testing)', async (t) => {
  const srv = await server(t, (req, body, res) => {
    if (body.method === 'json') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
      res.write('{"jsonrpc":"2.0",');
    } else {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': working\n\n');
    }
    setTimeout(() => res.socket.destroy(), 20);
  });
  const { rpc } = await client(t, srv.url);
  for (const method of ['json', 'sse']) {
    await assert.rejects(rpc.request(method), (e) => {
      assert.equal(e.code, 'ERR_RPC_SEND', method);
      assert.match(e.message, /the connection closed before the whole answer arrived \([^)]+\)$/, method);
      return true;
    });
  }
});
