// An HTTP upstream that closes its connection part-way: the down reason the bridge logs (and /health
// shows) says what happened. A real HTTP server on an ephemeral port; the bridge's UpstreamServer over it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { UpstreamServer } from '../../dist/upstream/server.js';
import { createLogger } from '../../dist/log.js';
import { until } from '../helpers.js';

/**
 * An upstream that answers as an SDK server does (SSE answers) except where `cut` says: 'initialize'
 * and 'tools/list' send half a notification event on the answer's stream, then close the socket;
 * 'notifications/initialized' closes the socket while the bridge POSTs that notification.
 */
async function cuttingUpstream(t, cut) {
  const srv = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (req.method !== 'POST') return res.writeHead(405).end();
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (msg.method === cut) {
      if (msg.id === undefined) return req.socket.destroy();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","da');
      return setTimeout(() => res.socket.destroy(), 20);
    }
    if (msg.id === undefined) return res.writeHead(202).end();
    const result =
      msg.method === 'initialize'
        ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'cut', version: '1' } }
        : { tools: [{ name: 'a', inputSchema: { type: 'object' } }] };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result })}\n\n`);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(() => {
    srv.closeAllConnections();
    return new Promise((r) => srv.close(r));
  });
  return `http://127.0.0.1:${srv.address().port}/mcp`;
}

test('bug: an HTTP upstream that closed its event stream in the middle of a notification was logged down as "... did not get through: the connection closed before the whole answer arrived", and one that closed the connection on a notification POST as "... could not be sent: fetch failed"', { timeout: 60_000 }, async (t) => {
  const expected = {
    // before: 'initialize did not get through: the connection closed before the whole answer arrived (other side closed)'
    initialize: /^upstream cut is down: initialize was not answered: the server closed its event stream in the middle of an event \(other side closed\); restarting/,
    'tools/list': /^upstream cut is down: tools\/list was not answered: the server closed its event stream in the middle of an event \(other side closed\); restarting/,
    // before: 'notifications/initialized could not be sent: fetch failed'
    'notifications/initialized': /^upstream cut is down: notifications\/initialized could not be sent: the server closed the connection before answering \(other side closed\); restarting/,
  };
  for (const [cut, line] of Object.entries(expected)) {
    const lines = [];
    const url = await cuttingUpstream(t, cut);
    const server = new UpstreamServer({ id: 'cut', url }, { log: createLogger('warn', (l) => lines.push(l.replace(/^\S+ warn /, ''))), timeoutMs: 30_000, maxMessageBytes: 1 << 20, version: '0', onChange: () => {}, backoffMs: 600_000 });
    t.after(() => server.stop());
    server.start();
    await until(() => server.status().state === 'down');
    const down = lines.find((l) => l.includes(' is down: '));
    assert.match(down, line, cut);
    assert.doesNotMatch(server.status().reason, /did not get through|fetch failed|cannot reach/, cut);
  }
});
