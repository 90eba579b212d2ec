// Shared test helpers: a real bridge on ephemeral ports, MCP over real HTTP, and fake computers
// that are real WebSocket clients.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { startBridge } from '../dist/bridge.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/log.js';

/** Starts a bridge on free loopback ports. `logs` collects every log line for assertions. */
export async function startTestBridge(env = {}) {
  const logs = [];
  const config = loadConfig({
    MCP_PORT: '0',
    CC_LINK_PORT: '0',
    CC_LINK_HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    ...env,
  });
  const bridge = await startBridge(config, createLogger(config.logLevel, (line) => logs.push(line)));
  return Object.assign(bridge, { logs, config });
}

/** Runs fn with a fresh test bridge and always closes it. */
export async function withBridge(env, fn) {
  const bridge = await startTestBridge(env);
  try {
    return await fn(bridge);
  } finally {
    await bridge.close();
  }
}

/** POSTs a JSON-RPC body (object, array or raw string) to the MCP endpoint. */
export async function rpc(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // left as text
  }
  return { status: res.status, headers: res.headers, text, json };
}

let nextId = 1;

/** Calls a tool and returns the JSON-RPC `result` (throws on a JSON-RPC error). */
export async function callTool(bridge, name, args = {}, id = nextId++) {
  const { json } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  if (json.error) throw new Error(`JSON-RPC error ${json.error.code}: ${json.error.message}`);
  return json.result;
}

export const pongText = (id, label) => `pong from ${id} (Label: ${label ?? 'null'})`;

/**
 * A fake computer: a real ws client. By default it answers ping with the pong text; `onRequest`
 * may return a response object (sent), null (stay silent) or a promise of either.
 */
export class FakeComputer {
  constructor(url, { computerId, computerLabel = null, onRequest } = {}) {
    this.url = url;
    this.computerId = computerId;
    this.computerLabel = computerLabel;
    this.onRequest = onRequest ?? ((frame) => this.defaultAnswer(frame));
    this.received = [];
    this.closed = null;
  }

  defaultAnswer(frame) {
    if (frame.method === 'ping') return { ok: true, result: pongText(this.computerId, this.computerLabel) };
    return { ok: false, error: 'unknown method' };
  }

  /** Opens the socket and sends hello; resolves with the bridge's first answer. */
  async link(hello = { type: 'hello', computerId: this.computerId, computerLabel: this.computerLabel }) {
    this.ws = new WebSocket(this.url);
    this.ws.on('message', (data) => this.onMessage(data));
    this.closed = once(this.ws, 'close').then(([code, reason]) => ({ code, reason: reason.toString() }));
    await once(this.ws, 'open');
    const first = this.next((f) => f.type === 'hello-ok' || f.type === 'hello-error');
    this.ws.send(typeof hello === 'string' ? hello : JSON.stringify(hello));
    return first;
  }

  onMessage(data) {
    const frame = JSON.parse(data.toString());
    this.received.push(frame);
    for (const waiter of [...(this.waiters ?? [])]) {
      if (waiter.predicate(frame)) {
        this.waiters.delete(waiter);
        waiter.resolve(frame);
      }
    }
    if (frame.type === 'request') {
      Promise.resolve(this.onRequest(frame)).then((answer) => {
        if (answer && this.ws.readyState === WebSocket.OPEN) this.send({ type: 'response', id: frame.id, ...answer });
      });
    }
  }

  /** Resolves with the next frame (already received or future) matching the predicate. */
  next(predicate) {
    const seen = this.received.find(predicate);
    if (seen) return Promise.resolve(seen);
    this.waiters ??= new Set();
    return new Promise((resolve) => this.waiters.add({ predicate, resolve }));
  }

  send(frame) {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  close(code = 1000) {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code);
    return this.closed;
  }
}

/** Links a fake computer and asserts hello-ok. */
export async function linkComputer(bridge, options) {
  const computer = new FakeComputer(bridge.linkUrl, options);
  const first = await computer.link();
  if (first.type !== 'hello-ok') throw new Error(`expected hello-ok, got ${JSON.stringify(first)}`);
  return computer;
}

/** Polls until fn() is truthy; gives up (failing the test) after giveUpMs instead of hanging the suite. */
export async function until(fn, intervalMs = 5, giveUpMs = 30_000) {
  // a hang guard, not a timing assertion: a condition that never comes fails the test with its code
  const deadline = Date.now() + giveUpMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`until: condition still false after ${giveUpMs} ms: ${fn}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Initializes over HTTP and returns the headers that keep the session the bridge handed out
 * (notifications/cancelled reaches only calls of the same session or connection).
 */
export async function session(url) {
  const { headers } = await rpc(url, { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } } });
  const id = headers.get('mcp-session-id');
  if (!id) throw new Error('initialize handed out no Mcp-Session-Id');
  return { 'mcp-session-id': id };
}

/** Whether a process still runs: it exists and is not a zombie waiting to be reaped (Linux /proc). */
export function processAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
