// A small stand-in for the bridge's link listener: a real WebSocketServer on
// a free loopback port that plays the bridge's side of the link protocol and
// records every frame, so tests can drive and inspect the Lua program.
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { waitFor } from './waiters.js';

class Link {
  constructor(ws) {
    this.ws = ws;
    this.frames = []; // parsed frames from the computer, in order
    this.raw = []; // the text of every frame
    this.waiters = new Set();
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      for (const w of this.waiters) w.check();
      resolve(this.closeInfo);
    }));
    ws.on('message', (data) => {
      const text = data.toString('utf8');
      this.raw.push(text);
      let frame;
      try {
        frame = JSON.parse(text);
      } catch {
        frame = { invalidJson: text };
      }
      this.frames.push(frame);
      for (const w of this.waiters) w.check();
    });
  }

  send(frame) {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  close(code, reason) {
    this.ws.close(code, reason);
  }

  /** Resolves with the first frame matching `pred` (also one already received). */
  waitFrame(pred, timeoutMs = 10000) {
    return waitFor(
      this.waiters,
      () => {
        const frame = this.frames.find(pred);
        if (frame) return frame;
        if (this.closeInfo) {
          throw new Error(`link closed (${this.closeInfo.code}) before a matching frame; got ${JSON.stringify(this.frames)}`);
        }
        return undefined;
      },
      timeoutMs,
      () => `timed out waiting for a frame; got ${JSON.stringify(this.frames)}`,
    );
  }

  /** Sends a request and resolves with its response frame. */
  async request(method, params, timeoutMs) {
    const id = randomUUID();
    this.send(params === undefined ? { type: 'request', id, method } : { type: 'request', id, method, params });
    return this.waitFrame((f) => f.type === 'response' && f.id === id, timeoutMs);
  }

  /** exec-lua request; resolves with the response frame. */
  exec(code, timeoutMs) {
    return this.request('exec-lua', { code }, timeoutMs);
  }
}

/**
 * Starts a fake link listener. Options: hello ('ok' answers hello with
 * hello-ok, 'none' stays silent, or a function(link, helloFrame) to answer).
 */
export async function startFakeBridge({ hello = 'ok' } = {}) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const links = [];
  const linkWaiters = [];
  wss.on('connection', (ws, req) => {
    const link = new Link(ws);
    link.path = req.url; // the path and query the computer dialled
    links.push(link);
    link.hello = link.waitFrame((f) => f.type === 'hello', 60000).catch(() => null);
    link.hello.then((frame) => {
      if (!frame) return;
      if (hello === 'ok') link.send({ type: 'hello-ok' });
      else if (typeof hello === 'function') hello(link, frame);
    });
    for (const w of linkWaiters.splice(0)) w();
  });
  const bridge = {
    url: `ws://127.0.0.1:${wss.address().port}`,
    port: wss.address().port,
    links,
    /** Resolves with the n-th link (0-based) once it has connected. */
    async link(n = 0, timeoutMs = 10000) {
      const deadline = Date.now() + timeoutMs;
      while (!links[n]) {
        if (Date.now() > deadline) throw new Error(`no link #${n} within ${timeoutMs} ms (have ${links.length})`);
        await new Promise((resolve) => {
          const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
          linkWaiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return links[n];
    },
    /**
     * The link the computer is linked on: the first that answers a ping after its hello, skipping
     * connections the computer gave up (at the harness's timeScale its 5 s hello wait is 50 ms, which
     * a loaded machine can pass before hello-ok arrives; it then links on a new connection).
     */
    async liveLink(timeoutMs = 10000) {
      for (let n = 0; ; n = Math.max(n + 1, links.length - 1)) {
        const link = await bridge.link(n, timeoutMs);
        if (!(await link.hello)) continue;
        const pong = await link.request('ping', undefined, timeoutMs).catch(() => null);
        if (pong?.ok) return link;
      }
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise((resolve) => wss.close(() => resolve()));
    },
  };
  return bridge;
}

/** A free loopback port with nothing listening (taken, then released). */
export async function closedPort() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const { port } = wss.address();
  await new Promise((resolve) => wss.close(() => resolve()));
  return port;
}
