// CC_UPSTREAM_RELIST_MS: notices that a server's tools changed, merged into one listing at most so
// often, and the last change never lost. A real HTTP upstream whose GET event stream carries the notices.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { UpstreamServer } from '../../dist/upstream/server.js';
import { createLogger } from '../../dist/log.js';
import { until } from '../helpers.js';

test('list_changed notices during CC_UPSTREAM_RELIST_MS are merged into one listing made after the last of them; a change made during a listing is listed again', { timeout: 60_000 }, async (t) => {
  let version = 0;
  let listings = 0;
  let stream = null;
  // on this listing the server changes its tools again before answering (and says so)
  let changeDuring = -1;
  const notice = () => stream.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
  const srv = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      stream = res;
      return;
    }
    if (req.method !== 'POST') return res.writeHead(200).end();
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (msg.id === undefined) return res.writeHead(202).end();
    let result;
    if (msg.method === 'initialize') result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'v', version: '1' } };
    else {
      listings++;
      result = { tools: [{ name: `t${version}`, inputSchema: { type: 'object' } }] };
      if (listings === changeDuring) {
        version++;
        notice();
      }
    }
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(() => {
    srv.closeAllConnections();
    return new Promise((r) => srv.close(r));
  });
  const server = new UpstreamServer({ id: 'v', url: `http://127.0.0.1:${srv.address().port}/mcp` }, { log: createLogger('silent'), timeoutMs: 30_000, maxMessageBytes: 1 << 20, version: '0', onChange: () => {}, relistMs: 300 });
  t.after(() => server.stop());
  server.start();
  await until(() => server.status().state === 'up' && stream !== null);
  const names = () => server.source.tools().map((tool) => tool.name);
  assert.deepEqual(names(), ['v__t0']);
  assert.equal(listings, 1);
  // three changes, each said, back to back: they are merged (one listing, or two when the first
  // came after the interval and started one at once), and what is offered is the last
  for (let i = 0; i < 3; i++) {
    version++;
    notice();
  }
  await until(() => names()[0] === 'v__t3');
  assert.ok(listings === 2 || listings === 3, `${listings - 1} listings for three notices`);
  const before = listings;
  // a change made while a listing is under way (the notice comes before that listing's answer, which
  // still shows the old tools): listed again, so the last change is not lost
  changeDuring = before + 1;
  version++;
  notice();
  await until(() => names()[0] === 'v__t5');
  assert.equal(listings, before + 2);
});
