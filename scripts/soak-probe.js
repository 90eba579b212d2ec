// Worker thread of scripts/soak.js: the well-behaved side, on its own event loop so the attack
// generators cannot delay it. A normal computer (id 1) answering at once, a steady loop of
// exec-lua calls to it (latency per phase), /health every 250 ms, the bridge's RSS every 100 ms,
// and event streams held open the whole run while the tool set changes every 2 s (soak-streams.js).
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Computer, execResult, fiveXX, request, sleep, stats, tally } from './soak-lib.js';
import { HeldStreams } from './soak-streams.js';

const { base, link, mcpToken, linkToken, pid, configFile } = workerData;
const auth = { authorization: `Bearer ${mcpToken}`, 'content-type': 'application/json' };
const state = { latencies: [], wrong: 0, healthOk: 0, healthBad: 0, healthFailures: [], peakRss: 0, running: true, paused: false };

const rssMb = () => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return 0;
  }
};
const rssTimer = setInterval(() => (state.peakRss = Math.max(state.peakRss, rssMb())), 100);
const healthTimer = setInterval(async () => {
  const t0 = performance.now();
  const res = await request(base, { method: 'GET', path: '/health', fresh: true, timeoutMs: 5000 });
  if (res.status === 200 && res.text === '{"ok":true}') state.healthOk++;
  else {
    state.healthBad++;
    if (state.healthFailures.length < 5) state.healthFailures.push(`${res.status} ${res.error ?? res.text} after ${Math.round(performance.now() - t0)} ms`);
  }
}, 250);

const normal = new Computer(link, { computerId: 1, token: linkToken, onRequest: (f, c) => c.answer(f.id, execResult(7)) });
const hello = await normal.link();
if (hello?.type !== 'hello-ok') throw new Error(`the normal computer could not link: ${JSON.stringify(hello)}`);

const streams = new HeldStreams({ base, auth: { authorization: `Bearer ${mcpToken}` }, configFile });
await streams.open({ gets: 3, listens: 3 });
const metrics = async () => {
  const res = await request(base, { method: 'GET', path: '/metrics', headers: auth });
  return Object.fromEntries([...(res.text ?? '').matchAll(/^(cc_[a-z_]+) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
};
let changing = true;
const changes = (async () => {
  while (changing) {
    await sleep(2000);
    if (changing) await streams.change();
  }
})();

let id = 1;
const loop = (async () => {
  while (state.running) {
    if (state.paused) {
      await sleep(20);
      continue;
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code: 'return 7' } } });
    const t0 = performance.now();
    const res = await request(base, { headers: auth, body });
    const ms = performance.now() - t0;
    let value;
    try {
      value = JSON.parse(res.text).result?.structuredContent?.returns?.[0]?.value;
    } catch {
      value = undefined;
    }
    if (res.status === 200 && value === 7) state.latencies.push(ms);
    else state.wrong++;
    await sleep(20);
  }
})();

parentPort.on('message', async (message) => {
  if (message === 'phase') {
    parentPort.postMessage({ kind: 'phase', latency: stats(state.latencies), wrong: state.wrong });
    state.latencies = [];
    state.wrong = 0;
  } else if (message === 'pause') {
    state.paused = true;
  } else if (message === 'resume') {
    state.paused = false;
  } else if (message === 'stop') {
    state.running = false;
    changing = false;
    await Promise.all([loop, changes]);
    const held = await streams.finish(metrics);
    clearInterval(rssTimer);
    clearInterval(healthTimer);
    normal.close();
    parentPort.postMessage({ kind: 'stopped', healthOk: state.healthOk, healthBad: state.healthBad, healthFailures: state.healthFailures, peakRss: state.peakRss, answered: tally.answered, fiveXX: fiveXX(), streams: held });
  }
});
parentPort.postMessage({ kind: 'ready' });
