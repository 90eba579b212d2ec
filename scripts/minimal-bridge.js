#!/usr/bin/env node
// The minimal reference bridge for `npm run bench -- --compare` (issue 16). NOT a product: the least
// code that does probe-computers over MCP-over-HTTP and the computer link, so the bench can measure
// our bridge against a floor in the same run. No validation, no limits, no cancellation, no auth.
// Read the body, JSON.parse, one randomUUID per computer, one ws.send of a template string per
// computer, one timer per probe, a plain result. Same env and startup lines as dist/index.js.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { WebSocketServer } from 'ws';

const TIMEOUT = Number(process.env.CC_PROBE_TIMEOUT_MS ?? 2000);
const links = new Map(); // ws -> { computerId, label }
const pending = new Map(); // request id -> { probe, index }

const wss = new WebSocketServer({ host: process.env.CC_LINK_HOST ?? '127.0.0.1', port: Number(process.env.CC_LINK_PORT ?? 3001), perMessageDeflate: false });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const f = JSON.parse(data);
    if (f.type === 'hello') {
      links.set(ws, { computerId: f.computerId, label: f.computerLabel ?? null });
      ws.send('{"type":"hello-ok"}');
    } else if (f.type === 'response') {
      const p = pending.get(f.id);
      if (!p) return;
      pending.delete(f.id);
      const e = p.probe.entries[p.index];
      e.status = f.ok ? 'pong' : 'error';
      e.ms = Date.now() - p.probe.t0;
      if (f.ok) e.result = f.result;
      else e.error = f.error;
      if (--p.probe.left === 0) p.probe.finish();
    }
  });
  ws.on('close', () => links.delete(ws));
});

function probe(respond) {
  const t0 = Date.now();
  const ids = [];
  const entries = [];
  const p = { t0, entries, left: links.size, finish: null };
  let timer = null;
  p.finish = () => {
    clearTimeout(timer);
    for (const id of ids) pending.delete(id);
    respond({ content: [{ type: 'text', text: entries.map((e) => e.result ?? `${e.status} from computer ${e.computerId}`).join('\n') }], structuredContent: { computers: entries } });
  };
  if (links.size === 0) return p.finish();
  for (const [ws, link] of links) {
    const id = randomUUID();
    ids.push(id);
    pending.set(id, { probe: p, index: entries.length });
    entries.push({ computerId: link.computerId, label: link.label, status: 'timeout', ms: TIMEOUT });
    ws.send(`{"type":"request","id":"${id}","method":"ping"}`);
  }
  timer = setTimeout(p.finish, TIMEOUT);
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.setHeader('content-type', 'application/json');
    return res.end(JSON.stringify({ ok: true, computers: links.size }));
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const msg = JSON.parse(Buffer.concat(chunks));
    const send = (result) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    };
    if (msg.method === 'initialize') send({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'minimal', version: '0' } });
    else if (msg.method === 'tools/call' && msg.params?.name === 'probe-computers') probe(send);
    else send({ content: [{ type: 'text', text: 'unknown' }], isError: true });
  });
});

let up = 0;
const listening = () => {
  if (++up < 2) return;
  process.stdout.write(`MCP endpoint: http://127.0.0.1:${server.address().port}/mcp\nComputer link: ws://127.0.0.1:${wss.address().port}\n`);
};
wss.on('listening', listening);
server.listen(Number(process.env.MCP_PORT ?? 3000), process.env.MCP_HOST ?? '127.0.0.1', listening);
process.on('SIGTERM', () => process.exit(0));
