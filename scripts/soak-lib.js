// Helpers for scripts/soak.js: an HTTP client that tallies statuses, fake computers (real ws
// clients bound to chosen loopback addresses), and small statistics. Loopback only.
import http from 'node:http';
import WebSocket from 'ws';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Every HTTP answer the soak got from the MCP port, by status. */
export const tally = { statuses: new Map(), errors: 0, answered: 0 };

export function count(status) {
  tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
  tally.answered++;
}

export const fiveXX = () => [...tally.statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One HTTP request; resolves { status, text } or { status: 0, error } (the socket died). Never rejects. */
export function request(base, { method = 'POST', path = '/mcp', headers = {}, body, timeoutMs = 60_000, fresh = false } = {}) {
  const url = new URL(base);
  return new Promise((resolve) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, headers, agent: fresh ? false : agent },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          count(res.statusCode);
          resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', () => resolve({ status: 0, error: 'response aborted' }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('client timeout')));
    req.on('error', (err) => {
      tally.errors++;
      resolve({ status: 0, error: err.message });
    });
    req.end(body);
  });
}

/** A fake computer: a ws client from `localAddress` that says hello and answers with `onRequest`. */
export class Computer {
  constructor(url, { computerId, token, localAddress = '127.0.0.1', onRequest = () => null }) {
    Object.assign(this, { url, computerId, token, localAddress, onRequest });
    this.requests = 0;
  }

  /** Resolves with the bridge's first answer (hello-ok / hello-error) or null if the socket died first. */
  link(hello = { type: 'hello', computerId: this.computerId, token: this.token }) {
    return new Promise((resolve) => {
      const ws = (this.ws = new WebSocket(this.url, { localAddress: this.localAddress, maxPayload: 64 * 1024 * 1024 }));
      let answered = false;
      const done = (value) => {
        if (!answered) {
          answered = true;
          resolve(value);
        }
      };
      ws.on('open', () => ws.send(JSON.stringify(hello)));
      ws.on('message', (data) => {
        let frame;
        try {
          frame = JSON.parse(data.toString());
        } catch {
          return;
        }
        if (frame.type === 'hello-ok' || frame.type === 'hello-error') return done(frame);
        if (frame.type === 'request') {
          this.requests++;
          this.onRequest(frame, this);
        }
      });
      ws.on('unexpected-response', (_req, res) => {
        res.resume();
        done({ type: 'http', status: res.statusCode });
      });
      ws.on('error', () => done(null));
      ws.on('close', () => done(null));
    });
  }

  answer(id, result) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'response', id, ok: true, result }));
  }

  /** Waits until the socket's send buffer drains below `bytes` (or it closes). */
  async drain(bytes = 1 << 20) {
    while (this.ws.readyState === WebSocket.OPEN && this.ws.bufferedAmount > bytes) await sleep(5);
  }

  close() {
    if (this.ws && this.ws.readyState !== WebSocket.CLOSED) this.ws.terminate();
  }
}

/** An exec-lua result the bridge accepts, returning `value`. */
export const execResult = (value) => ({ output: '', returns: [{ type: 'number', value }], truncated: false });

export function stats(values) {
  if (values.length === 0) return { n: 0, p50: null, p99: null, max: null };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted[sorted.length - 1]) };
}

const round = (n) => Math.round(n * 10) / 10;

/** Runs `fn(i)` for i in [0, total) with at most `width` at once. */
export async function pool(total, width, fn) {
  let next = 0;
  const worker = async () => {
    while (next < total) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, total) }, worker));
}
