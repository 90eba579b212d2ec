// The closed-loop MCP-over-HTTP load of `npm run bench -- --compare` (scripts/bench-compare.js), shared
// with scripts/bench-upstream-peer.js, which runs the same load from inside an upstream stdio server
// (the upstream cell's server answers from the load generator's event loop, as the probe cell's fake
// computers do). Reported, never asserted. Loopback only.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

export const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });

/** `tools/call` of the upstream fixture's `echo` through the bridge (server id `fx`). */
export const ECHO = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fx__echo', arguments: { n: 1 } } });

export function post(agent, port, body, urlPath = '/mcp', headers = MCP_HEADERS) {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: urlPath, method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => resolve({ error: err.message }));
      },
    );
    req.on('error', (err) => resolve({ error: err.message }));
    req.end(body);
  });
}

/** The bridge's answer to ECHO (node:http adds the same headers to it as to the bridge's). */
export const ECHO_ANSWER = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { args: { n: 1 } } } });

/** The tool result of an MCP (or, `rest`, a REST) answer, or a string saying what is wrong. */
export function resultOf(res, rest = false) {
  if (res.error || res.status !== 200) return res.error ?? `HTTP ${res.status}: ${res.text.slice(0, 200)}`;
  const json = JSON.parse(res.text);
  const result = rest ? json : json.result;
  if (!result) return `no result: ${res.text.slice(0, 200)}`;
  if (result.isError) return `tool error: ${result.content?.[0]?.text}`;
  return result;
}

/** null when an MCP answer is the echo of ECHO's arguments, else what is wrong. */
export function echoProblem(res) {
  const r = resultOf(res);
  return typeof r === 'string' ? r : r.structuredContent?.args?.n === 1 ? null : `unexpected echo: ${JSON.stringify(r).slice(0, 200)}`;
}

/**
 * C closed-loop keep-alive clients (`call(agent, port)`, each answer checked by `check`), a warm-up,
 * then a window of `seconds`: `atStart()` right before it opens and `atEnd()` right after it closes
 * (where the caller reads the bridge's CPU). Returns the latencies of the calls that completed
 * inside the window, its length and the errors among them.
 */
export async function drive({ port, c, init = true, call, check, seconds, warmup, atStart, atEnd }) {
  const agents = Array.from({ length: c }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  if (init) await Promise.all(agents.map((a) => post(a, port, INIT)));
  let window = null;
  let stop = false;
  const lat = [];
  let errors = 0;
  let firstError = null;
  const loop = async (agent) => {
    while (!stop) {
      const t0 = performance.now();
      const res = await call(agent, port);
      const t1 = performance.now();
      if (!window || t1 < window[0] || t1 > window[1]) continue;
      lat.push(t1 - t0);
      let p;
      try {
        p = check(res);
      } catch (err) {
        p = `unreadable answer: ${err.message}`;
      }
      if (p) {
        errors++;
        firstError ??= p;
      }
    }
  };
  const running = agents.map(loop);
  await sleep(warmup * 1000);
  await atStart();
  const start = performance.now();
  window = [start, start + seconds * 1000];
  await sleep(seconds * 1000);
  await atEnd();
  const elapsed = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(running);
  for (const a of agents) a.destroy();
  return { lat, elapsed, errors, firstError };
}

/**
 * Runs the clients (drive, post and `check`, as in a cell's window) for `seconds` against a loopback
 * HTTP server in this process that answers every request with `answer`, never against a bridge: their
 * code is then optimized before a cell's window. The upstream peer is a fresh process per cell and the
 * bench process's first cell would be its first load; cold clients cost the load core more per call,
 * so calls reach the bridge slower and it finds fewer per wake-up (README, Benchmark).
 */
export async function warmClients(seconds, body, answer, check) {
  if (!(seconds > 0)) return;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  try {
    const m = await drive({ port, c: 100, call: (agent) => post(agent, port, body), check, seconds, warmup: 0, atStart: () => {}, atEnd: () => {} });
    if (m.errors) throw new Error(`warming the clients: ${m.firstError}`);
  } finally {
    server.close();
  }
}
