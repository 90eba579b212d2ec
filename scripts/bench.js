#!/usr/bin/env node
// Benchmark of the built bridge. Reported, never asserted.
//
// `npm run bench` = `npm run build && node scripts/bench.js [options]`. For every N it starts a fresh
// `node dist/index.js` child on free loopback ports, links N fake computers (ws clients that answer
// ping and exec-lua), then drives tools/call with C concurrent MCP clients (one keep-alive HTTP
// connection each) for a bounded time and reports req/s, p50/p99 latency, errors, CPU and memory.
// At N=1 the same probe-computers calls also go over REST (POST /tools/probe-computers).
//
//   --seconds S      measured seconds per cell (default 3; each cell also gets a short warm-up)
//   --quick          small matrix for smoke checks (N 1,100; C 1,10; 0.5 s)
//   --json           print only the JSON document
//   --computers LIST N values, e.g. 1,100,1000      --clients LIST  C values, e.g. 1,10,100
//   --fake-procs K   run the fake computers in K forked processes instead of the bench process
//   --cpu-prof DIR   start the bridge with --cpu-prof and write its profiles to DIR
//   --no-upstream    skip the upstream cell (scripts/bench-upstream.js)
//   --compare        ours against the minimal reference bridge, interleaved (scripts/bench-compare.js)
import { fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { benchUpstream, formatUpstream } from './bench-upstream.js';

const SELF = fileURLToPath(import.meta.url);
const BRIDGE = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const PROBE_TIMEOUT_MS = 20_000; // far above any latency we expect, so a slow probe shows as latency
const LINK_BYTES_PER_S = 1024 ** 3;
const REQUEST_TIMEOUT_MS = 25_000; // client side; below the bridge's 30 s request timeout
const LINK_TIMEOUT_MS = 30_000;
const HARD_DEADLINE_MS = 6 * 60_000; // the whole run, whatever happens
const EXEC_RESULT = { returns: [], output: '', truncated: false };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Fake computers. The same code runs in the bench process or in `--fake-worker` children.

/** Links one fake computer; resolves with its socket after hello-ok. */
function linkFake(url, computerId) {
  return new Promise((resolve, reject) => {
    const label = `bench-${computerId}`;
    const pong = `pong from ${computerId} (Label: ${label})`;
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`computer ${computerId}: no hello-ok within ${LINK_TIMEOUT_MS} ms`));
    }, LINK_TIMEOUT_MS);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'hello', computerId, computerLabel: label, version: 'bench' })));
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`computer ${computerId}: ${err.message}`));
    });
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      if (frame.type === 'request') {
        const answer =
          frame.method === 'ping'
            ? { ok: true, result: pong }
            : frame.method === 'exec-lua'
              ? { ok: true, result: EXEC_RESULT }
              : { ok: false, error: 'unknown method' };
        ws.send(JSON.stringify({ type: 'response', id: frame.id, ...answer }));
      } else if (frame.type === 'hello-ok') {
        clearTimeout(timer);
        resolve(ws);
      } else if (frame.type === 'hello-error') {
        clearTimeout(timer);
        reject(new Error(`computer ${computerId}: hello-error ${frame.error}`));
      }
    });
  });
}

/** Links every id, at most `parallel` handshakes at a time. */
async function linkFakes(url, ids, sockets, parallel = 64) {
  let next = 0;
  const worker = async () => {
    while (next < ids.length) sockets.push(await linkFake(url, ids[next++]));
  };
  await Promise.all(Array.from({ length: Math.min(parallel, ids.length) }, worker));
}

function runFakeWorker() {
  const sockets = [];
  process.on('disconnect', () => process.exit(0));
  process.on('message', async ({ seq, cmd, url, ids }) => {
    try {
      if (cmd === 'link') await linkFakes(url, ids, sockets);
      if (cmd === 'close') for (const ws of sockets.splice(0)) ws.terminate();
      process.send({ seq, ok: true, cpu: process.cpuUsage() });
    } catch (err) {
      process.send({ seq, ok: false, error: err.message });
    }
  });
}

/** Where the fakes run: the bench process itself, or K forked workers. Same interface. */
function createFakeHost(procs) {
  if (procs === 0) {
    const sockets = [];
    return {
      where: 'in the bench process (same event loop as the MCP clients)',
      forked: false,
      link: (url, ids) => linkFakes(url, ids, sockets),
      cpuMicros: async () => 0, // already part of the bench process's own CPU
      close: async () => {
        for (const ws of sockets.splice(0)) ws.terminate();
      },
      kill: () => {},
    };
  }
  const workers = Array.from({ length: procs }, () => {
    const child = fork(SELF, ['--fake-worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const waiting = new Map();
    let seq = 0;
    child.on('message', (m) => {
      const w = waiting.get(m.seq);
      waiting.delete(m.seq);
      if (m.ok) w?.resolve(m);
      else w?.reject(new Error(m.error));
    });
    child.on('exit', (code) => {
      for (const w of waiting.values()) w.reject(new Error(`fake worker exited (${code})`));
      waiting.clear();
    });
    const call = (msg) =>
      new Promise((resolve, reject) => {
        const id = ++seq;
        waiting.set(id, { resolve, reject });
        child.send({ seq: id, ...msg });
      });
    return { child, call };
  });
  const all = (msg) => Promise.all(workers.map((w, i) => w.call(typeof msg === 'function' ? msg(i) : msg)));
  return {
    where: `in ${procs} forked fake-computer process${procs === 1 ? '' : 'es'}`,
    forked: true,
    link: (url, ids) => all((i) => ({ cmd: 'link', url, ids: ids.filter((_, j) => j % procs === i) })),
    cpuMicros: async () => (await all({ cmd: 'cpu' })).reduce((sum, m) => sum + m.cpu.user + m.cpu.system, 0),
    close: () => all({ cmd: 'close' }),
    kill: () => workers.forEach((w) => w.child.kill('SIGKILL')),
  };
}

// ---------------------------------------------------------------------------------------------
// The bridge child process.

// Preloaded into the bridge: answers memory questions over the IPC channel (after a forced GC), so
// heap numbers come from the bridge itself. It does not touch the bridge's own code.
const PRELOAD = `
if (process.send) {
  process.on('message', (m) => {
    if (!m || !m.benchMemory) return;
    if (globalThis.gc) { globalThis.gc(); globalThis.gc(); }
    const u = process.memoryUsage();
    process.send({ benchMemory: m.benchMemory, rss: u.rss, heapUsed: u.heapUsed, heapTotal: u.heapTotal, external: u.external });
  });
  process.channel && process.channel.unref();
}`;
const canPreload = process.allowedNodeEnvironmentFlags.has('--import');

const children = new Set();

function startBridge({ cpuProfDir, stderrLines }) {
  const nodeArgs = [];
  if (canPreload) nodeArgs.push('--expose-gc', `--import=data:text/javascript,${encodeURIComponent(PRELOAD)}`);
  if (cpuProfDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`);
  const child = spawn(process.execPath, [...nodeArgs, BRIDGE], {
    env: {
      ...process.env,
      MCP_HOST: '127.0.0.1',
      MCP_PORT: '0',
      CC_LINK_HOST: '127.0.0.1',
      CC_LINK_PORT: '0',
      LOG_LEVEL: 'warn',
      CC_PROBE_TIMEOUT_MS: String(PROBE_TIMEOUT_MS),
      // One computer answering thousands of calls a second sends more than the default 1 MiB/s of
      // frames (each counts at least 256 B): the link throttle then pauses its reading and the cells
      // measure the throttle (p99 ~600 ms at C=10/100). The bench measures per-call cost, so lift it.
      CC_LINK_MAX_BYTES_PER_S: String(LINK_BYTES_PER_S),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  exited.then(() => children.delete(child));
  let partial = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      // identical lines (a warning per call, say) are forwarded once and counted
      const key = line.replace(/^\(node:\d+\) /, '').replace(/^\S+Z (?=(debug|info|warn|error) )/, '');
      const seen = stderrLines.find((l) => l.line === key);
      if (seen) seen.count++;
      else {
        stderrLines.push({ line: key, count: 1 });
        process.stderr.write(`[bridge] ${line}\n`);
      }
    }
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('the bridge printed no startup lines within 10 s')), 10_000);
    const fail = (err) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const mcp = /^MCP endpoint: (http:\/\/\S+)/m.exec(out);
      const link = /^Computer link: (ws:\/\/\S+)/m.exec(out);
      if (mcp && link) {
        clearTimeout(timer);
        const mcpUrl = new URL(mcp[1]);
        resolve({ child, exited, mcpUrl, port: Number(mcpUrl.port), linkUrl: link[1] });
      }
    });
    exited.then(({ code, signal }) => fail(new Error(`the bridge exited during startup (${signal ?? code}): ${stderrLines.map((l) => l.line).join(' | ')}`)));
  });
}

async function stopBridge(bridge) {
  if (bridge.child.exitCode !== null || bridge.child.signalCode !== null) return;
  bridge.child.kill('SIGTERM');
  const killer = setTimeout(() => bridge.child.kill('SIGKILL'), 7000);
  await bridge.exited;
  clearTimeout(killer);
}

let memorySeq = 0;
/** Bridge memory after a forced GC: RSS from /proc (Linux) or the bridge's own report; heapUsed. */
async function bridgeMemory(bridge) {
  let report = null;
  if (canPreload && bridge.child.connected) {
    const id = ++memorySeq;
    report = await new Promise((resolve) => {
      const timer = setTimeout(() => done(null), 5000);
      const done = (value) => {
        clearTimeout(timer);
        bridge.child.off('message', onMessage);
        resolve(value);
      };
      const onMessage = (m) => m?.benchMemory === id && done(m);
      bridge.child.on('message', onMessage);
      bridge.child.send({ benchMemory: id });
    });
  }
  let rss = report?.rss ?? null;
  try {
    rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${bridge.child.pid}/status`, 'utf8'))[1]) * 1024;
  } catch {
    // not Linux: keep the bridge's own figure
  }
  return { rss, heapUsed: report?.heapUsed ?? null };
}

/** The bridge's CPU time in microseconds (Linux /proc; null elsewhere). */
function bridgeCpuMicros(bridge) {
  try {
    const stat = readFileSync(`/proc/${bridge.child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, USER_HZ = 100
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// MCP clients.

function post(agent, port, body) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => resolve({ error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end(body);
  });
}

/** null when the answer is what a healthy bridge gives, else { kind, message }. */
function check(res, tool, n) {
  if (res.error) return { kind: 'http', message: res.error };
  if (res.status !== 200) return { kind: 'http', message: `HTTP ${res.status}: ${res.text.slice(0, 200)}` };
  let json;
  try {
    json = JSON.parse(res.text);
  } catch {
    return { kind: 'http', message: 'body is not JSON' };
  }
  if (json.error) return { kind: 'rpc', message: `${json.error.code} ${json.error.message}` };
  const result = json.result;
  if (!result || result.isError) return { kind: 'tool', message: result?.content?.[0]?.text ?? 'no result' };
  if (tool === 'probe-computers') {
    const list = result.structuredContent?.computers;
    if (!Array.isArray(list) || list.length !== n) return { kind: 'computers', message: `expected ${n} computers, got ${list?.length}` };
    const bad = list.find((c) => c.status !== 'pong');
    if (bad) return { kind: 'computers', message: `${bad.status} from ${bad.computerId}` };
  } else if (result.structuredContent?.ok !== true) {
    return { kind: 'tool', message: result.content?.[0]?.text ?? 'not ok' };
  }
  return null;
}

const percentile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] : null);
const round = (x, digits = 2) => (x === null || x === undefined ? null : Number(x.toFixed(digits)));

/**
 * One cell: C clients in a closed loop for warm-up + measured seconds. A request counts when it
 * completes inside the measured window; requests still running at its end are awaited, not counted.
 */
async function runCell({ bridge, fakes, tool, args, n, clients, seconds, warmup }) {
  const agents = Array.from({ length: clients }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cc-mcp-bridge-bench', version: '1' } },
  });
  await Promise.all(agents.map((agent) => post(agent, bridge.port, init)));

  let window = null; // [start, end] in performance.now() time once measuring
  let stop = false;
  const latencies = [];
  const errors = { http: 0, rpc: 0, tool: 0, computers: 0 };
  let firstError = null;
  const loop = async (agent) => {
    for (let id = 1; !stop; id++) {
      const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } });
      const t0 = performance.now();
      const res = await post(agent, bridge.port, body);
      const t1 = performance.now();
      if (!window || t1 < window[0] || t1 > window[1]) continue;
      latencies.push(t1 - t0);
      const problem = check(res, tool, n);
      if (problem) {
        errors[problem.kind]++;
        firstError ??= problem.message;
      }
    }
  };
  const running = agents.map(loop);
  await sleep(warmup * 1000);
  const cpu0 = { bridge: bridgeCpuMicros(bridge), bench: process.cpuUsage(), fakes: await fakes.cpuMicros() };
  const start = performance.now();
  window = [start, start + seconds * 1000];
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - start) / 1000;
  const bench = process.cpuUsage(cpu0.bench);
  const cpu1 = { bridge: bridgeCpuMicros(bridge), fakes: await fakes.cpuMicros() };
  stop = true;
  const drainStart = performance.now();
  await Promise.all(running);
  const drainMs = performance.now() - drainStart;
  for (const agent of agents) agent.destroy();

  const sorted = latencies.sort((a, b) => a - b);
  const errorCount = Object.values(errors).reduce((a, b) => a + b, 0);
  const pct = (micros) => (micros === null ? null : round((micros / 1e6 / elapsed) * 100, 0));
  return {
    tool,
    computers: n,
    clients,
    seconds: round(elapsed),
    requests: sorted.length,
    reqPerSec: round(sorted.length / elapsed, 1),
    computerRequestsPerSec: tool === 'probe-computers' ? round((sorted.length * n) / elapsed, 0) : round(sorted.length / elapsed, 1),
    p50Ms: round(percentile(sorted, 0.5)),
    p99Ms: round(percentile(sorted, 0.99)),
    maxMs: round(sorted.at(-1) ?? null),
    errors: errorCount,
    errorKinds: errors,
    firstError,
    bridgeCpuPct: cpu0.bridge === null || cpu1.bridge === null ? null : pct(cpu1.bridge - cpu0.bridge),
    benchCpuPct: pct(bench.user + bench.system),
    fakesCpuPct: fakes.forked ? pct(cpu1.fakes - cpu0.fakes) : null,
    drainMs: round(drainMs, 0),
  };
}

// ---------------------------------------------------------------------------------------------
// REST cells: the same probe-computers calls as POST /tools/probe-computers, beside the MCP ones.

function restPost(agent, port, path) {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, timeout: REQUEST_TIMEOUT_MS, headers: { 'content-length': 0 } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => resolve({ error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

/** A REST answer checked like an MCP one: 200 with the tool result as the body. */
function checkRest(res, tool, n) {
  if (res.error || res.status !== 200) return check(res, tool, n);
  try {
    return check({ status: 200, text: JSON.stringify({ result: JSON.parse(res.text) }) }, tool, n);
  } catch {
    return { kind: 'http', message: 'body is not JSON' };
  }
}

/** One REST cell, measured exactly like runCell: C closed-loop clients, warm-up, then a window. */
async function runRestCell({ bridge, fakes, n, clients, seconds, warmup }) {
  const tool = 'probe-computers';
  const agents = Array.from({ length: clients }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  let window = null;
  let stop = false;
  const latencies = [];
  const errors = { http: 0, rpc: 0, tool: 0, computers: 0 };
  let firstError = null;
  const loop = async (agent) => {
    while (!stop) {
      const t0 = performance.now();
      const res = await restPost(agent, bridge.port, `/tools/${tool}`);
      const t1 = performance.now();
      if (!window || t1 < window[0] || t1 > window[1]) continue;
      latencies.push(t1 - t0);
      const problem = checkRest(res, tool, n);
      if (problem) {
        errors[problem.kind]++;
        firstError ??= problem.message;
      }
    }
  };
  const running = agents.map(loop);
  await sleep(warmup * 1000);
  const cpu0 = { bridge: bridgeCpuMicros(bridge), bench: process.cpuUsage(), fakes: await fakes.cpuMicros() };
  const start = performance.now();
  window = [start, start + seconds * 1000];
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - start) / 1000;
  const bench = process.cpuUsage(cpu0.bench);
  const cpu1 = { bridge: bridgeCpuMicros(bridge), fakes: await fakes.cpuMicros() };
  stop = true;
  const drainStart = performance.now();
  await Promise.all(running);
  const drainMs = performance.now() - drainStart;
  for (const agent of agents) agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const pct = (micros) => (micros === null ? null : round((micros / 1e6 / elapsed) * 100, 0));
  return {
    tool: `REST ${tool}`,
    computers: n,
    clients,
    seconds: round(elapsed),
    requests: sorted.length,
    reqPerSec: round(sorted.length / elapsed, 1),
    computerRequestsPerSec: round((sorted.length * n) / elapsed, 0),
    p50Ms: round(percentile(sorted, 0.5)),
    p99Ms: round(percentile(sorted, 0.99)),
    maxMs: round(sorted.at(-1) ?? null),
    errors: Object.values(errors).reduce((a, b) => a + b, 0),
    errorKinds: errors,
    firstError,
    bridgeCpuPct: cpu0.bridge === null || cpu1.bridge === null ? null : pct(cpu1.bridge - cpu0.bridge),
    benchCpuPct: pct(bench.user + bench.system),
    fakesCpuPct: fakes.forked ? pct(cpu1.fakes - cpu0.fakes) : null,
    drainMs: round(drainMs, 0),
  };
}

/** REST beside MCP for probe-computers: latency and the bridge's CPU time per call. */
function restComparison(cells) {
  const perCall = (c) => (c.bridgeCpuPct === null || !c.reqPerSec ? null : round((c.bridgeCpuPct * 10) / c.reqPerSec, 3));
  const rows = [];
  for (const rest of cells.filter((c) => c.tool === 'REST probe-computers')) {
    const mcp = cells.find((c) => c.tool === 'probe-computers' && c.computers === rest.computers && c.clients === rest.clients);
    rows.push([rest.computers, rest.clients, mcp?.reqPerSec, rest.reqPerSec, mcp?.p99Ms, rest.p99Ms, mcp && perCall(mcp), perCall(rest)]);
  }
  if (!rows.length) return [];
  return [
    '',
    'REST vs MCP (probe-computers; CPU ms/call = bridge CPU time per completed call)',
    table(['N', 'C', 'MCP req/s', 'REST req/s', 'MCP p99 ms', 'REST p99 ms', 'MCP CPU ms/call', 'REST CPU ms/call'], rows),
  ];
}

function getHealth(bridge) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: bridge.port, path: '/health', timeout: 5000 }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c) => (text += c));
        res.on('end', () => resolve(JSON.parse(text)));
      })
      .on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// Output.

const mib = (bytes) => (bytes === null ? 'n/a' : `${(bytes / 1048576).toFixed(1)} MiB`);
const kib = (bytes) => (bytes === null ? 'n/a' : `${(bytes / 1024).toFixed(1)} KiB`);

function table(headers, rows) {
  const cells = rows.map((r) => r.map((v) => (v === null || v === undefined ? 'n/a' : String(v))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r) => r.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

function printReport(report) {
  const m = report.meta;
  const out = [];
  out.push(`cc-mcp-bridge ${m.version} benchmark: node ${m.node}, ${m.platform}, ${m.cpus} CPU(s) (${m.cpuModel})`);
  out.push(`bridge: fresh \`node dist/index.js\` child per N, everything on 127.0.0.1, CC_PROBE_TIMEOUT_MS=${m.probeTimeoutMs}, CC_LINK_MAX_BYTES_PER_S=${LINK_BYTES_PER_S} (the link throttle lifted)`);
  out.push(`fake computers: ${m.fakesRun}; MCP clients: the bench process, one keep-alive connection each`);
  out.push(`the bridge, the clients and the fakes share ${m.cpus} CPU(s): "bench CPU" shows whether the load generator kept up`);
  out.push(`cells: ${m.seconds} s measured after ${m.warmupSeconds} s warm-up; latency = one tools/call round trip over HTTP`);
  out.push('');
  out.push('Bridge memory (after a forced GC; per computer = (linked - before) / N)');
  out.push(
    table(
      ['N', 'RSS before', 'RSS linked', 'RSS after load', 'RSS/computer', 'heap before', 'heap linked', 'heap/computer'],
      report.memory.map((r) => [
        r.computers,
        mib(r.before.rss),
        mib(r.linked.rss),
        mib(r.afterLoad.rss),
        r.computers < 100 ? 'noise' : kib(r.rssPerComputer),
        mib(r.before.heapUsed),
        mib(r.linked.heapUsed),
        r.computers < 100 ? 'noise' : kib(r.heapPerComputer),
      ]),
    ),
  );
  out.push('');
  out.push('Throughput (tools/call; "link req/s" = requests to computers per second; CPU = % of one core)');
  out.push(
    table(
      ['tool', 'N', 'C', 'requests', 'req/s', 'link req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'bridge CPU', 'bench CPU', ...(m.fakeProcs ? ['fakes CPU'] : [])],
      report.cells.map((c) => [
        c.tool,
        c.computers,
        c.clients,
        c.requests,
        c.reqPerSec,
        c.computerRequestsPerSec,
        c.p50Ms,
        c.p99Ms,
        c.maxMs,
        c.errors,
        c.bridgeCpuPct === null ? null : `${c.bridgeCpuPct}%`,
        `${c.benchCpuPct}%`,
        ...(m.fakeProcs ? [`${c.fakesCpuPct}%`] : []),
      ]),
    ),
  );
  for (const c of report.cells) if (c.firstError) out.push(`  ${c.tool} N=${c.computers} C=${c.clients}: first error: ${c.firstError}`);
  out.push(...restComparison(report.cells));
  for (const w of report.warnings) out.push(`warning: ${w}`);
  if (report.bridgeStderr.length) out.push('bridge stderr (distinct lines, with how often each was printed):');
  for (const { line, count } of report.bridgeStderr) out.push(`  ${String(count).padStart(6)} x ${line}`);
  out.push('');
  process.stdout.write(out.join('\n') + '\n');
}

// ---------------------------------------------------------------------------------------------
// Main.

function openFilesLimit() {
  try {
    return Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))[1]);
  } catch {
    return null;
  }
}

const list = (s) => s.split(',').map((x) => Number(x.trim())).filter((x) => Number.isInteger(x) && x > 0);

async function main() {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      computers: { type: 'string' },
      clients: { type: 'string' },
      'fake-procs': { type: 'string', default: '0' },
      'cpu-prof': { type: 'string' },
      'no-upstream': { type: 'boolean', default: false },
    },
  });
  const quick = values.quick;
  const seconds = values.seconds ? Number(values.seconds) : quick ? 0.5 : 3;
  if (!(seconds > 0 && seconds <= 60)) throw new Error('--seconds must be > 0 and <= 60');
  const warmup = quick ? 0.2 : Math.min(0.5, seconds / 2);
  const ns = values.computers ? list(values.computers) : quick ? [1, 100] : [1, 100, 1000];
  const cs = values.clients ? list(values.clients) : quick ? [1, 10] : [1, 10, 100];
  const execCells = (quick ? [1] : [1, 100]).filter((n) => ns.includes(n)); // exec-lua at C=10, computerId 1
  const fakeProcs = Number(values['fake-procs']);
  if (!Number.isInteger(fakeProcs) || fakeProcs < 0 || fakeProcs > 16) throw new Error('--fake-procs must be 0..16');
  const log = (line) => !values.json && process.stderr.write(`${line}\n`);

  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
  const warnings = [];
  const limit = openFilesLimit();
  const needed = Math.max(...ns) * (fakeProcs ? 1 : 2) + Math.max(...cs) + 64;
  if (limit !== null && limit < needed) {
    warnings.push(`open-files limit is ${limit}; N=${Math.max(...ns)} needs about ${needed} (raise it with ulimit -n)`);
  }
  if (!canPreload) warnings.push('this Node has no --import: heap figures are unavailable');

  const fakes = createFakeHost(fakeProcs);
  cleanups.push(() => fakes.kill());
  const stderrLines = [];
  const report = {
    meta: {
      version,
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: os.availableParallelism?.() ?? os.cpus().length,
      cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown',
      seconds,
      warmupSeconds: warmup,
      probeTimeoutMs: PROBE_TIMEOUT_MS,
      fakeProcs,
      fakesRun: fakes.where,
      computers: ns,
      clients: cs,
      startedAt: new Date().toISOString(),
    },
    memory: [],
    cells: [],
    warnings,
    bridgeStderr: stderrLines,
  };

  for (const n of ns) {
    log(`N=${n}: starting the bridge`);
    const bridge = await startBridge({ cpuProfDir: values['cpu-prof'], stderrLines });
    cleanups.push(() => bridge.child.kill('SIGKILL'));
    try {
      const before = await bridgeMemory(bridge);
      const t0 = performance.now();
      await fakes.link(bridge.linkUrl, Array.from({ length: n }, (_, i) => i + 1));
      const linkMs = performance.now() - t0;
      const linkedCount = (await getHealth(bridge)).computers;
      if (linkedCount !== n) throw new Error(`expected ${n} linked computers, /health says ${linkedCount}`);
      const linked = await bridgeMemory(bridge);
      log(`N=${n}: linked in ${Math.round(linkMs)} ms`);
      for (const c of cs) {
        log(`N=${n}: probe-computers with C=${c}`);
        report.cells.push(await runCell({ bridge, fakes, tool: 'probe-computers', args: {}, n, clients: c, seconds, warmup }));
      }
      if (n === 1) {
        for (const c of cs) {
          log(`N=${n}: REST POST /tools/probe-computers with C=${c}`);
          report.cells.push(await runRestCell({ bridge, fakes, n, clients: c, seconds, warmup }));
        }
      }
      if (execCells.includes(n)) {
        log(`N=${n}: exec-lua with C=10`);
        const args = { computerId: 1, code: 'return' };
        report.cells.push(await runCell({ bridge, fakes, tool: 'exec-lua', args, n, clients: 10, seconds, warmup }));
      }
      const afterLoad = await bridgeMemory(bridge);
      const per = (key) => (linked[key] === null || before[key] === null ? null : Math.round((linked[key] - before[key]) / n));
      report.memory.push({ computers: n, linkMs: Math.round(linkMs), before, linked, afterLoad, rssPerComputer: per('rss'), heapPerComputer: per('heapUsed') });
    } finally {
      await fakes.close();
      await stopBridge(bridge);
    }
  }
  // the upstream cell (scripts/bench-upstream.js): a stdio MCP server straight vs through the bridge
  if (!values['no-upstream']) report.upstream = await benchUpstream({ seconds, clients: quick ? [1, 10] : [1, 10, 100], log });
  report.meta.finishedAt = new Date().toISOString();
  if (!values.json) printReport(report);
  if (!values.json && report.upstream) process.stdout.write(`\n${formatUpstream(report.upstream)}`);
  process.stdout.write(JSON.stringify(report, null, values.json ? 2 : 0) + '\n');
}

// Children die with us, whatever the reason.
const cleanups = [];
function cleanup() {
  for (const fn of cleanups.splice(0)) {
    try {
      fn();
    } catch {
      // already gone
    }
  }
  for (const child of children) child.kill('SIGKILL');
}
process.on('exit', cleanup);

const USAGE = `Usage: npm run bench -- [options]     (or: node scripts/bench.js [options])
  --seconds S      measured seconds per cell (default 3)
  --quick          small matrix for smoke checks
  --json           print only the JSON document
  --computers LIST N values, e.g. 1,100,1000
  --clients LIST   C values, e.g. 1,10,100
  --fake-procs K   run the fake computers in K forked processes (0 to 16)
  --cpu-prof DIR   start the bridge with --cpu-prof and write its profiles to DIR
  --no-upstream    skip the upstream cell
Usage: npm run bench -- --compare [options]   ours against the minimal bridge, interleaved
  --quick          fewer, shorter rounds and 2,000 idle links
  --seconds S      measured seconds per cell (default 3)
  --warmup S       warm-up seconds per cell, 0 to 60 (default 0.5)
  --rounds R       interleaved rounds (default 3)
  --links K        idle links for the memory and one-probe cells (default 10000)
  --cells LIST     only these cells, e.g. probe1,upstream
  --baseline FILE  another build's dist/index.js instead of the minimal bridge (A/B)
  --cpu-prof DIR   each bridge writes its CPU profiles to DIR/<its name>
  --json           print only the JSON document
`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
} else if (process.argv.includes('--fake-worker')) {
  runFakeWorker();
} else if (process.argv.includes('--compare')) {
  const { runCompare, killCompareChildren } = await import('./bench-compare.js');
  cleanups.push(killCompareChildren);
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  setTimeout(() => {
    process.stderr.write('bench --compare: still running after 6 min; giving up\n');
    process.exit(1);
  }, HARD_DEADLINE_MS).unref();
  runCompare(process.argv.slice(2).filter((a) => a !== '--compare')).then(
    () => process.exit(0),
    (err) => {
      // a mistyped option (node:util parseArgs) is the user's error, not the bench's: no stack
      const usage = typeof err.code === 'string' && err.code.startsWith('ERR_PARSE_ARGS');
      process.stderr.write(`bench --compare: ${usage ? `${err.message}\n${USAGE}` : `${err.stack}\n`}`);
      process.exit(usage ? 2 : 1);
    },
  );
} else {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      process.stderr.write(`bench: ${signal}; stopping the bridge\n`);
      cleanup();
      process.exit(130);
    });
  }
  const deadline = setTimeout(() => {
    process.stderr.write(`bench: still running after ${HARD_DEADLINE_MS / 1000} s; giving up\n`);
    cleanup();
    process.exit(1);
  }, HARD_DEADLINE_MS);
  deadline.unref();
  main().then(
    () => {
      cleanup();
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`bench: ${err.message}\n`);
      cleanup();
      process.exit(1);
    },
  );
}
