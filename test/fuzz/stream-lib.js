// Shared pieces of the event-stream fuzz tests (GET /mcp and subscriptions/listen): a raw stream
// client (bytes in, the head and every SSE event out, pause or drop it at will), the bridge's
// gauges read over raw HTTP, and a tracker of live timers and TCP sockets (unref'd ones too) so a
// test can say that nothing was left behind. Not a test file itself (no .test.js).
import { createHook } from 'node:async_hooks';
import net from 'node:net';
import { rawHttp, requestHead } from './lib.js';

export const MODERN = '2026-07-28';
export const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
export const SUB = 'io.modelcontextprotocol/subscriptionId';

/** A subscriptions/listen body. */
export const listenBody = (id, notifications = { toolsListChanged: true }) => ({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META, notifications } });

/** The headers a well-behaved 2026-07-28 client sends with a listen. */
export const LISTEN_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' };

/**
 * Opens a raw connection, writes `bytes` (a request; `lines` of head may repeat a header) and reads
 * what comes back: `head` resolves with {status, headers} once the answer's head arrived (status null
 * if the connection closed first), `events` holds every SSE `data:` line parsed (each event is one
 * chunk of the chunked answer, so its data line is never split), `comments` counts `:` lines.
 */
export function rawStream(port, bytes, { pause = false } = {}) {
  const socket = net.connect(port, '127.0.0.1');
  const s = { socket, text: '', events: [], comments: 0, closed: false, status: null, headers: {} };
  let resolveHead;
  s.head = new Promise((r) => (resolveHead = r));
  // what is not yet scanned into lines (an event stream is never kept whole: `text` is its first 64 KiB)
  let pending = '';
  let headDone = false;
  socket.setEncoding('latin1');
  socket.on('data', (chunk) => {
    if (!/^text\/event-stream/.test(s.headers['content-type'] ?? '') || s.text.length < 65_536) s.text += chunk;
    pending += chunk;
    if (!headDone) {
      const end = pending.indexOf('\r\n\r\n');
      if (end === -1) return;
      headDone = true;
      const lines = pending.slice(0, end).split('\r\n');
      s.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0])?.[1]);
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        s.headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      pending = pending.slice(end + 4);
      resolveHead({ status: s.status, headers: s.headers });
    }
    const cut = pending.lastIndexOf('\n');
    if (cut === -1) return;
    const whole = pending.slice(0, cut);
    pending = pending.slice(cut + 1);
    for (const raw of whole.split('\n')) {
      const line = raw.replace(/\r$/, '');
      if (line.startsWith('data: ')) s.events.push(JSON.parse(Buffer.from(line.slice(6), 'latin1').toString('utf8')));
      else if (line.startsWith(':')) s.comments++;
    }
  });
  socket.on('error', () => {});
  s.done = new Promise((r) =>
    socket.on('close', () => {
      s.closed = true;
      resolveHead({ status: s.status, headers: s.headers });
      r();
    }),
  );
  socket.on('connect', () => {
    socket.write(bytes);
    if (pause) socket.pause();
  });
  /** The JSON body of a complete (content-length) answer, or null. */
  s.json = () => {
    const at = s.text.indexOf('\r\n\r\n');
    try {
      return JSON.parse(Buffer.from(s.text.slice(at + 4), 'latin1').toString('utf8'));
    } catch {
      return null;
    }
  };
  s.close = () => {
    socket.destroy();
    return s.done;
  };
  return s;
}

/** A request head whose `lines` are [name, value] pairs (repeats allowed), values as raw latin1; `close: false` leaves out Connection: close (pipelining). */
export function headWithLines(method, path, lines, bodyLength, { close = true } = {}) {
  const out = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...(close ? ['Connection: close'] : [])];
  for (const [name, value] of lines) out.push(`${name}: ${value}`);
  if (bodyLength !== undefined) out.push(`Content-Length: ${bodyLength}`);
  return Buffer.from(out.join('\r\n') + '\r\n\r\n', 'latin1');
}

/** Opens a subscriptions/listen stream with well-formed headers. */
export function openListen(port, id, notifications) {
  const body = Buffer.from(JSON.stringify(listenBody(id, notifications)));
  return rawStream(port, Buffer.concat([headWithLines('POST', '/mcp', Object.entries(LISTEN_HEADERS), body.length), body]));
}

/** Opens a GET /mcp stream for a session. */
export function openGet(port, sessionId, version = '2025-11-25') {
  return rawStream(port, headWithLines('GET', '/mcp', [['Accept', 'text/event-stream'], ['MCP-Protocol-Version', version], ['Mcp-Session-Id', sessionId]]));
}

/** initialize over a fresh connection (Connection: close); the session id the bridge handed out. */
export async function newSession(port, version = '2025-11-25') {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'streamfuzz', version: '0' } } });
  const res = await rawHttp(port, requestHead('POST', '/mcp', { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, Buffer.byteLength(body)), [Buffer.from(body)]);
  if (res.status !== 200 || !res.headers['mcp-session-id']) throw new Error(`initialize: ${res.status} ${res.body.slice(0, 200)}`);
  return res.headers['mcp-session-id'];
}

/** Every gauge and counter of /metrics by name (fetched on a connection of its own, closed after). */
export async function gauges(port) {
  const res = await rawHttp(port, requestHead('GET', '/metrics', {}));
  const out = {};
  for (const m of res.body.matchAll(/^(cc_[a-z_]+) (\d+(?:\.\d+)?)$/gm)) out[m[1]] = Number(m[2]);
  return out;
}

/**
 * Tracks live async resources of the given types (Timeout, TCPWRAP ...) from now on, unref'd ones
 * included (process.getActiveResourcesInfo leaves those out). `leftSince(mark)` lists the ones
 * created after `mark` that are still alive, each with the stack that made it.
 */
export function resourceTracker(types = ['Timeout', 'TCPWRAP']) {
  const live = new Map();
  let seq = 0;
  const hook = createHook({
    init(asyncId, type) {
      if (!types.includes(type)) return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 12;
      const stack = new Error().stack.split('\n').slice(2).filter((l) => !l.includes('node:internal')).join('\n');
      Error.stackTraceLimit = limit;
      live.set(asyncId, { type, seq: ++seq, stack });
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    mark: () => seq,
    /** Those the code under test made: a test's own sleeps and client sockets are left out. */
    leftSince: (mark) => [...live.values()].filter((r) => r.seq > mark && !/\/test\//.test(r.stack)),
    disable: () => hook.disable(),
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
