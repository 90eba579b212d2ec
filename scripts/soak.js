#!/usr/bin/env node
// npm run soak: the bridge (dist/, as a child process) under hostile input on loopback, with
// figures. Bounded: every phase has a fixed amount of work and the whole run a hard deadline.
// Prints crashes, 5xx answers, requests answered, calls hanging past timeout + 1 s, what is left
// pending after the churn, RSS before / peak / after, /health during the run, and the latency of
// normal exec-lua calls during each attack. Exits 1 when a must-be-zero figure is not zero.
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import WebSocket from 'ws';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Computer, execResult, fiveXX, pool, request, sleep, tally } from './soak-lib.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEADLINE_MS = 285_000;
const RSS_BOUND_MB = 512;
const MCP_TOKEN = randomBytes(24).toString('hex');
const LINK_TOKEN = randomBytes(24).toString('hex');
const EXEC_TIMEOUT_MS = 1500;
const PROBE_TIMEOUT_MS = 1000;
const AUTH = { authorization: `Bearer ${MCP_TOKEN}`, 'content-type': 'application/json' };

const figures = { crashes: 0, errorLogLines: 0, hanging: 0, mismatched: { normal: 0, attacked: 0, concurrent: 0 }, healthOk: 0, healthBad: 0, phases: [] };
const started = Date.now();
const deadline = setTimeout(() => finish('the soak passed its deadline'), DEADLINE_MS);

// ---- the bridge under test --------------------------------------------------------------------
// a config file whose tool set the probe worker changes every 2 s (POST /reload) for the held event streams
const CONFIG_FILE = path.join(mkdtempSync(path.join(tmpdir(), 'cc-soak-')), 'bridge.json');
writeFileSync(CONFIG_FILE, JSON.stringify({ tools: [] }));
const env = {
  ...process.env,
  MCP_HOST: '127.0.0.1',
  MCP_PORT: '0',
  CC_LINK_HOST: '127.0.0.1',
  CC_LINK_PORT: '0',
  LOG_LEVEL: 'warn',
  MCP_AUTH_TOKEN: MCP_TOKEN,
  CC_LINK_TOKEN: LINK_TOKEN,
  CC_EXEC_TIMEOUT_MS: String(EXEC_TIMEOUT_MS),
  CC_PROBE_TIMEOUT_MS: String(PROBE_TIMEOUT_MS),
  CC_HEARTBEAT_MS: '5000',
  // the 2,000-call phase is meant to be answered, not refused: room above it
  MCP_MAX_CONCURRENT_CALLS: '2500',
  CC_MAX_REQUESTS_PER_COMPUTER: '2500',
  CC_CONFIG: CONFIG_FILE,
  // the held streams see a few keep-alives in a run
  MCP_LISTEN_KEEPALIVE_MS: '5000',
};
// SOAK_CPU_PROF=<dir> writes a CPU profile of the bridge there (node --cpu-prof)
const profile = process.env.SOAK_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SOAK_CPU_PROF}`] : [];
const child = spawn(process.execPath, [...profile, 'dist/index.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
let stdout = '';
let stopping = false;
child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
let partial = '';
child.stderr.setEncoding('utf8').on('data', (c) => {
  const lines = (partial + c).split('\n');
  partial = lines.pop();
  for (const line of lines) if (/ error /.test(line)) figures.errorLogLines++, console.error(`bridge: ${line}`);
});
child.on('exit', (code, signal) => {
  if (stopping) return;
  figures.crashes++;
  finish(`the bridge exited during the soak (code ${code}, signal ${signal})`);
});

while (!stdout.includes('Computer link:')) await sleep(20);
const MCP = /^MCP endpoint: (\S+)$/m.exec(stdout)[1];
const BASE = new URL(MCP).origin;
const LINK = /^Computer link: (ws:\/\/\S+) /m.exec(stdout)[1];

// ---- the well-behaved side (normal computer, normal calls, /health, RSS) in a worker ---------
const rssMb = () => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return 0;
  }
};
const rss = { before: 0, peak: 0, after: 0 };
const probe = new Worker(new URL('./soak-probe.js', import.meta.url), {
  workerData: { base: BASE, link: LINK, mcpToken: MCP_TOKEN, linkToken: LINK_TOKEN, pid: child.pid, configFile: CONFIG_FILE },
});
const fromProbe = (kind) => new Promise((resolve) => {
  const on = (m) => {
    if (m.kind === kind) {
      probe.off('message', on);
      resolve(m);
    }
  };
  probe.on('message', on);
});
probe.on('error', (err) => finish(`the probe worker failed: ${err.message}`));
await fromProbe('ready');
let rpcId = 1;
const execBody = (computerId, code, timeoutMs = EXEC_TIMEOUT_MS) =>
  JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId, code, timeoutMs } } });

async function phase(name, run) {
  probe.postMessage('phase');
  await fromProbe('phase');
  const t0 = Date.now();
  const before = tally.answered;
  const detail = (await run()) ?? {};
  probe.postMessage('phase');
  const normal = await fromProbe('phase');
  figures.mismatched.normal += normal.wrong;
  figures.phases.push({ name, seconds: (Date.now() - t0) / 1000, answered: tally.answered - before, normalLatencyMs: normal.latency, normalWrong: normal.wrong, ...detail });
  console.log(`${name}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s ${JSON.stringify(detail)}`);
}

await sleep(500);
rss.before = rssMb();
await phase('baseline (no attack)', () => sleep(3000));

// ---- 1. 100,000 hostile link frames --------------------------------------------------------------
await phase('100,000 hostile link frames', async () => {
  let frames = 0;
  // heavy frames (deep nesting, huge strings and numbers) are 2% of the mix
  const heavy = [
    () => '['.repeat(20_000) + ']'.repeat(20_000),
    () => '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    () => `{"type":"response","id":"x","ok":true,"result":${'9'.repeat(5000)}}`,
    () => JSON.stringify({ type: 'response', id: 'big', ok: true, result: 'x'.repeat(200_000) }),
  ];
  const junk = [
    () => randomBytes(randomInt(1, 200)).toString('latin1'),
    () => `{"type":"response","id":"${randomBytes(8).toString('hex')}","ok":true,"result":1e400}`,
    () => JSON.stringify({ type: 'response', id: 42, ok: 'yes' }),
    () => JSON.stringify({ type: 'response', id: null, ok: false, error: 5 }),
    () => JSON.stringify({ type: 'response', id: ['a'], ok: {}, result: [] }),
    () => JSON.stringify({ type: 'hello', computerId: randomInt(1e6), token: LINK_TOKEN }),
    () => JSON.stringify({ type: 'hello', computerId: 'seven', computerLabel: {}, version: [] }),
    () => JSON.stringify({ type: 7 }),
    () => JSON.stringify({ type: 'cancel', id: 'x' }),
    () => JSON.stringify([1, 2, 3]),
    () => 'null',
    () => '"just a string"',
    () => JSON.stringify({ type: 'response', id: randomBytes(100).toString('hex'), ok: true }),
  ];
  // 40 linked attackers, ~2,300 frames each; calls to them are answered once and then replayed
  const attackers = Array.from({ length: 40 }, (_, i) => new Computer(LINK, {
    computerId: 1000 + i,
    token: LINK_TOKEN,
    localAddress: `127.0.1.${i + 1}`,
    onRequest: (f, c) => {
      c.answer(f.id, execResult(1));
      for (let k = 0; k < 3; k++) c.answer(f.id, execResult(666));
      c.answer(f.id + 'x', execResult(666));
      frames += 5;
    },
  }));
  const linked = await Promise.all(attackers.map((a) => a.link()));
  const calls = pool(400, 8, async (i) => {
    // a long timeout: an attacker's answer waits behind its own junk in its send buffer
    const res = await request(BASE, { headers: AUTH, body: execBody(1000 + (i % 40), 'return 1', 60_000) });
    const value = res.status === 200 ? JSON.parse(res.text).result?.structuredContent?.returns?.[0]?.value : null;
    if (value !== 1) {
      figures.mismatched.attacked++;
      if (figures.mismatched.attacked <= 3) console.error(`call to an attacker: ${res.status} ${res.error ?? res.text.slice(0, 300)}`);
    }
  });
  await Promise.all(attackers.map(async (a) => {
    for (let n = 0; n < 2500 && a.ws.readyState === 1; n++) {
      const pick = randomInt(100);
      if (pick < 10) a.ws.send(randomBytes(randomInt(1, 300)), { binary: true });
      else if (pick < 12) a.ws.send(heavy[randomInt(heavy.length)]());
      else a.ws.send(junk[randomInt(junk.length)]());
      frames++;
      if (n % 50 === 0) await a.drain();
    }
  }));
  await calls;
  // short-lived sockets: frames before hello, invalid UTF-8, oversize frames, bad hellos
  const killers = [
    (ws) => ws.send(JSON.stringify({ type: 'response', id: 'early', ok: true })),
    (ws) => ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }),
    (ws) => ws.send('x'.repeat(2 * 1024 * 1024)),
    (ws) => ws.send(JSON.stringify({ type: 'hello', computerId: -5 })),
    (ws) => ws.send(JSON.stringify({ type: 'hello', computerId: randomInt(1e6), token: 'wrong-token-wrong-token' })),
  ];
  let refusedHttp = 0;
  await pool(1500, 24, async (i) => {
    // open raw, run one killer, wait for the bridge to close the socket
    await new Promise((resolve) => {
      const ws = new WebSocket(LINK, { localAddress: `127.0.2.${(i % 50) + 1}` });
      ws.on('open', () => {
        killers[i % killers.length](ws);
        frames++;
      });
      ws.on('unexpected-response', (_q, res) => {
        refusedHttp++;
        res.resume();
        resolve();
      });
      ws.on('error', () => {});
      ws.on('close', resolve);
    });
  });
  // a hello flood with changing ids from one address: throttled by CC_HELLO_RATE
  const flood = { ok: 0, busy: 0, other: 0 };
  await pool(1000, 32, async (i) => {
    const c = new Computer(LINK, { computerId: 50_000 + i, token: i % 2 ? LINK_TOKEN : 'wrong-token-wrong-token', localAddress: '127.0.3.1' });
    const first = await c.link();
    frames++;
    if (first?.type === 'hello-ok') flood.ok++;
    else if (first?.code === 'busy' || first?.type === 'http') flood.busy++;
    else flood.other++;
    c.close();
  });
  for (const a of attackers) a.close();
  return { framesSent: frames, attackersLinked: linked.filter((l) => l?.type === 'hello-ok').length, shortLivedRefusedBeforeHandshake: refusedHttp, helloFlood: flood };
});

// ---- 2. 10,000 bad HTTP requests ----------------------------------------------------------------
await phase('10,000 bad HTTP requests', async () => {
  const tool = (args) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec-lua', arguments: args } });
  const weird = [null, true, 1.5, -1, 1e308, 'str', [], {}, [1], { a: 1 }];
  const cheap = [
    () => ({ headers: AUTH, body: '{not json' }),
    () => ({ headers: AUTH, body: '' }),
    () => ({ headers: AUTH, body: '[1,2,3]' }),
    () => ({ headers: AUTH, body: '{"jsonrpc":"1.0","id":1,"method":"ping"}' }),
    () => ({ headers: AUTH, body: '{"jsonrpc":"2.0","id":{},"method":"ping"}' }),
    () => ({ headers: AUTH, body: '{"jsonrpc":"2.0","id":1,"method":7}' }),
    () => ({ headers: AUTH, body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}' }),
    () => ({ headers: AUTH, body: '{"jsonrpc":"2.0","id":1,"method":"no/such/method"}' }),
    () => ({ method: ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'][randomInt(6)], headers: AUTH }),
    () => ({ headers: { ...AUTH, 'content-type': 'text/plain' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }),
    () => ({ headers: { ...AUTH, 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' }),
    () => ({ path: `/no/such/${randomInt(1e6)}`, headers: AUTH }),
    () => ({ path: '/.well-known/oauth-protected-resource', method: 'GET' }),
    () => ({ headers: { ...AUTH, origin: 'https://evil.example' }, body: '{}' }),
    () => ({ headers: { ...AUTH, host: 'evil.example' }, body: '{}' }),
    () => ({ headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' }),
    () => ({ headers: { ...AUTH, authorization: 'Bearer wrong-wrong-wrong-wrong' }, body: '{}' }),
    () => ({ headers: { ...AUTH, 'mcp-protocol-version': '1999-01-01' }, body: '{}' }),
    () => ({ headers: AUTH, body: tool({ computerId: weird[randomInt(weird.length)], code: weird[randomInt(weird.length)] }) }),
    () => ({ headers: AUTH, body: tool({ computer: weird[randomInt(weird.length)], code: 'return 1', timeoutMs: weird[randomInt(weird.length)] }) }),
    () => ({ headers: AUTH, body: tool(weird[randomInt(weird.length)]) }),
    () => ({ headers: AUTH, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: weird[randomInt(weird.length)] } }) }),
    () => ({ path: '/tools/exec-lua', headers: AUTH, body: '{"computerId":"x"}' }),
    () => ({ headers: { ...AUTH, 'x-big': 'a'.repeat(64 * 1024) }, body: '{}', fresh: true }),
  ];
  const costly = [
    () => ({ headers: AUTH, body: 'x'.repeat(2 * 1024 * 1024), fresh: true }),
    () => ({ headers: AUTH, body: tool({ computerId: 1, code: '-'.repeat(1_000_000) }) }),
    () => ({
      headers: { ...AUTH, 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))),
    }),
  ];
  const statuses = {};
  await pool(10_000, 32, async (i) => {
    const make = i % 100 === 0 ? costly[(i / 100) % costly.length] : cheap[i % cheap.length];
    const res = await request(BASE, make());
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  });
  return { statuses };
});

// ---- 3. 200 slowloris connections ---------------------------------------------------------------
await phase('200 slowloris connections (15 s)', async () => {
  const port = Number(new URL(BASE).port);
  let cut = 0;
  const sockets = Array.from({ length: 200 }, (_, i) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.on('close', () => cut++);
    s.write(i % 2 ? 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n' : `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${MCP_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
    return s;
  });
  for (let t = 0; t < 15; t++) {
    await sleep(1000);
    for (const s of sockets) if (!s.destroyed) s.write(t % 2 ? 'X-a: b\r\n' : ' ');
  }
  const cutByBridge = cut;
  for (const s of sockets) s.destroy();
  return { cutByBridgeWithin15s: cutByBridge };
});

// ---- 4. 1,000 link connect / hello / disconnect cycles with calls in flight -----------------------
const churn = { cycles: 0, calls: 0, callsAnswered: 0, byBehaviour: {} };
await phase('1,000 link churn cycles with calls in flight', async () => {
  let running = true;
  const ids = Array.from({ length: 40 }, (_, i) => 100 + i);
  const cycles = pool(1000, 25, async (i) => {
    const behaviour = ['prompt', 'never', 'late', 'drop'][i % 4];
    churn.byBehaviour[behaviour] = (churn.byBehaviour[behaviour] ?? 0) + 1;
    const c = new Computer(LINK, {
      computerId: ids[randomInt(ids.length)],
      token: LINK_TOKEN,
      localAddress: `127.0.4.${(i % 25) + 1}`,
      onRequest: (f, self) => {
        const answer = f.method === 'ping' ? `pong from ${self.computerId} (Label: null)` : execResult(1);
        const send = () => (f.method === 'ping' ? self.ws.readyState === 1 && self.ws.send(JSON.stringify({ type: 'response', id: f.id, ok: true, result: answer })) : self.answer(f.id, answer));
        if (behaviour === 'prompt') send();
        else if (behaviour === 'late') setTimeout(send, randomInt(0, 2500));
        else if (behaviour === 'drop') self.ws.terminate();
      },
    });
    await c.link();
    churn.cycles++;
    await sleep(randomInt(50, 400));
    if (randomInt(2)) c.close();
    else c.ws.close();
  });
  const callers = Array.from({ length: 20 }, async () => {
    while (running) {
      const probe = randomInt(5) === 0;
      const timeoutMs = probe ? PROBE_TIMEOUT_MS : randomInt(300, EXEC_TIMEOUT_MS);
      const body = probe
        ? JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } })
        : execBody(ids[randomInt(ids.length)], 'return 1', timeoutMs);
      const t0 = performance.now();
      churn.calls++;
      const res = await request(BASE, { headers: AUTH, body, timeoutMs: timeoutMs + 10_000 });
      const ms = performance.now() - t0;
      if (res.status === 200) churn.callsAnswered++;
      if (ms > timeoutMs + 1000 || res.status === 0) figures.hanging++;
    }
  });
  await cycles;
  running = false;
  await Promise.all(callers);
  return { cycles: churn.cycles, calls: churn.calls, callsAnswered: churn.callsAnswered, behaviours: churn.byBehaviour };
});

// what the churn left behind, once every socket is gone
async function leftovers() {
  const res = await request(BASE, { method: 'GET', path: '/metrics', headers: AUTH });
  const get = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text)?.[1]);
  return {
    links: get('cc_links') - 1, // the normal computer stays linked
    pendingRequests: get('cc_link_requests_pending'),
    helloTimers: get('cc_link_connections_pre_hello'),
    callsInFlight: get('cc_tool_calls_in_flight'),
    trackedCalls: get('cc_mcp_calls_tracked'),
  };
}
// (the normal loop pauses so its own call is not counted; late answers and heartbeats get 10 s)
probe.postMessage('pause');
await sleep(100);
let left;
for (let i = 0; i < 40; i++) {
  await sleep(250);
  left = await leftovers();
  if (Object.values(left).every((v) => v === 0)) break;
}
probe.postMessage('resume');

// ---- 5. 2,000 concurrent exec-lua calls to one computer, each answer checked ----------------------
await phase('2,000 concurrent exec-lua calls to one computer', async () => {
  const busy = new Computer(LINK, {
    computerId: 2,
    token: LINK_TOKEN,
    onRequest: (f, c) => {
      const n = Number(/^return (\d+)$/.exec(f.params?.code ?? '')?.[1]);
      setTimeout(() => c.answer(f.id, execResult(n)), randomInt(0, 1000));
    },
  });
  if ((await busy.link())?.type !== 'hello-ok') throw new Error('the busy computer could not link');
  let right = 0;
  await Promise.all(Array.from({ length: 2000 }, async (_, n) => {
    const res = await request(BASE, { headers: AUTH, body: execBody(2, `return ${n}`, 20_000), fresh: true });
    const value = res.status === 200 ? JSON.parse(res.text).result?.structuredContent?.returns?.[0]?.value : undefined;
    if (value === n) right++;
    else figures.mismatched.concurrent++;
  }));
  busy.close();
  return { answeredWithTheirOwnValue: right };
});

probe.postMessage('stop');
const probeEnd = await fromProbe('stopped');
figures.healthOk = probeEnd.healthOk;
figures.healthBad = probeEnd.healthBad;
figures.healthFailures = probeEnd.healthFailures;
rss.peak = probeEnd.peakRss;
figures.probeAnswered = probeEnd.answered;
figures.probeFiveXX = probeEnd.fiveXX;
figures.streams = probeEnd.streams;
await sleep(1500);
rss.after = rssMb();
finish(null);

function finish(failure) {
  clearTimeout(deadline);
  probe.unref();
  const pendingAfterChurn = left ?? null;
  const report = {
    seconds: (Date.now() - started) / 1000,
    crashes: figures.crashes,
    fiveXX: fiveXX() + (figures.probeFiveXX ?? 0),
    errorLogLines: figures.errorLogLines,
    requestsAnswered: tally.answered + (figures.probeAnswered ?? 0),
    clientSideSocketErrors: tally.errors,
    hangingPastTimeoutPlus1s: figures.hanging,
    wrongOrMissingAnswers: figures.mismatched,
    pendingAfterChurn,
    rssMb: { before: Math.round(rss.before), peak: Math.round(rss.peak), after: Math.round(rss.after), bound: RSS_BOUND_MB },
    health: { ok: figures.healthOk, notOk: figures.healthBad, failures: figures.healthFailures },
    heldEventStreams: figures.streams ?? null,
    phases: figures.phases,
  };
  console.log(JSON.stringify(report, null, 2));
  const problems = [];
  if (failure) problems.push(failure);
  if (report.crashes) problems.push('crashes');
  if (report.fiveXX) problems.push('5xx answers');
  if (report.hangingPastTimeoutPlus1s) problems.push('calls hanging past their timeout + 1 s');
  if (Object.values(report.wrongOrMissingAnswers).some((n) => n > 0)) problems.push('normal or checked calls answered wrongly');
  if (pendingAfterChurn && (pendingAfterChurn.pendingRequests || pendingAfterChurn.helloTimers || pendingAfterChurn.links)) problems.push('state left after the churn');
  if (report.rssMb.peak > RSS_BOUND_MB) problems.push(`peak RSS above ${RSS_BOUND_MB} MB`);
  if (report.health.notOk) problems.push('/health failed');
  const held = report.heldEventStreams;
  if (held && (held.missedNotices || held.extraNotices || held.held.endedEarly)) problems.push('held event streams missed, doubled or lost notices');
  if (held && (held.openAfterClose.gets || held.openAfterClose.subscriptions)) problems.push('event streams or subscriptions left open after every stream closed');
  console.log(problems.length ? `SOAK FAILED: ${problems.join('; ')}` : 'SOAK PASSED');
  stopping = true;
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  process.exitCode = problems.length ? 1 : 0;
  setTimeout(() => process.exit(), 6000).unref();
}
