#!/usr/bin/env node
// Upstream cell of the benchmark (run by scripts/bench.js, or alone: node scripts/bench-upstream.js
// [--seconds S] [--clients 1,10,100] [--json]). Reported, never asserted.
//
// tools/call of a trivial tool (`echo`) on a stdio MCP server (test/fixtures/mcp-stdio-server.js),
// made two ways at each concurrency C: straight to the server over stdio (our JSON-RPC client on one
// pipe, C requests in flight), and through a `node dist/index.js` child that lists the same server
// in its CC_CONFIG (C MCP clients, one keep-alive HTTP connection each). The difference is what the
// bridge adds.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { JsonRpcClient } from '../dist/jsonrpc/client.js';
import { createLogger } from '../dist/log.js';
import { StdioTransport } from '../dist/upstream/stdio.js';

const BRIDGE = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../test/fixtures/mcp-stdio-server.js', import.meta.url));
const TIMEOUT_MS = 25_000;

const percentile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] : null);
const round = (x) => (x === null ? null : Number(x.toFixed(2)));

/** Runs `once()` from `clients` loops for `seconds` (after a short warm-up); latency per call. */
async function drive(once, clients, seconds) {
  const run = async (ms, record) => {
    const until = performance.now() + ms;
    let errors = 0;
    const latencies = [];
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          const t0 = performance.now();
          try {
            await once();
            if (record) latencies.push(performance.now() - t0);
          } catch {
            errors++;
          }
        }
      }),
    );
    return { latencies, errors };
  };
  await run(Math.min(500, seconds * 250), false);
  const t0 = performance.now();
  const { latencies, errors } = await run(seconds * 1000, true);
  const elapsed = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, errors, rps: Math.round(latencies.length / elapsed), p50: round(percentile(latencies, 0.5)), p99: round(percentile(latencies, 0.99)) };
}

function post(agent, port, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', agent, timeout: TIMEOUT_MS, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (json.error || json.result?.isError) reject(new Error(JSON.stringify(json)));
        else resolve(json);
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(data);
  });
}

async function startBridge(configFile) {
  const child = spawn(process.execPath, [BRIDGE], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, CC_CONFIG: configFile, MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.resume();
  const deadline = Date.now() + 30_000;
  while (!/MCP endpoint: (\S+)/.test(stdout)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`bridge did not start: ${stdout}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const url = new URL(/MCP endpoint: (\S+)/.exec(stdout)[1]);
  for (;;) {
    const health = await (await fetch(new URL('/health', url))).json();
    if (health.servers?.[0]?.state === 'up') break;
    if (Date.now() > deadline) throw new Error(`upstream not up: ${JSON.stringify(health)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, port: Number(url.port) };
}

/** The upstream cells: [{clients, direct, bridge, overheadP50, overheadP99}]. */
export async function benchUpstream({ seconds = 3, clients = [1, 10, 100], log = () => {} } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-bench-upstream-'));
  const configFile = path.join(dir, 'bridge.json');
  writeFileSync(configFile, JSON.stringify({ servers: [{ id: 'fx', command: process.execPath, args: [FIXTURE] }] }));
  const transport = new StdioTransport({ command: process.execPath, args: [FIXTURE], env: {}, maxLineBytes: 4 << 20, log: createLogger('warn'), name: 'bench fixture' });
  const direct = new JsonRpcClient(transport, { timeoutMs: TIMEOUT_MS });
  let bridge = null;
  const cells = [];
  try {
    await direct.start();
    await direct.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
    await direct.notify('notifications/initialized');
    bridge = await startBridge(configFile);
    for (const c of clients) {
      log(`upstream: tools/call echo with C=${c}, straight over stdio`);
      const straight = await drive(() => direct.request('tools/call', { name: 'echo', arguments: { n: 1 } }), c, seconds);
      log(`upstream: tools/call fx__echo with C=${c}, through the bridge`);
      const agents = Array.from({ length: c }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
      let next = 0;
      const through = await drive(() => post(agents[next++ % c], bridge.port, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fx__echo', arguments: { n: 1 } } }), c, seconds);
      for (const agent of agents) agent.destroy();
      const diff = (key) => (straight[key] === null || through[key] === null ? null : round(through[key] - straight[key]));
      cells.push({ clients: c, direct: straight, bridge: through, overheadP50: diff('p50'), overheadP99: diff('p99') });
    }
  } finally {
    await direct.close();
    if (bridge) {
      bridge.child.kill('SIGTERM');
      await new Promise((r) => (bridge.child.exitCode !== null ? r() : bridge.child.once('exit', r)));
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return cells;
}

export function formatUpstream(cells) {
  const rows = cells.map((c) => [
    String(c.clients),
    `${c.direct.rps}`,
    `${c.direct.p50} / ${c.direct.p99}`,
    `${c.bridge.rps}`,
    `${c.bridge.p50} / ${c.bridge.p99}`,
    `${c.overheadP50} / ${c.overheadP99}`,
    `${c.direct.errors + c.bridge.errors}`,
  ]);
  const headers = ['C', 'direct req/s', 'direct p50/p99 ms', 'bridge req/s', 'bridge p50/p99 ms', 'added p50/p99 ms', 'errors'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cols) => cols.map((x, i) => x.padStart(widths[i])).join('  ');
  return ['Upstream: tools/call of echo on a stdio MCP server, straight vs through the bridge', line(headers), ...rows.map(line)].join('\n') + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { seconds: { type: 'string' }, clients: { type: 'string' }, json: { type: 'boolean' } } });
  const clients = values.clients ? values.clients.split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0) : [1, 10, 100];
  benchUpstream({ seconds: Number(values.seconds ?? 3), clients, log: (m) => process.stderr.write(`${m}\n`) }).then(
    (cells) => {
      process.stdout.write(values.json ? JSON.stringify(cells, null, 2) + '\n' : formatUpstream(cells));
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`bench-upstream: ${err.stack ?? err.message}\n`);
      process.exit(1);
    },
  );
}
