// `npm run bench -- --compare [--quick] [--seconds S] [--warmup S] [--rounds R] [--links K] [--cells LIST]
// [--baseline PATH] [--cpu-prof DIR] [--json]` (issue 16). --warmup: seconds of load before each cell's
// window (default 0.5; a longer one leaves less JIT compiling inside the window). --cpu-prof profiles both bridges (DIR/<name>).
// Runs our bridge (dist/index.js) and the minimal reference bridge (scripts/minimal-bridge.js)
// interleaved in rounds, the bridge pinned to core 0 and this process (load generator and fake
// computers) to core 1 where taskset exists, and prints each goal of issue 16 as a ratio to the
// minimal bridge measured in the same run. It also measures calls only our bridge can make
// (exec-lua, REST probe, an upstream echo) and prints their CPU per call as a ratio to our own probe
// at N=1 C=100 in the same run. The upstream goal's server answers from the load generator's event
// loop as the probe's fake computer does (scripts/bench-upstream-peer.js runs the clients too, their
// code warmed first as this process's is);
// `upstream-own`, the test fixture in its own process, is printed beside it as a diagnostic. `--baseline PATH` runs another build of ours (its dist/index.js, with
// package.json beside dist/) in place of the minimal bridge, with every cell, to measure a
// change against the commit before it. Reported, never asserted. Loopback only, bounded.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { ECHO, INIT, drive, echoProblem, post, resultOf, sleep, warmClients } from './bench-load.js';

const OURS = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const MINIMAL = fileURLToPath(new URL('./minimal-bridge.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../test/fixtures/mcp-stdio-server.js', import.meta.url));
const PEER = fileURLToPath(new URL('./bench-upstream-peer.js', import.meta.url));
const PROBE_TIMEOUT_MS = 20_000;
/**
 * Seconds of warming the HTTP clients against a server of their own (warmClients, bench-load.js):
 * the upstream peer's before it reports (scripts/bench-upstream-peer.js; a fresh process per cell)
 * and this process's before the first round (else the first cell's load generator is colder than
 * every later one's). Cold, the peer's clients cost the load core ~10 us more per call than this
 * process's warm ones, calls reached the bridge slower, and the bridge paid for that (README,
 * Benchmark, the upstream cell's load side). 1 s was as good as 2 and 4 s.
 */
const WARM_CLIENTS_S = 2;
const PRELOAD = `if (process.send) { process.on('message', (m) => { if (!m || !m.gcNow) return; globalThis.gc && (globalThis.gc(), globalThis.gc()); process.send({ gcDone: m.gcNow }); }); process.channel && process.channel.unref(); }`;

const hasTaskset = process.platform === 'linux' && spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2;
const children = new Set();

function startBridge(kind, extraEnv = {}) {
  const t0 = performance.now();
  const prof = kind.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${kind.cpuProfDir}`] : [];
  // --trace-gc-nvp: every GC prints the bytes allocated since the one before; their sum over a cell's
  // window, per call, is the bridge's allocation per call (independent of the machine's load)
  const args = ['--expose-gc', '--trace-gc-nvp', ...prof, `--import=data:text/javascript,${encodeURIComponent(PRELOAD)}`, kind.script];
  const cmd = hasTaskset ? 'taskset' : process.execPath;
  const argv = hasTaskset ? ['-c', '0', process.execPath, ...args] : args;
  const child = spawn(cmd, argv, {
    env: {
      ...process.env,
      MCP_HOST: '127.0.0.1',
      MCP_PORT: '0',
      CC_LINK_HOST: '127.0.0.1',
      CC_LINK_PORT: '0',
      LOG_LEVEL: 'error',
      CC_PROBE_TIMEOUT_MS: String(PROBE_TIMEOUT_MS),
      CC_MAX_LINKS: '100000',
      CC_MAX_LINKS_PER_ADDRESS: '100000',
      CC_HELLO_RATE: '100000',
      CC_MAX_PENDING_HELLOS: '100000',
      CC_MAX_PENDING_HELLOS_PER_ADDRESS: '100000',
      CC_MAX_REQUESTS_PER_COMPUTER: '100000',
      MCP_MAX_CONCURRENT_CALLS: '100000',
      // one computer probed thousands of times a second sends more than the default 1 MiB/s of pong
      // frames (each counts at least 256 B); the throttle then pauses its reading and p99 goes to
      // hundreds of ms. The comparison is about per-call cost, so the rate limit is lifted here.
      CC_LINK_MAX_BYTES_PER_S: String(1024 ** 3),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  children.add(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  exited.then(() => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    let partial = '';
    let bridge = null;
    const timer = setTimeout(() => reject(new Error(`${kind.name}: no startup lines within 10 s`)), 10_000);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        const allocated = / allocated=(\d+)/.exec(line);
        if (allocated) {
          if (bridge) bridge.allocated += Number(allocated[1]);
        } else if (!bridge) out += `${line}\n`;
      }
      if (bridge) return;
      const mcp = /^MCP endpoint: (http:\/\/\S+)/m.exec(out);
      const link = /^Computer link: (ws:\/\/\S+)/m.exec(out);
      if (mcp && link) {
        clearTimeout(timer);
        bridge = { kind, child, exited, startMs: performance.now() - t0, port: Number(new URL(mcp[1]).port), linkUrl: link[1], allocated: 0 };
        resolve(bridge);
      }
    });
    exited.then((code) => reject(new Error(`${kind.name} exited during startup (${code})`)));
  });
}

async function stopBridge(b) {
  if (b.child.exitCode !== null || b.child.signalCode !== null) return;
  b.child.kill('SIGTERM');
  const killer = setTimeout(() => b.child.kill('SIGKILL'), 5000);
  await b.exited;
  clearTimeout(killer);
}

function cpuMicros(b) {
  const stat = readFileSync(`/proc/${b.child.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
}

/**
 * Where the bridge's CPU went and how often it slept: user and system time (all threads, us), and
 * its main thread's CPU time (us) and voluntary context switches (each one a sleep waiting for I/O,
 * then a wake-up), and the process's read and write syscalls. Diagnostics printed beside the cells,
 * not goals.
 */
function cpuDetail(b) {
  const pid = b.child.pid;
  const fields = (file) => {
    const stat = readFileSync(file, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  const all = fields(`/proc/${pid}/stat`);
  const main = fields(`/proc/${pid}/task/${pid}/stat`);
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const tick = 1e6 / 100;
  // read and write syscalls of the whole process (/proc/<pid>/io; 0 where it cannot be read)
  let io = '';
  try {
    io = readFileSync(`/proc/${pid}/io`, 'utf8');
  } catch {
    // not readable here
  }
  const count = (re, text) => Number(re.exec(text)?.[1] ?? 0);
  return { user: Number(all[11]) * tick, sys: Number(all[12]) * tick, main: (Number(main[11]) + Number(main[12])) * tick, sleeps: count(/^voluntary_ctxt_switches:\s+(\d+)/m, status), reads: count(/^syscr:\s+(\d+)/m, io), writes: count(/^syscw:\s+(\d+)/m, io), load: loadMicros(b) };
}

/**
 * CPU (us, all threads) of what runs on the load core for a cell: this process (the HTTP clients and
 * the fake computers, or only the peer's control socket) and the bridge's child processes (its
 * upstream stdio server: the peer that runs the clients, or the fixture). A bridge's CPU per call
 * depends on how fast calls arrive (fewer calls per wake-up when they come slower), and that rate is
 * set by the load core: this shows whether two cells load it alike. 0 where /proc cannot be read.
 */
function loadMicros(b) {
  const own = process.cpuUsage();
  let micros = own.user + own.system;
  let children = '';
  try {
    children = readFileSync(`/proc/${b.child.pid}/task/${b.child.pid}/children`, 'utf8');
  } catch {
    // no children file here
  }
  for (const pid of children.split(' ').filter(Boolean)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      micros += ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
    } catch {
      // gone
    }
  }
  return micros;
}

let gcSeq = 0;
async function rssAfterGc(b) {
  const id = ++gcSeq;
  await new Promise((resolve) => {
    const timer = setTimeout(done, 5000);
    function done() {
      clearTimeout(timer);
      b.child.off('message', on);
      resolve();
    }
    const on = (m) => m?.gcDone === id && done();
    b.child.on('message', on);
    b.child.send({ gcNow: id });
  });
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${b.child.pid}/status`, 'utf8'))[1]) * 1024;
}

/**
 * RSS after GC once the bridge has settled. The burst of handshakes grows V8's young generation (by
 * ~25 MB for 10,000 links, the same in both bridges); V8 gives it back at the first GC after its
 * allocation rate has been low for about 5 s. Sampled every second until two samples agree (at least
 * 7 s, at most 15 s), so the figure is what idle links keep, not what linking them needed.
 */
async function settledRss(b) {
  const t0 = performance.now();
  let prev = null;
  for (;;) {
    await sleep(1000);
    const rss = await rssAfterGc(b);
    const elapsed = performance.now() - t0;
    if ((prev !== null && elapsed >= 7000 && Math.abs(rss - prev) <= prev * 0.005) || elapsed >= 15_000) return rss;
    prev = rss;
  }
}

/**
 * The exec-lua answer's result as JSON, written once. A fake computer writes every answer the same way
 * whatever was asked: its result's JSON, written once, spliced into the frame after the id (the bytes
 * are what JSON.stringify of the answer object wrote before). Stringifying the answer object per request
 * cost the load core 5.3k more instructions for an exec-lua answer (a result object with an array) than
 * for a ping's (a string): 16.5k against 11.2k per answer (callgrind, node 20); spliced, 9.5k against
 * 6.9k, the rest being exec-lua's longer request to parse. The load core bounds these cells, and the
 * bridge's CPU per call rises as its load side slows, so the exec-lua cell was measured against a
 * slower load side than the probe it is compared with.
 */
const EXEC_RESULT_JSON = JSON.stringify({ returns: [], output: '', truncated: false });

function linkFake(url, computerId) {
  return new Promise((resolve, reject) => {
    const pong = `pong from ${computerId} (Label: bench-${computerId})`;
    const pongJson = JSON.stringify(pong);
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on('open', () => ws.send(JSON.stringify({ type: 'hello', computerId, computerLabel: `bench-${computerId}`, version: 'bench' })));
    ws.on('error', reject);
    ws.on('message', (data) => {
      const f = JSON.parse(data.toString());
      if (f.type === 'request') ws.send(`{"type":"response","id":${JSON.stringify(f.id)},"ok":true,"result":${f.method === 'exec-lua' ? EXEC_RESULT_JSON : pongJson}}`);
      else if (f.type === 'hello-ok') resolve(ws);
      else if (f.type === 'hello-error') reject(new Error(`hello-error ${f.error}`));
    });
  });
}

async function linkFakes(url, n) {
  const sockets = [];
  let next = 1;
  const worker = async () => {
    while (next <= n) sockets.push(await linkFake(url, next++));
  };
  await Promise.all(Array.from({ length: Math.min(64, n) }, worker));
  return sockets;
}

/** null when a probe answer lists n pongs, else what is wrong. */
function probeProblem(result, n) {
  if (typeof result === 'string') return result;
  const list = result.structuredContent?.computers;
  if (!Array.isArray(list) || list.length !== n) return `expected ${n} computers, got ${list?.length}`;
  const bad = list.find((c) => c.status !== 'pong');
  return bad ? `${bad.status} from ${bad.computerId}` : null;
}

const PROBE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } });
/** A bridge's answer to PROBE with one computer linked (for warmClients). */
const PROBE_ANSWER = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'pong from 1 (Label: bench-1)' }], structuredContent: { computers: [{ computerId: 1, label: 'bench-1', ms: 1, status: 'pong', result: 'pong from 1 (Label: bench-1)' }] } } });
const EXEC = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code: 'return' } } });

// The cells. `both`: measured on our bridge and the other one (the minimal bridge does only
// probe-computers); the rest on ours only (and on a --baseline build of ours), each as a ratio to our
// probe at N=1 C=100 in the same run (issue 16: no more CPU per call than that probe).
const CELLS = [
  { id: 'probe1', key: 'N=1 C=100', n: 1, c: 100, both: true, call: (a, port) => post(a, port, PROBE), check: (res) => probeProblem(resultOf(res), 1) },
  { id: 'probe100', key: 'N=100 C=10', n: 100, c: 10, both: true, call: (a, port) => post(a, port, PROBE), check: (res) => probeProblem(resultOf(res), 100) },
  {
    id: 'exec',
    key: 'exec-lua N=1 C=100',
    n: 1,
    c: 100,
    call: (a, port) => post(a, port, EXEC),
    check: (res) => {
      const r = resultOf(res);
      return typeof r === 'string' ? r : r.structuredContent?.ok === true ? null : `not ok: ${r.content?.[0]?.text}`;
    },
  },
  { id: 'rest', key: 'REST probe N=1 C=100', n: 1, c: 100, rest: true, call: (a, port) => post(a, port, '', '/tools/probe-computers', {}), check: (res) => probeProblem(resultOf(res, true), 1) },
  // the upstream server answers from the load generator's event loop, as the probe's fake computer
  // does (scripts/bench-upstream-peer.js runs the HTTP clients too): the goal's cell
  { id: 'upstream', key: 'upstream echo C=100', n: 0, c: 100, upstream: 'peer', call: (a, port) => post(a, port, ECHO), check: echoProblem },
  // the test fixture in its own process on the load core, the HTTP clients here: how a real stdio
  // server is run, but unlike the probe's computer it wakes the bridge apart from the clients
  // (diagnostic row, not the goal; README, Benchmark)
  { id: 'upstream-own', key: 'upstream echo C=100, server in its own process', n: 0, c: 100, upstream: 'fixture', diagnostic: true, call: (a, port) => post(a, port, ECHO), check: echoProblem },
];
const EXTRA = ['links', 'start'];

/** What a cell's window is measured against: the bridge's CPU, its detail and its allocations. */
function snapshot(b) {
  return { cpu: cpuMicros(b), detail: cpuDetail(b), allocated: b.allocated };
}

function measured(m, s0, s1) {
  const detail = Object.fromEntries(Object.keys(s0.detail).map((k) => [k, s1.detail[k] - s0.detail[k]]));
  return { ...m, cpu: s1.cpu - s0.cpu, detail, allocated: s1.allocated - s0.allocated };
}

/** C closed-loop clients; returns the latencies, call count and bridge CPU inside the window. */
async function load(b, cell, seconds, warmup) {
  let s0 = null;
  let s1 = null;
  const m = await drive({ port: b.port, c: cell.c, init: !cell.rest, call: cell.call, check: cell.check, seconds, warmup, atStart: () => (s0 = snapshot(b)), atEnd: () => (s1 = snapshot(b)) });
  return measured(m, s0, s1);
}

/**
 * The same load run by the upstream server itself (scripts/bench-upstream-peer.js, connected to the
 * control socket): it asks for the window's start and end, and the bridge is read here then.
 */
function peerLoad(b, peer, cell, seconds, warmup) {
  return new Promise((resolve, reject) => {
    let s0 = null;
    let s1 = null;
    const timer = setTimeout(() => reject(new Error('upstream peer: no result within 60 s')), 60_000);
    peer.on = (m) => {
      if (m.window === 'start') s0 = snapshot(b);
      else if (m.window === 'end') s1 = snapshot(b);
      if (m.window) peer.say({ ack: true });
      else if (m.done) {
        clearTimeout(timer);
        resolve(measured(m.done, s0, s1));
      } else if (m.failed) {
        clearTimeout(timer);
        reject(new Error(`upstream peer: ${m.failed}`));
      }
    };
    peer.say({ run: { port: b.port, c: cell.c, seconds, warmup } });
  });
}

/**
 * The control socket the upstream peers connect to (one per bridge of the `upstream` cell);
 * `next()` is the next one to connect, as { say(message), on(message) }.
 */
function peerControl(dir) {
  const file = path.join(dir, 'peer.sock');
  const waiting = [];
  const server = net.createServer((socket) => {
    socket.setEncoding('utf8');
    const peer = { say: (m) => socket.write(JSON.stringify(m) + '\n'), on: () => {} };
    let partial = '';
    let greeted = false;
    socket.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        const m = JSON.parse(line);
        if (!greeted && m.hello) {
          greeted = true;
          waiting.shift()?.(peer);
        } else peer.on(m);
      }
    });
    socket.on('error', () => {});
  });
  const listening = new Promise((resolve) => server.listen(file, resolve));
  return {
    file,
    listening,
    next: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('upstream peer: no control connection within 20 s')), 20_000);
        waiting.push((peer) => {
          clearTimeout(timer);
          resolve(peer);
        });
      }),
    close: () => server.close(),
  };
}

/**
 * A bridge config with one stdio upstream server pinned to the load core: the test fixture, or
 * (`peer`) the bench's own server that also runs the load (BENCH_PEER_CONTROL: its control socket).
 */
function upstreamConfig(dir, kind, control) {
  const file = path.join(dir, 'bridge.json');
  const script = kind === 'peer' ? PEER : FIXTURE;
  const command = hasTaskset ? 'taskset' : process.execPath;
  const args = hasTaskset ? ['-c', '1', process.execPath, script] : [script];
  const env = kind === 'peer' ? { BENCH_PEER_CONTROL: control, BENCH_PEER_WARM_S: String(WARM_CLIENTS_S) } : {};
  writeFileSync(file, JSON.stringify({ servers: [{ id: 'fx', command, args, env }] }));
  return file;
}

/**
 * GET /health on a connection closed at once. fetch keeps its connection open and closes it ~3 s
 * later, inside the upstream cell's window: that EOF deoptimized node's stream functions mid-window
 * (perf-up, a3401d7), in this cell only, since only it polls /health before measuring.
 */
function healthOf(port) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function upstreamUp(b) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const health = await healthOf(b.port);
    if (health.servers?.[0]?.state === 'up') return;
    if (Date.now() > deadline) throw new Error(`upstream not up: ${JSON.stringify(health)}`);
    await sleep(50);
  }
}

const pct = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
const r1 = (x) => (x === null || x === undefined || Number.isNaN(x) ? null : Number(x.toFixed(x >= 100 ? 0 : 2)));
/** A ratio as printed: `1.23x`, or `n/a` when it could not be taken (a cell not run, e.g. `--cells` without probe1). */
export const times = (x) => (r1(x) === null ? 'n/a' : `${r1(x)}x`);

async function withBridge(kind, fn, extraEnv) {
  const b = await startBridge(kind, extraEnv);
  try {
    return await fn(b);
  } finally {
    await stopBridge(b);
  }
}

function table(headers, rows) {
  const cells = rows.map((r) => r.map((v) => (v === null || v === undefined ? 'n/a' : String(v))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r) => r.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export async function runCompare(argv) {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      links: { type: 'string' },
      cells: { type: 'string' },
      baseline: { type: 'string' },
      'cpu-prof': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const quick = !!values.quick;
  const seconds = Number(values.seconds ?? (quick ? 1 : 3));
  const rounds = Number(values.rounds ?? (quick ? 2 : 3));
  const idle = Number(values.links ?? (quick ? 2000 : 10000));
  const warmup = Number(values.warmup ?? (quick ? 0.3 : 0.5));
  if (!(warmup >= 0 && warmup <= 60)) throw new Error(`--warmup: seconds from 0 to 60, not ${values.warmup}`);
  const known = [...CELLS.map((c) => c.id), ...EXTRA];
  const wanted = values.cells ? String(values.cells).split(',').map((s) => s.trim()) : known;
  const unknown = wanted.filter((id) => !known.includes(id));
  if (unknown.length) throw new Error(`--cells: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  const baseline = typeof values.baseline === 'string' ? path.resolve(values.baseline) : null;
  // --cpu-prof DIR: each bridge writes its profiles to DIR/<its name>
  const profDir = (name) => (typeof values['cpu-prof'] === 'string' ? path.join(path.resolve(values['cpu-prof']), name) : null);
  const other = baseline ? { name: 'baseline', script: baseline, full: true, cpuProfDir: profDir('baseline') } : { name: 'minimal', script: MINIMAL, full: false, cpuProfDir: profDir('minimal') };
  const ours = { name: 'ours', script: OURS, full: true, cpuProfDir: profDir('ours') };
  const bridges = [ours, other];
  const cells = CELLS.filter((c) => wanted.includes(c.id));
  const log = (s) => !values.json && process.stderr.write(`${s}\n`);
  if (hasTaskset) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)]);
  log(`compare: ours against ${baseline ? `the baseline ${baseline}` : 'the minimal bridge'}; ${rounds} rounds, ${seconds} s cells after ${warmup} s of warm-up, ${idle} idle links; ${hasTaskset ? 'bridge on core 0, load + fakes on core 1' : 'no taskset: not pinned'}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cc-bench-compare-'));
  const control = peerControl(dir);
  await control.listening;
  // this process's clients warmed as the upstream peer's are: else the first round's first cell
  // measures its bridge against a colder load generator than every later cell does
  if (cells.length) await warmClients(WARM_CLIENTS_S, PROBE, PROBE_ANSWER, (res) => probeProblem(resultOf(res), 1));

  const acc = {};
  const cell = (key, name) => ((acc[key] ??= {})[name] ??= { lat: [], calls: 0, cpu: 0, detail: { user: 0, sys: 0, main: 0, sleeps: 0, reads: 0, writes: 0, load: 0 }, elapsed: 0, allocated: 0, errors: 0, firstError: null, samples: [], rounds: [] });
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 ? [...bridges].reverse() : bridges;
      for (const kind of order) {
        // start time: a bare start, nothing linked
        if (wanted.includes('start')) await withBridge(kind, async (b) => cell('start', kind.name).samples.push(b.startMs));
        for (const c of cells) {
          if (!c.both && !kind.full) continue;
          log(`round ${round + 1}: ${kind.name} ${c.key}`);
          const env = c.upstream ? { CC_CONFIG: upstreamConfig(dir, c.upstream, control.file) } : {};
          const peer = c.upstream === 'peer' ? control.next() : null;
          peer?.catch(() => {});
          await withBridge(
            kind,
            async (b) => {
              if (c.upstream) await upstreamUp(b);
              const sockets = await linkFakes(b.linkUrl, c.n);
              try {
                const m = peer ? await peerLoad(b, await peer, c, seconds, warmup) : await load(b, c, seconds, warmup);
                const a = cell(c.key, kind.name);
                a.lat.push(...m.lat);
                a.calls += m.lat.length;
                a.cpu += m.cpu;
                for (const k in a.detail) a.detail[k] += m.detail[k];
                a.allocated += m.allocated;
                a.elapsed += m.elapsed;
                a.errors += m.errors;
                a.firstError ??= m.firstError;
                a.rounds.push(m.cpu / m.lat.length);
              } finally {
                for (const ws of sockets) ws.terminate();
              }
            },
            env,
          );
        }
      }
    }
    // idle links and one probe over all of them: a fresh bridge of each kind per round, the order
    // alternating between rounds (one bridge always first gave a 25% scatter between runs)
    if (wanted.includes('links')) {
      for (let round = 0; round < rounds; round++) for (const kind of round % 2 ? [...bridges].reverse() : bridges) {
        log(`round ${round + 1}: ${kind.name}: ${idle} idle links`);
        await withBridge(kind, async (b) => {
          const before = await rssAfterGc(b);
          const sockets = await linkFakes(b.linkUrl, idle);
          try {
            await sleep(500);
            const after = await rssAfterGc(b);
            cell('linksJust', kind.name).samples.push((after - before) / idle);
            // the probes run here, 0.5 s after linking, as they always did (a settled bridge has a
            // small young generation again, and a probe over 10,000 computers then pays more GC)
            const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
            await post(agent, b.port, INIT);
            for (let i = 0; i < (quick ? 2 : 3); i++) {
              const t0 = performance.now();
              const cpu0 = cpuMicros(b);
              const res = await post(agent, b.port, PROBE);
              const ms = performance.now() - t0;
              cell('probe10kCpu', kind.name).samples.push((cpuMicros(b) - cpu0) / 1000);
              const p = probeProblem(resultOf(res), idle);
              const a = cell('probe10k', kind.name);
              if (p) {
                a.errors++;
                a.firstError ??= p;
              }
              a.samples.push(ms);
            }
            agent.destroy();
          } finally {
            for (const ws of sockets) ws.terminate();
          }
        });
      }
      // settled idle links on a fresh bridge of each kind: no probe has touched them
      for (const kind of bridges) {
        log(`${kind.name}: ${idle} idle links, settled`);
        await withBridge(kind, async (b) => {
          const before = await rssAfterGc(b);
          const sockets = await linkFakes(b.linkUrl, idle);
          try {
            cell('links', kind.name).samples.push(((await settledRss(b)) - before) / idle);
          } finally {
            for (const ws of sockets) ws.terminate();
          }
        });
      }
    }
  } finally {
    control.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const median = (xs) => (xs?.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : null);
  const stats = (a) => {
    if (!a) return null;
    const sorted = a.lat.sort((x, y) => x - y);
    return { reqPerSec: a.calls / a.elapsed, p50: pct(sorted, 0.5), p99: pct(sorted, 0.99), cpuPerCall: a.cpu / a.calls, cpuPerCallByRound: a.rounds, userPerCall: a.detail.user / a.calls, sysPerCall: a.detail.sys / a.calls, mainBusy: a.detail.main / (a.elapsed * 1e6), sleepsPerCall: a.detail.sleeps / a.calls, readsPerCall: a.detail.reads / a.calls, writesPerCall: a.detail.writes / a.calls, loadPerCall: a.detail.load / a.calls, loadBusy: a.detail.load / (a.elapsed * 1e6), allocKBPerCall: a.allocated / a.calls / 1024, errors: a.errors, firstError: a.firstError };
  };
  const o2 = other.name;
  const result = { meta: { node: process.version, cpus: os.cpus().length, pinned: hasTaskset, rounds, seconds, warmup, idleLinks: idle, against: baseline ?? 'minimal' }, cells: {}, goals: [] };
  for (const c of cells) result.cells[c.key] = { ours: stats(acc[c.key]?.ours), [o2]: stats(acc[c.key]?.[o2]) };
  const pair = (o, m, f) => `${r1(o ? f(o) : null)} / ${r1(m ? f(m) : null)}`;
  const ratio = (a, b) => (a === null || a === undefined || !b ? null : a / b);
  const rows = cells
    .filter((c) => c.both || baseline)
    .map((c) => {
      const { ours: o, [o2]: m } = result.cells[c.key];
      return [c.key, pair(o, m, (x) => x.reqPerSec), pair(o, m, (x) => x.p50), pair(o, m, (x) => x.p99), pair(o, m, (x) => x.cpuPerCall), times(ratio(o?.cpuPerCall, m?.cpuPerCall)), times(ratio(o?.p99, m?.p99)), pair(o, m, (x) => x.allocKBPerCall), `${o?.errors ?? 'n/a'} / ${m?.errors ?? 'n/a'}`];
    });
  // the calls only our bridge makes, against our own probe at N=1 C=100 in the same run
  const probe1 = result.cells['N=1 C=100']?.ours ?? null;
  const probe1o = result.cells['N=1 C=100']?.[o2] ?? null;
  const callRows = [];
  for (const c of cells.filter((c) => !c.both)) {
    const o = result.cells[c.key].ours;
    const vsProbe = ratio(o?.cpuPerCall, probe1?.cpuPerCall);
    // a diagnostic row is printed beside the goals but is none (result.diagnostics in the JSON)
    const entry = { what: `CPU per call ${c.key} vs our probe N=1 C=100`, ours: o?.cpuPerCall ?? null, probe: probe1?.cpuPerCall ?? null, ratio: vsProbe, limit: 1, met: vsProbe === null ? null : vsProbe <= 1 };
    if (c.diagnostic) (result.diagnostics ??= []).push({ ...entry, limit: null, met: null });
    else result.goals.push(entry);
    const verdict = c.diagnostic ? 'diagnostic' : vsProbe === null ? 'n/a' : vsProbe <= 1 ? 'met' : 'NOT met';
    const row = [c.key, r1(o?.reqPerSec), r1(o?.p99), r1(o?.cpuPerCall), times(vsProbe), verdict, r1(o?.allocKBPerCall), o?.errors];
    if (baseline) row.splice(4, 0, times(ratio(result.cells[c.key][o2]?.cpuPerCall, probe1o?.cpuPerCall)));
    callRows.push(row);
  }
  const goal = (what, ours, minimal, unit, limit, absolute = null) => {
    const r = ratio(ours, minimal);
    const met = absolute === null ? r !== null && r <= limit : ours !== null && ours <= absolute;
    result.goals.push({ what, ours, minimal, ratio: r, limit, absolute, met });
    return [what, `${r1(ours)} ${unit}`, `${r1(minimal)} ${unit}`, times(r), absolute === null ? `<= ${limit}x` : `<= ${absolute} ${unit}`, met ? 'met' : 'NOT met'];
  };
  const c1 = result.cells['N=1 C=100'];
  const c100 = result.cells['N=100 C=10'];
  const goals = [];
  if (c1) goals.push(goal('CPU per call N=1 C=100', c1.ours?.cpuPerCall, c1[o2]?.cpuPerCall, 'us', 1.2));
  if (c100) goals.push(goal('CPU per call N=100 C=10', c100.ours?.cpuPerCall, c100[o2]?.cpuPerCall, 'us', 1.1));
  if (c1) goals.push(goal('p99 N=1 C=100', c1.ours?.p99, c1[o2]?.p99, 'ms', 1.3));
  if (acc.links) {
    goals.push(goal(`RSS growth per idle link (${idle} links, settled)`, median(acc.links.ours?.samples), median(acc.links[o2]?.samples), 'B', null, 6144));
    const just = { ours: median(acc.linksJust?.ours?.samples), other: median(acc.linksJust?.[o2]?.samples) };
    // issue 16's figure as first measured: before V8 gives back the young generation the handshakes grew
    goals.push(goal(`RSS growth per idle link (${idle} links, 0.5 s after linking)`, just.ours, just.other, 'B', null, 6144));
    goals.push(goal(`one probe over ${idle} computers`, median(acc.probe10k.ours?.samples), median(acc.probe10k[o2]?.samples), 'ms', 1));
    // the wall time above is bounded by the fake computers (one process on the load core) once a
    // bridge needs less CPU than they do; the bridge's own CPU per probe still tells the bridges apart
    result.probe10kCpuMs = { ours: median(acc.probe10kCpu?.ours?.samples), [o2]: median(acc.probe10kCpu?.[o2]?.samples) };
  }
  if (acc.start) goals.push(goal('start to both ports listening', median(acc.start.ours?.samples), median(acc.start[o2]?.samples), 'ms', 1.3));
  const p99s = [c1?.ours?.p99, c100?.ours?.p99].filter((x) => typeof x === 'number');
  const p99Max = p99s.length ? Math.max(...p99s) : null;
  if (p99Max !== null) result.goals.push({ what: 'p99 under 100 ms everywhere', ours: p99Max, met: p99Max < 100 });
  if (!values.json) {
    const out = [];
    const vs = baseline ? `ours / baseline (${baseline})` : 'ours / minimal';
    out.push(`bench --compare: node ${process.version}, ${os.cpus().length} CPU(s), ${rounds} rounds x ${seconds} s per cell after ${warmup} s of warm-up, bridges interleaved; ${hasTaskset ? 'bridge pinned to core 0, load generator and fake computers to core 1' : 'not pinned (no taskset)'}`);
    if (rows.length) {
      out.push('');
      out.push(`Cells (${vs}; probe-computers unless named; CPU = bridge utime+stime from /proc per completed call; alloc = bytes the bridge allocated per call, from --trace-gc-nvp)`);
      out.push(table(['cell', 'req/s', 'p50 ms', 'p99 ms', 'CPU us/call', 'CPU ratio', 'p99 ratio', 'alloc KB/call', 'errors'], rows));
    }
    // each round runs both bridges back to back: the ratio per round is less exposed to load that comes and goes
    for (const c of cells) {
      const a = acc[c.key]?.ours?.rounds ?? [];
      const b = acc[c.key]?.[o2]?.rounds ?? [];
      const per = a.slice(0, b.length).map((x, i) => x / b[i]);
      if (per.length > 1) out.push(`  ${c.key}: CPU ratio per round ${per.map((x) => r1(x)).join(', ')} (median ${r1(median(per))}x)`);
    }
    for (const c of cells) for (const k of ['ours', o2]) if (acc[c.key]?.[k]?.firstError) out.push(`  ${c.key} ${k}: first error: ${acc[c.key][k].firstError}`);
    for (const k of ['ours', o2]) if (acc.probe10k?.[k]?.firstError) out.push(`  probe over ${idle} ${k}: first error: ${acc.probe10k[k].firstError}`);
    if (callRows.length) {
      out.push('');
      out.push('Other calls, our bridge (CPU per call as a ratio to our probe-computers at N=1 C=100 in the same run; goal: at most 1x)');
      const head = ['cell', 'req/s', 'p99 ms', 'CPU us/call', 'vs our probe', 'goal <= 1x', 'alloc KB/call', 'errors'];
      if (baseline) head.splice(4, 0, 'baseline vs its probe');
      out.push(table(head, callRows));
      // each round runs these right after our probe: the ratio per round is less exposed to load that comes and goes
      const probeRounds = acc['N=1 C=100']?.ours?.rounds ?? [];
      for (const c of cells.filter((c) => !c.both)) {
        const per = (acc[c.key]?.ours?.rounds ?? []).slice(0, probeRounds.length).map((x, i) => x / probeRounds[i]);
        if (per.length > 1) out.push(`  ${c.key}: vs our probe per round ${per.map((x) => r1(x)).join(', ')} (median ${r1(median(per))}x)`);
      }
    }
    // why CPU per call differs between cells: a bridge that often sleeps between small batches pays a
    // wake-up, an event-loop turn and its syscalls for few calls (the upstream cell's server shares the load core)
    const details = cells.flatMap((c) => ['ours', o2].map((k) => [c, k, result.cells[c.key]?.[k]])).filter(([, , x]) => x);
    if (details.length) {
      out.push('');
      out.push('Bridge CPU detail (diagnostic): user / system us per call, main thread busy share of the window, main thread sleeps (voluntary context switches) per call, read / write syscalls per call; load side: CPU per call of the load core\'s processes (this one and the bridge\'s upstream server) and their share of one core');
      for (const [c, k, x] of details) out.push(`  ${c.key} ${k}: ${r1(x.userPerCall)} / ${r1(x.sysPerCall)} us, busy ${Math.round(x.mainBusy * 100)}%, ${x.sleepsPerCall.toFixed(2)} sleeps, ${x.readsPerCall.toFixed(2)} / ${x.writesPerCall.toFixed(2)} syscalls per call; load side ${r1(x.loadPerCall)} us per call, ${Math.round(x.loadBusy * 100)}%`);
    }
    if (goals.length) {
      out.push('');
      out.push(`Goals of issue 16 (ratio = ${vs}, same run)`);
      out.push(table(['goal', 'ours', baseline ? 'baseline' : 'minimal', 'ratio', 'goal', ''], goals));
    }
    if (result.probe10kCpuMs) {
      const { ours: o, [o2]: m } = result.probe10kCpuMs;
      out.push(`Bridge CPU per probe over ${idle} computers (diagnostic; the wall time is bounded by the fake computers): ${r1(o)} / ${r1(m)} ms (${r1(ratio(o, m))}x)`);
    }
    if (p99Max !== null) out.push(`p99 under 100 ms everywhere: ours worst ${r1(p99Max)} ms: ${p99Max < 100 ? 'met' : 'NOT met'}`);
    process.stdout.write(out.join('\n') + '\n');
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

export function killCompareChildren() {
  for (const c of children) c.kill('SIGKILL');
}
