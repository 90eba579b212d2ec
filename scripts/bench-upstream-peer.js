#!/usr/bin/env node
// The upstream stdio server of `npm run bench -- --compare`'s upstream cell, which is also that cell's
// load generator: it answers the bridge's MCP requests on stdin/stdout as the test fixture
// (test/fixtures/mcp-stdio-server.js) does for `echo` (readline, JSON.parse of each line, one
// JSON.stringify and one stdout write per answer), and runs the C keep-alive HTTP clients
// (scripts/bench-load.js) in the same event loop, as the probe cell's fake computers share the load
// generator's. The bench tells it what to run over a Unix socket (BENCH_PEER_CONTROL, newline-delimited
// JSON) and reads the bridge's CPU when it opens and closes the window. Before it reports, it warms its
// clients (BENCH_PEER_WARM_S seconds against an HTTP server of its own that answers as the bridge
// answers the echo call, never against the bridge): the probe cell's clients run in the bench process,
// warm from the cells before, and cold ones made this cell's load core slower per call. Not a product;
// loopback only.
import net from 'node:net';
import { createInterface } from 'node:readline';
import { ECHO, ECHO_ANSWER, drive, echoProblem, post, warmClients } from './bench-load.js';

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const ECHO_TOOL = { name: 'echo', title: 'Echo', description: 'Returns its arguments', inputSchema: { type: 'object' }, _meta: { 'fixture/x': 1 } };

function handle(msg) {
  const { id, method, params } = msg;
  if (id === undefined) return undefined;
  switch (method) {
    case 'initialize':
      return send({ jsonrpc: '2.0', id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'bench-peer', version: '1.0.0' } } });
    case 'tools/list':
      return send({ jsonrpc: '2.0', id, result: { tools: [ECHO_TOOL] } });
    case 'tools/call': {
      const args = params.arguments ?? {};
      if (params.name === 'echo') return send({ jsonrpc: '2.0', id, result: { ...text(JSON.stringify(args)), structuredContent: { args } } });
      return send({ jsonrpc: '2.0', id, error: { code: -32602, message: `Unknown tool: ${params.name}` } });
    }
    case 'ping':
      return send({ jsonrpc: '2.0', id, result: {} });
    default:
      return send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (line.trim() === '') return;
  handle(JSON.parse(line));
});
rl.on('close', () => process.exit(0));

// the bench's orders: { run: { port, c, seconds, warmup } }; answers { window: 'start' | 'end' } (each
// waits for { ack }) and { done: { lat, elapsed, errors, firstError } }
const control = process.env.BENCH_PEER_CONTROL;
if (control) {
  const socket = net.connect(control);
  socket.setEncoding('utf8');
  let partial = '';
  let acked = null;
  const say = (m) => socket.write(JSON.stringify(m) + '\n');
  const ask = (m) => new Promise((resolve) => ((acked = resolve), say(m)));
  socket.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      const m = JSON.parse(line);
      if (m.ack) acked?.();
      else if (m.run) {
        const { port, c, seconds, warmup } = m.run;
        drive({ port, c, call: (agent) => post(agent, port, ECHO), check: echoProblem, seconds, warmup, atStart: () => ask({ window: 'start' }), atEnd: () => ask({ window: 'end' }) }).then(
          (done) => say({ done }),
          (err) => say({ failed: err.stack }),
        );
      }
    }
  });
  socket.on('error', (err) => process.stderr.write(`bench peer: control: ${err.message}\n`));
  socket.on('connect', () => {
    warmClients(Number(process.env.BENCH_PEER_WARM_S ?? 0), ECHO, ECHO_ANSWER, echoProblem).then(
      () => say({ hello: process.pid }),
      (err) => process.stderr.write(`bench peer: warm-up: ${err.message}\n`),
    );
  });
}
