// Issue 7, "done when": 10,000 random, deeply nested frames of every frame type and field sent to a
// running bridge over many link sockets, plus random MCP and REST bodies; afterwards the bridge is
// up, /health answers OK, nothing failed inside it, and a normal computer still answers a normal call.
// The frames come from a seeded generator: FUZZ_SEED=<n> replays a run, and a failure names its seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { once } from 'node:events';
import { callTool, linkComputer, pongText, withBridge } from './helpers.js';

const FRAMES = 10_000;
const HTTP_BODIES = 1_000;
const SOCKETS = 8;
const GOOD_ID = 987_654_321;

/** mulberry32: small, seedable, good enough to pick shapes. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(random) {
  const int = (n) => Math.floor(random() * n);
  const pick = (list) => list[int(list.length)];
  const chance = (p) => random() < p;

  /** Nesting depth: mostly around the 64 limit, some in the thousands, a few far beyond any stack. */
  const depth = () => {
    const r = random();
    if (r < 0.6) return int(80);
    if (r < 0.95) return 100 + int(5000);
    return 10_000 + int(30_000);
  };
  const STRINGS = ['', 'hello', 'response', 'request', 'cancel', 'hello-ok', '\u0000', '\ud800', '\udfff\ud800', '😀'.repeat(50), '"\\', '__proto__', 'constructor', 'a'.repeat(200)];
  const NUMBERS = [0, -0, -1, 1, 1.5, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308, 5e-324, 4294967296];
  const scalar = () => {
    switch (int(5)) {
      case 0:
        return pick(STRINGS);
      case 1:
        return chance(0.1) ? 'x'.repeat(int(200_000)) : pick(NUMBERS);
      case 2:
        return chance(0.5);
      case 3:
        return null;
      default:
        return String.fromCharCode(...Array.from({ length: int(40) }, () => int(0x10000)));
    }
  };
  /** JSON text nesting `levels` deep, as arrays, objects or a mix, with scalars along the way. */
  const deepText = (levels) => {
    const kind = int(3);
    if (kind === 0) return '['.repeat(levels) + ']'.repeat(levels);
    if (kind === 1) return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    let open = '';
    let close = '';
    for (let i = 0; i < levels; i++) {
      if (chance(0.5)) {
        open += '[1,';
        close = ']' + close;
      } else {
        open += '{"k":';
        close = '}' + close;
      }
    }
    return open + '0' + close;
  };
  /** A field's value as JSON text: the right type, a wrong type, or something deep. */
  const value = (good) => {
    const r = random();
    if (r < 0.35 && good !== undefined) return JSON.stringify(good);
    if (r < 0.7) return JSON.stringify(scalar());
    if (r < 0.8) return JSON.stringify(Array.from({ length: int(5) }, scalar));
    return deepText(depth());
  };
  const TYPES = ['hello', 'response', 'response', 'request', 'cancel', 'hello-ok', 'hello-error', 'info', 'HELLO', ''];

  /** One frame: { data, binary }. `ids` are request ids this socket was really sent. */
  return function frame(ids) {
    const r = random();
    if (r < 0.03) return { data: Buffer.from(Array.from({ length: int(300) }, () => int(256))), binary: true };
    if (r < 0.06) return { data: Buffer.from([0x7b, 0xc3, 0x28, 0xff, 0xfe, 0x7d]), binary: false }; // invalid UTF-8
    if (r < 0.09) return { data: '{"type":"response","id":' + '"x'.repeat(int(50)), binary: false }; // truncated
    if (r < 0.12) return { data: deepText(depth()), binary: false }; // a bare value
    const fields = [];
    const type = chance(0.85) ? JSON.stringify(pick(TYPES)) : value(undefined);
    if (chance(0.95)) fields.push(['type', type]);
    const id = ids.length > 0 && chance(0.6) ? pick(ids) : `fuzz-${int(1000)}`;
    const candidates = {
      computerId: chance(0.5) ? int(50) : undefined,
      computerLabel: 'fuzz',
      version: '0.1.0',
      token: 'secret',
      id,
      ok: chance(0.5),
      result: { output: '', returns: [{ type: 'nil' }] },
      error: 'boom',
    };
    for (const [name, good] of Object.entries(candidates)) if (chance(0.6)) fields.push([name, value(good)]);
    if (chance(0.05)) fields.push(['extra', deepText(depth())]);
    // shuffled, sometimes with a key twice
    for (let i = fields.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [fields[i], fields[j]] = [fields[j], fields[i]];
    }
    if (fields.length > 0 && chance(0.05)) fields.push(fields[0]);
    let text = '{' + fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',') + '}';
    // the good computer's id is never claimed: replacing it is allowed and is not what this test checks
    text = text.replace(new RegExp(`\\b${GOOD_ID}\\b`, 'g'), '1');
    return { data: text, binary: false };
  };
}

function bodyGenerator(random) {
  const int = (n) => Math.floor(random() * n);
  const pick = (list) => list[int(list.length)];
  const frameOf = generator(random);
  const METHODS = ['initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized', 'notifications/cancelled', 'resources/list', '', 'rpc.x'];
  const TOOLS = ['probe-computers', 'exec-lua', 'list-computers', 'nope', ''];
  const deep = (levels) => (int(2) ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels));
  const anyValue = () => {
    const r = random();
    if (r < 0.2) return deep(int(2) ? int(80) : int(20_000));
    // reuse the frame generator's field values: wrong types, huge numbers, long strings
    const { data } = frameOf([]);
    return typeof data === 'string' && data.startsWith('{') ? data : '"x"';
  };
  const message = () => {
    const id = pick(['1', '"a"', 'null', '1.5', '{}', '[]', anyValue()]);
    const method = int(10) === 0 ? anyValue() : JSON.stringify(pick(METHODS));
    const args = int(3) === 0 ? anyValue() : JSON.stringify({ computerId: pick([GOOD_ID, 1, -1, 'x']), code: 'return 1', timeoutMs: pick([100, 0, -5, 'x']) });
    const params = int(4) === 0 ? anyValue() : `{"name":${JSON.stringify(pick(TOOLS))},"arguments":${args}}`;
    return `{"jsonrpc":${pick(['"2.0"', '"1.0"', '2'])},"id":${id},"method":${method},"params":${params}}`;
  };
  return function body() {
    const r = random();
    if (r < 0.1) return { path: '/mcp', text: 'not json' + '['.repeat(int(100)) };
    if (r < 0.25) return { path: '/mcp', text: '[' + Array.from({ length: 1 + int(5) }, message).join(',') + ']', batch: true };
    if (r < 0.4) return { path: `/tools/${pick(TOOLS)}`, text: anyValue() };
    return { path: '/mcp', text: message() };
  };
}

/**
 * Fuzzing sockets: each links (or not), sends frames from the generator (request ids it was really
 * sent among them), and reconnects when the bridge closes it, until the bridge has received `total`
 * frames (its own framesIn counter, so frames lost with a closing socket do not count).
 */
async function fuzzLinks(bridge, nextFrame, random, total) {
  const start = bridge.metrics.framesIn;
  const received = () => bridge.metrics.framesIn - start;
  let sockets = 0;
  const worker = async () => {
    while (received() < total) {
      const ws = new WebSocket(bridge.linkUrl);
      sockets++;
      const ids = [];
      ws.on('message', (data) => {
        try {
          const f = JSON.parse(data.toString());
          if (f.type === 'request' && typeof f.id === 'string') ids.push(f.id);
        } catch {
          // the bridge only sends JSON; anything else is not this test's concern
        }
      });
      ws.on('error', () => {});
      const closed = once(ws, 'close');
      try {
        await once(ws, 'open');
      } catch {
        continue;
      }
      // most sockets say a valid hello first, so later frames reach a linked computer
      if (random() < 0.8) ws.send(JSON.stringify({ type: 'hello', computerId: Math.floor(random() * 50), computerLabel: 'fuzz' }));
      while (received() < total && ws.readyState === WebSocket.OPEN) {
        for (let i = 0; i < 20 && ws.readyState === WebSocket.OPEN; i++) {
          const { data, binary } = nextFrame(ids);
          ws.send(data, { binary });
        }
        // a barrier: the pong comes after the bridge has handled every frame sent before the ping
        if (ws.readyState === WebSocket.OPEN) {
          ws.ping();
          await Promise.race([once(ws, 'pong'), closed]);
        }
        if (random() < 0.05) break; // drop the socket mid-conversation now and then
      }
      if (random() < 0.5) ws.terminate();
      else ws.close();
      await closed;
    }
  };
  await Promise.all(Array.from({ length: SOCKETS }, worker));
  return { received: received(), sockets };
}

async function fuzzHttp(bridge, nextBody, total) {
  const origin = new URL(bridge.mcpUrl).origin;
  const statuses = new Map();
  const serverErrors = [];
  const notJson = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const { path, text } = nextBody();
      next++;
      const res = await fetch(origin + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': next % 2 ? '2025-03-26' : '2025-06-18' },
        body: text,
        // a hang guard only: a call to a fuzzing computer may legitimately wait for its timeout
        signal: AbortSignal.timeout(5000),
      }).catch((err) => ({ status: err.name }));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (typeof res.status !== 'number') continue;
      if (res.status >= 500) serverErrors.push(`${res.status} for ${path} ${text.slice(0, 200)}`);
      const answer = await res.text();
      // every answer with a body is JSON (an error the client can parse), never text or a cut-off body
      if (answer !== '' && !/^text\/event-stream/.test(res.headers.get('content-type') ?? '')) {
        try {
          JSON.parse(answer);
        } catch {
          notJson.push(`${res.status} for ${path}: ${answer.slice(0, 200)}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { statuses, serverErrors, notJson };
}

test('fuzz: 10,000 random, deeply nested link frames of every type and field and 1,000 random MCP/REST bodies leave the bridge up and answering', { timeout: 300_000 }, async (t) => {
  const seed = Number(process.env.FUZZ_SEED) || Math.floor(Math.random() * 2 ** 31);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  try {
    await withBridge(
      // short timeouts so calls to fuzzing computers end; raised rates so the frames arrive within the test
      { CC_EXEC_TIMEOUT_MS: '500', CC_PROBE_TIMEOUT_MS: '300', CC_LINK_MAX_BYTES_PER_S: String(64 * 1024 * 1024), CC_HELLO_RATE: '2000', CC_MAX_FRAME_BYTES: String(256 * 1024), LOG_LEVEL: 'warn' },
      async (bridge) => {
        const good = await linkComputer(bridge, { computerId: GOOD_ID });
        const random = prng(seed);
        // calls in flight while the frames arrive, so responses can hit real, answered and unknown ids
        let calling = true;
        const calls = (async () => {
          let n = 0;
          while (calling) {
            await callTool(bridge, n++ % 2 ? 'probe-computers' : 'list-computers').catch(() => {});
            for (const c of bridge.links.list()) {
              if (c.computerId !== GOOD_ID) await callTool(bridge, 'exec-lua', { computerId: c.computerId, code: 'return 1', timeoutMs: 200 }).catch(() => {});
              break;
            }
          }
        })();
        const [link, http] = await Promise.all([fuzzLinks(bridge, generator(random), random, FRAMES), fuzzHttp(bridge, bodyGenerator(prng(seed + 1)), HTTP_BODIES)]);
        calling = false;
        await calls;
        t.diagnostic(`frames received by the bridge: ${link.received} over ${link.sockets} sockets; HTTP statuses: ${JSON.stringify(Object.fromEntries(http.statuses))}`);
        t.diagnostic(`frames rejected by reason: ${JSON.stringify(Object.fromEntries(bridge.metrics.framesRejected.values))}`);

        assert.ok(link.received >= FRAMES);
        assert.deepEqual(http.serverErrors, [], 'no 5xx answer');
        assert.deepEqual(http.notJson, [], 'every answer body is JSON');
        // nothing thrown inside the bridge while handling a frame, nothing failed inside a tool
        assert.equal(bridge.metrics.framesRejected.get('internal'), 0);
        assert.deepEqual(bridge.logs.filter((l) => /failed inside the bridge|RangeError|Maximum call stack/.test(l)), []);
        // the rejections really happened: the generator reached the checks it is meant to reach
        assert.ok(bridge.metrics.framesRejected.get('invalid') > 0);
        assert.ok(bridge.metrics.framesRejected.get('binary') > 0);

        const health = await fetch(new URL(bridge.mcpUrl).origin + '/health');
        assert.equal(health.status, 200);
        assert.equal((await health.json()).ok, true);
        const probe = await callTool(bridge, 'probe-computers');
        assert.ok(probe.content[0].text.split('\n').includes(pongText(GOOD_ID, null)), probe.content[0].text);
        const fresh = await linkComputer(bridge, { computerId: GOOD_ID + 1 });
        const again = await callTool(bridge, 'probe-computers');
        assert.ok(again.content[0].text.split('\n').includes(pongText(GOOD_ID + 1, null)), again.content[0].text);
        await fresh.close();
        await good.close();
      },
    );
  } catch (err) {
    err.message = `[FUZZ_SEED=${seed}] ${err.message}`;
    throw err;
  }
});
