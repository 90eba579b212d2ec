// Shared pieces of the hostile-input fuzz suite (test/fuzz/): a seeded PRNG, generators of hostile
// values and texts, a raw HTTP client (bytes in, whatever comes back out: truncated and slow bodies,
// odd headers) and the checks every answer must pass. Not a test file itself (no .test.js).
import net from 'node:net';

/** mulberry32: small, seedable, good enough to pick shapes. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (list) => list[int(list.length)],
  };
}

/** The seed of a run: FUZZ_SEED=<n> replays one; by default a fixed one so `npm test` is deterministic. */
export function fuzzSeed(fallback) {
  const env = Number(process.env.FUZZ_SEED);
  return Number.isInteger(env) && env > 0 ? env : fallback;
}

export const deepArrayText = (levels) => '['.repeat(levels) + ']'.repeat(levels);
export const deepObjectText = (levels) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

/** Odd strings: control characters, lone surrogates, prototype keys, very long ones. */
export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '😀'.repeat(20),
  '"\\',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '\r\n',
  'a'.repeat(300),
  '%00',
  '../../etc/passwd',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
];

/** JSON number texts JSON.parse takes but a careless reader mishandles. */
export const ODD_NUMBER_TEXTS = ['0', '-0', '-1', '1.5', '1e308', '1e999', '-1e999', '5e-324', '9007199254740993', '123456789012345678901234567890', '0.0000001', '1E2'];

/**
 * A hostile JSON value, as JSON text: wrong types, odd numbers (1e999 parses to Infinity), long and
 * odd strings, deep nesting, prototype keys.
 */
export function hostileValueText(r, { deep = true } = {}) {
  switch (r.int(10)) {
    case 0:
      return JSON.stringify(r.pick(ODD_STRINGS));
    case 1:
      return r.pick(ODD_NUMBER_TEXTS);
    case 2:
      return r.pick(['true', 'false', 'null', '[]', '{}', '""']);
    case 3:
      return JSON.stringify('x'.repeat(r.int(2) ? 70_000 : 1000 + r.int(5000)));
    case 4:
      return deep ? (r.int(2) ? deepArrayText : deepObjectText)(r.chance(0.5) ? 60 + r.int(10) : 100 + r.int(20_000)) : '[]';
    case 5:
      return '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}';
    case 6:
      return '[' + Array.from({ length: 1 + r.int(4) }, () => hostileValueText(r, { deep: false })).join(',') + ']';
    case 7:
      return JSON.stringify(String.fromCharCode(...Array.from({ length: r.int(30) }, () => r.int(0x10000))));
    case 8:
      return '{"a":' + hostileValueText(r, { deep: false }) + ',"a":' + hostileValueText(r, { deep: false }) + '}';
    default:
      return String(r.int(2 ** 31) - 2 ** 30);
  }
}

/**
 * `value` (a plain JSON value) mutated at one random place: a field replaced by a hostile value,
 * deleted, or a stray field added. Returns JSON text.
 */
export function mutateValueText(r, value) {
  const paths = [];
  const walk = (v, path) => {
    paths.push(path);
    if (v && typeof v === 'object' && path.length < 8) for (const k of Object.keys(v)) walk(v[k], [...path, k]);
  };
  walk(value, []);
  const path = r.pick(paths);
  const MARK = '\u0001HOSTILE\u0001';
  const copy = structuredClone(value);
  if (path.length === 0) return r.chance(0.5) ? hostileValueText(r) : JSON.stringify(copy);
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  const last = path[path.length - 1];
  const action = r.int(10);
  if (action === 0 && !Array.isArray(parent)) delete parent[last];
  else if (action === 1 && parent && typeof parent === 'object' && !Array.isArray(parent)) parent[r.pick(ODD_STRINGS)] = MARK;
  else parent[last] = MARK;
  return JSON.stringify(copy).replace(JSON.stringify(MARK), () => hostileValueText(r));
}

/** A JSON text mangled as bytes: cut short, a byte flipped, junk spliced in, a BOM, invalid UTF-8. */
export function mangleText(r, text) {
  const buf = Buffer.from(text, 'utf8');
  const at = buf.length === 0 ? 0 : r.int(buf.length);
  switch (r.int(7)) {
    case 0:
      return buf.subarray(0, at);
    case 1: {
      const copy = Buffer.from(buf);
      if (copy.length) copy[at] = r.int(256);
      return copy;
    }
    case 2:
      return Buffer.concat([buf.subarray(0, at), Buffer.from(r.pick(['\u0000', '"', '}', ']', ',', '\\u', '\ud800', '/*x*/', 'NaN', 'Infinity', '\n'])), buf.subarray(at)]);
    case 3:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf]);
    case 4:
      return Buffer.concat([buf.subarray(0, at), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), buf.subarray(at)]);
    case 5:
      return Buffer.from(text + text);
    default:
      return Buffer.from(r.pick(['', ' ', 'null', '0', '"x"', '[]', '{}', '[[]]', '[{}]', 'nul', '{"jsonrpc":"2.0"', 'NaN', '-', '1e999']));
  }
}

/**
 * Sends raw bytes (`head` and `body` chunks, optionally slowly) on a fresh TCP connection and
 * collects what comes back until the bridge closes it or `giveUpMs` pass (a hang guard: the result
 * then says `hung`). The request should carry `Connection: close`.
 */
export function rawHttp(port, head, body = [], { gapMs = 0, endAfter = false, giveUpMs = 10_000 } = {}) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    let settled = false;
    const finish = (hung) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      socket.destroy();
      resolve({ hung, ...parseRaw(Buffer.concat(chunks)) });
    };
    const guard = setTimeout(() => finish(true), giveUpMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('connect', async () => {
      socket.write(head);
      for (const piece of body) {
        if (socket.destroyed) return;
        if (gapMs) await new Promise((res) => setTimeout(res, gapMs));
        if (socket.destroyed) return;
        socket.write(piece);
      }
      if (endAfter && !socket.destroyed) socket.end();
    });
  });
}

/** Status, headers and body of one HTTP/1.1 answer in `raw` (content-length bodies; null status if none). */
export function parseRaw(raw) {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return { status: null, headers: {}, body: '', raw: raw.toString('latin1').slice(0, 200) };
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
  const headers = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let bodyBytes = raw.subarray(end + 4);
  const length = Number(headers['content-length']);
  if (Number.isInteger(length)) bodyBytes = bodyBytes.subarray(0, length);
  return { status, headers, body: bodyBytes.toString('utf8'), complete: !Number.isInteger(length) || raw.length - end - 4 >= length };
}

/** An HTTP/1.1 request head with `Connection: close`; `headers` may hold raw (latin1) values. */
export function requestHead(method, path, headers, bodyLength) {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (bodyLength !== undefined) lines.push(`Content-Length: ${bodyLength}`);
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
}

/** Problems with one JSON-RPC response object (empty when it is well-formed). */
export function jsonRpcProblems(value) {
  const problems = [];
  if (!value || typeof value !== 'object' || Array.isArray(value)) return ['not an object'];
  if (value.jsonrpc !== '2.0') problems.push('jsonrpc is not "2.0"');
  // an error for a request whose id could not be read leaves the id out in 2025-11-25 and 2026-07-28
  if (!('id' in value)) {
    if (!('error' in value)) problems.push('no id');
  }
  else if (!(value.id === null || typeof value.id === 'string' || (typeof value.id === 'number' && Number.isFinite(value.id)))) problems.push('bad id');
  if (('result' in value) === ('error' in value)) problems.push('not exactly one of result/error');
  if ('error' in value) {
    const e = value.error;
    if (!e || typeof e !== 'object' || !Number.isInteger(e.code) || typeof e.message !== 'string' || e.message === '') problems.push('malformed error');
    // a generic internal error is not a specific answer: something failed inside the bridge
    else if (e.code === -32603) problems.push(`internal error: ${e.message}`);
  }
  return problems;
}

/** A stack trace or an internal path in an answer body: never shown to a client. */
export const leaksInternals = (text) => /\n\s+at |node:internal|\/dist\/|\.js:\d+:\d+/.test(text);

/** Log lines that mean something failed inside the bridge. */
export const internalFailures = (logs) => logs.filter((l) => /failed inside the bridge|MCP request failed|REST .* failed:|Internal error|RangeError|TypeError|Maximum call stack|could not be serialised|\bat .*\.js:\d+/.test(l));

/**
 * How long `node <args>` (a stdio MCP fixture) takes here and now to answer initialize: spawn, boot,
 * answer. The bridge's initialize of a stdio server counts all of it against the server's timeoutMs,
 * so a fuzz server's short timeout (its calls that never get an answer end by it) must allow it: on
 * a starved machine booting Node took longer than 400 ms and the server never came up. Wall time,
 * only to scale that limit, never asserted.
 */
export async function stdioBootMs(args) {
  const { spawn } = await import('node:child_process');
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'boot', version: '0' } };
  child.stdin.end(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params })}\n`);
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve);
    child.once('error', reject);
    child.once('exit', resolve);
  });
  const ms = performance.now() - started;
  child.kill();
  return ms;
}

/** Resolves once the bridge's /health lists upstream server `id` as up. */
export const upstreamUp = (bridge, id, until) =>
  until(async () => (await (await fetch(new URL('/health', bridge.mcpUrl))).json()).servers?.find((s) => s.id === id)?.state === 'up');

/**
 * `callers` concurrent callers each make `calls` tools/call of the upstream echo tool `tool`, each with
 * its own nonce (`<prefix><caller>-<i>`): every answer must be a well-formed JSON-RPC answer under its
 * own id, never carry FORGED, and a success must echo this caller's own nonce. Returns the problems
 * and how many calls got their own echo or an error.
 */
export async function echoCalls(bridge, rpc, { tool, prefix, callers, calls }) {
  const problems = [];
  const tally = { own: 0, error: 0 };
  const caller = async (k) => {
    for (let i = 0; i < calls; i++) {
      const nonce = `${prefix}${k}-${i}`;
      const id = k * 1000 + i;
      const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { nonce } } });
      const wrong = res.json === null ? ['not JSON'] : jsonRpcProblems(res.json);
      if (res.status !== 200 || wrong.length || res.json.id !== id) {
        problems.push(`${nonce}: ${res.status} ${wrong.join('; ')} ${res.text.slice(0, 200)}`);
        continue;
      }
      if (res.text.includes('FORGED')) problems.push(`${nonce}: handed a forged answer: ${res.text.slice(0, 200)}`);
      const result = res.json.result;
      if (result.isError) tally.error++;
      // a successful answer is this caller's own echo, nobody else's
      else if (result.structuredContent?.args?.nonce === nonce) tally.own++;
      else problems.push(`${nonce}: got ${JSON.stringify(result).slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: callers }, (_, k) => caller(k)));
  return { problems, ...tally };
}
