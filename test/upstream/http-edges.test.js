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

test('redirects within the origin: 20 are followed and the 21st refused; 301 and 302 turn a POST into a body-less GET, dropping body headers in any case (found by mutation testing)', async (t) => {
  const srv = await server(t, (req, body, res) => {
    const hops = /^\/r\/(\d+)$/.exec(req.url);
    if (hops && Number(hops[1]) > 0) return res.writeHead(307, { location: `/r/${Number(hops[1]) - 1}` }).end();
    if (req.url === '/moved') return res.writeHead(301, { location: '/mcp' }).end();
    if (req.url === '/found') return res.writeHead(302, { location: '/mcp' }).end();
    if (req.method === 'GET') {
      res.writeHead(405, { 'content-type': 'application/json' });
      return res.end('{"error":"got a GET"}');
    }
    const text = JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { here: req.url } });
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  });
  const far = await client(t, `${srv.base}/r/20`);
  assert.deepEqual(await far.rpc.request('tools/list'), { here: '/r/0' });
  assert.equal(srv.requests.length, 21);
  const tooFar = await client(t, `${srv.base}/r/21`);
  await assert.rejects(tooFar.rpc.request('tools/list'), (e) => e.code === 'ERR_RPC_CLOSED' && /redirected more than 20 times in a row/.test(e.message));
  assert.equal(srv.requests.length, 21 + 21, 'the 21st redirect is not followed');
  for (const path of ['/moved', '/found']) {
    const c = await client(t, `${srv.base}${path}`, { headers: { 'Content-Language': 'en', 'X-Kept': 'yes' } });
    await assert.rejects(c.rpc.request('tools/list'), /HTTP 405: \{"error":"got a GET"\}/, path);
    const followed = srv.requests.at(-1);
    assert.equal(followed.method, 'GET', path);
    assert.equal(followed.body, null, path);
    assert.equal(followed.headers['content-type'], undefined, path);
    assert.equal(followed.headers['content-language'], undefined, path);
    assert.equal(followed.headers['x-kept'], 'yes', path);
  }
});

test('a redirect to another origin is refused naming origins only: never the configured path or query, which may hold a key (found by mutation testing)', async (t) => {
  const other = await server(t, (req, body, res) => res.writeHead(500).end());
  const srv = await server(t, (req, body, res) => res.writeHead(307, { location: `${other.base}/there?token=elsewhere-secret` }).end());
  const { rpc } = await client(t, `${srv.base}/away?key=up-secret`);
  await assert.rejects(rpc.request('tools/list'), (e) => {
    assert.equal(e.code, 'ERR_RPC_CLOSED');
    assert.match(e.message, /redirected to another origin/);
    assert.ok(e.message.includes(`the server at ${srv.base} redirected to another origin, ${other.base};`), e.message);
    assert.doesNotMatch(e.message, /secret|\/away|\/there/);
    return true;
  });
  assert.equal(other.requests.length, 0);
});

test('an error status whose body only looks like an answer (no "jsonrpc": "2.0") fails the call with the status, not as a malformed answer (found by mutation testing)', async (t) => {
  const srv = await server(t, (req, body, res) => {
    const text = JSON.stringify({ id: body.id, error: { code: -32000, message: 'nope' } });
    res.writeHead(500, { 'content-type': 'application/json' }).end(text);
  });
  const { rpc } = await client(t, srv.url);
  await assert.rejects(rpc.request('tools/list'), (e) => e.code === 'ERR_RPC_SEND' && /HTTP 500: \{"id":\d+,"error"/.test(e.message));
});

test('a redirect without a Location is the answer as it is: the call fails with its status and nothing is followed (found by mutation testing)', async (t) => {
  const srv = await server(t, (req, body, res) => {
    if (req.url === '/mcp') return res.writeHead(307).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body?.id ?? null, result: 'followed' }));
  });
  const { rpc } = await client(t, srv.url);
  await assert.rejects(rpc.request('tools/list'), (e) => e.code === 'ERR_RPC_SEND' && /HTTP 307/.test(e.message));
  assert.deepEqual(srv.requests.map((r) => r.url), ['/mcp']);
});
