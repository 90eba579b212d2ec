// The link listener: WebSocket for computers (any path), plus plain `GET /mcp-computer.lua` so a
// player can `wget` the program from the same address the computer will dial.
import { createServer, type IncomingMessage } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import type { Logger } from '../log.js';
import { HELLO_OK, encodeHelloError, parseComputerFrame, type HelloErrorCode } from './frames.js';
import { Admission, isRefusal, type AdmissionLimits, type Ticket } from './admission.js';
import { Metrics } from '../metrics.js';
import { LogBudget } from './log-budget.js';
import { InboundThrottle } from './throttle.js';
import { describe, type Link, type LinkRegistry, type LinkSocket } from './registry.js';

export interface LinkServerOptions {
  host: string;
  port: number;
  heartbeatMs: number;
  maxFrameBytes: number;
  /** A socket that has not said hello by then is closed. */
  helloTimeoutMs?: number;
  luaProgramPath: string;
  /** When it holds tokens, a hello must carry one of them (CC_LINK_TOKEN). */
  tokens?: { readonly enabled: boolean; matches(token: string | null): boolean };
  /** Caps on links and on connections that have not said hello; none when absent. */
  limits?: AdmissionLimits;
  metrics?: Metrics;
  /** Most frame bytes one socket may send a second before its reading pauses (CC_LINK_MAX_BYTES_PER_S). */
  maxBytesPerSecond?: number;
  /** Deepest nesting a frame may have (CC_MAX_JSON_DEPTH); 64 when absent. */
  maxJsonDepth?: number;
}

export interface LinkServer {
  address: AddressInfo;
  /** Closes every link with 1001 and stops listening. */
  close(): Promise<void>;
}

interface SocketState {
  link: Link | null;
  /** The TCP socket under the WebSocket. */
  raw: Socket;
  alive: boolean;
  remoteAddress: string;
  helloTimer: NodeJS.Timeout | null;
  ticket: Ticket;
  throttle: InboundThrottle;
}

const CLOSE_POLICY = 1008;
const CLOSE_GOING_AWAY = 1001;
/** A wrong or missing link token: the computer should stop and ask for the right one. */
export const CLOSE_UNAUTHORIZED = 4401;
/** A limit was hit: try again later. */
const CLOSE_TRY_AGAIN = 1013;

const UNLIMITED: AdmissionLimits = {
  maxLinks: Infinity,
  maxLinksPerAddress: Infinity,
  maxPendingHellos: Infinity,
  maxPendingHellosPerAddress: Infinity,
  helloRate: Infinity,
};

export async function startLinkServer(registry: LinkRegistry, log: Logger, options: LinkServerOptions): Promise<LinkServer> {
  const helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
  const metrics = options.metrics ?? new Metrics();
  const admission = new Admission(options.limits ?? UNLIMITED);
  // warnings a peer can provoke at will go through a budget; metrics still count every event
  const budget = new LogBudget(50);
  const warn = (line: string) => {
    const text = budget.take(line);
    if (text !== null) log.warn(text);
  };
  /** Tickets by raw socket, taken before the WebSocket handshake and given back when the socket closes. */
  const tickets = new WeakMap<object, Ticket>();
  // node checks these only every connectionsCheckingInterval (30 s unless set)
  const http = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/mcp-computer.lua') {
      readFile(options.luaProgramPath).then(
        (body) => {
          res.writeHead(200, { 'content-type': 'text/x-lua; charset=utf-8', 'content-length': body.length });
          res.end(body);
        },
        (err: Error) => {
          log.error(`cannot read ${options.luaProgramPath}: ${err.message}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end('mcp-computer.lua is missing from this bridge install\n');
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('This is the cc-mcp-bridge computer link. Connect with a WebSocket, or GET /mcp-computer.lua.\n');
  });

  // listen before attaching ws: a listen error then rejects here instead of surfacing on the wss
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });

  const wss = new WebSocketServer({
    server: http,
    maxPayload: options.maxFrameBytes,
    // refused before the handshake, so a flood of sockets costs little
    verifyClient: (info, callback) => {
      const socket = info.req.socket;
      const ticket = admission.open(socket.remoteAddress ?? '?');
      if (isRefusal(ticket)) {
        metrics.linksRefused.inc(ticket.reason);
        log.debug(`link from ${socket.remoteAddress} refused: ${ticket.message}`);
        callback(false, 503, ticket.message, { 'retry-after': String(ticket.retryAfter) });
        return;
      }
      tickets.set(socket, ticket);
      socket.on('close', onRawClose);
      callback(true);
    },
    // our `states` map is the one list of sockets (heartbeat, shutdown): no second set of them
    clientTracking: false,
  });
  const states = new Map<WebSocket, SocketState>();
  metrics.addGauge({ name: 'cc_link_connections_pre_hello', help: 'Link sockets that have not said hello yet (each holds one hello timer).', read: () => admission.pending });

  // The handlers below are shared by every socket (`this` is the socket) instead of closures made per
  // connection: with 10,000 idle links the closures, their contexts and a kept hello timer were a
  // third of what a link cost on the heap beyond ws itself.
  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    const state: SocketState = {
      link: null,
      raw: req.socket,
      alive: true,
      remoteAddress: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`,
      helloTimer: null,
      // verifyClient always ran for this socket; the fallback only satisfies the types
      ticket: tickets.get(req.socket) ?? { address: req.socket.remoteAddress ?? '?', stage: 'closed' },
      throttle: new InboundThrottle(req.socket, options.maxBytesPerSecond ?? Infinity),
    };
    states.set(ws, state);
    state.helloTimer = setTimeout(onHelloTimeout, helloTimeoutMs, ws, state);
    ws.on('pong', onPong);
    ws.on('message', onFrame);
    ws.on('error', onError);
    ws.on('close', onClose);
  });

  function onRawClose(this: object): void {
    const ticket = tickets.get(this);
    if (ticket) admission.close(ticket);
  }

  function onHelloTimeout(ws: WebSocket, state: SocketState): void {
    state.helloTimer = null;
    warn(`link from ${state.remoteAddress} sent no hello within ${helloTimeoutMs} ms; closing`);
    ws.close(CLOSE_POLICY, 'no hello');
  }

  function onPong(this: WebSocket): void {
    const state = states.get(this) as SocketState;
    state.alive = true;
    if (state.link) registry.touch(state.link);
  }

  function onFrame(this: WebSocket, data: RawData, isBinary: boolean): void {
    const state = states.get(this) as SocketState;
    // nothing a peer sends may throw out of here: ws would hand it to the process as uncaught
    try {
      onMessage(this, state, data, isBinary);
    } catch (err) {
      metrics.framesRejected.inc('internal');
      const line = budget.take(`link from ${state.remoteAddress}: handling a frame failed; frame dropped: ${(err as Error).stack ?? String(err)}`);
      if (line !== null) log.error(line);
    }
  }

  function onError(this: WebSocket, err: Error & { code?: string }): void {
    const state = states.get(this);
    warn(`link from ${state?.remoteAddress ?? '?'} error: ${err.code ?? ''} ${err.message}`.replace('  ', ' '));
  }

  function onClose(this: WebSocket, code: number, reason: Buffer): void {
    const state = states.get(this) as SocketState;
    states.delete(this);
    state.throttle.dispose();
    if (state.helloTimer) clearTimeout(state.helloTimer);
    const link = state.link;
    if (!link) return;
    const why = `closed ${code}${reason.length ? ` ${reason.toString()}` : ''}`;
    if (registry.unregister(link, why)) log.info(`unlinked ${describe(link.computerId, link.label)}: ${why}`);
  }

  function onMessage(ws: WebSocket, state: SocketState, data: RawData, isBinary: boolean): void {
    metrics.framesIn++;
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
    if (state.throttle.charge(size)) {
      metrics.linksThrottled++;
      warn(`link from ${state.remoteAddress} sent more than ${options.maxBytesPerSecond} bytes in a second; reading paused until the second is over`);
    }
    if (state.link) registry.touch(state.link);
    if (isBinary) {
      metrics.framesRejected.inc('binary');
      warn(`link from ${state.remoteAddress}: binary frame dropped`);
      return;
    }
    const parsed = parseComputerFrame(data.toString(), options.maxJsonDepth);
    if (!parsed.ok) {
      metrics.framesRejected.inc(parsed.error.startsWith('hello.') ? 'invalid_hello' : 'invalid');
      warn(`link from ${state.remoteAddress}: ${parsed.error}; frame dropped`);
      if (!state.link && parsed.error.startsWith('hello.')) rejectHello(ws, state, parsed.error);
      // the request it answers fails now with what was wrong, not at its timeout
      if (state.link && parsed.id !== undefined) {
        registry.resolve(state.link, { type: 'response', id: parsed.id, ok: false, error: `protocol error: the computer sent a malformed response (${parsed.error})` });
      }
      return;
    }
    const frame = parsed.frame;
    if (frame.type === 'hello') {
      if (state.link) {
        metrics.framesRejected.inc('second_hello');
        warn(`link ${describe(state.link.computerId, state.link.label)} sent a second hello; ignored`);
        return;
      }
      if (state.ticket.stage !== 'pending') return; // already refused; the socket is closing
      const current = registry.get(frame.computerId);
      const refusal = admission.hello(state.ticket, registry.size, current ? current.remoteAddress.slice(0, current.remoteAddress.lastIndexOf(':')) : null);
      if (refusal) {
        metrics.linksRefused.inc(refusal.reason);
        warn(`link from ${state.remoteAddress} (computer ${frame.computerId}) refused: ${refusal.message}`);
        refuse(ws, state, refusal.message, 'busy', CLOSE_TRY_AGAIN);
        return;
      }
      // only after the limits, so a token guess costs a hello from the rate budget
      if (options.tokens?.enabled && !options.tokens.matches(frame.token)) {
        metrics.linksRefused.inc('unauthorized');
        // the remote address, never the token
        warn(`link from ${state.remoteAddress} (computer ${frame.computerId}) refused: ${frame.token === null ? 'no link token' : 'wrong link token'}`);
        refuse(ws, state, 'the bridge refused the token (CC_LINK_TOKEN); set it on the computer with: set mcp.token <token>', 'unauthorized', CLOSE_UNAUTHORIZED);
        return;
      }
      if (state.helloTimer) clearTimeout(state.helloTimer);
      state.helloTimer = null;
      const { link, replaced } = registry.register(new CountedSocket(ws, state.raw), frame, state.remoteAddress);
      state.link = link;
      metrics.linksLinked++;
      send(ws, HELLO_OK);
      if (replaced) metrics.linksReplaced++;
      if (replaced) log.info(`replaced ${describe(replaced.computerId, replaced.label)} from ${replaced.remoteAddress}`);
      log.info(`linked ${describe(link.computerId, link.label)} from ${state.remoteAddress}${link.version ? ` (mcp-computer ${link.version})` : ''}`);
      return;
    }
    if (!state.link) {
      metrics.framesRejected.inc('before_hello');
      rejectHello(ws, state, 'the first frame must be a hello');
      return;
    }
    if (frame.type === 'info') {
      const changes = registry.updateInfo(state.link, frame);
      if (changes.length > 0) log.info(`computer ${describe(state.link.computerId, state.link.label)}: ${changes.join(', ')}`);
      return;
    }
    if (!registry.resolve(state.link, frame)) {
      metrics.framesRejected.inc('unknown_id');
      log.debug(`link ${describe(state.link.computerId, state.link.label)}: response ${frame.id} matches no request in flight on this link; dropped`);
    }
  }

  function rejectHello(ws: WebSocket, state: SocketState, error: string): void {
    metrics.linksRefused.inc('invalid');
    refuse(ws, state, error, 'invalid', CLOSE_POLICY);
  }

  /** hello-error, then close: the socket never becomes a link, so it is never sent a request. */
  function refuse(ws: WebSocket, state: SocketState, error: string, code: HelloErrorCode, closeCode: number): void {
    if (state.helloTimer) clearTimeout(state.helloTimer);
    admission.close(state.ticket);
    send(ws, encodeHelloError(error, code));
    const reasons: Record<HelloErrorCode, string> = { invalid: 'invalid hello', unauthorized: 'unauthorized', busy: 'try again later' };
    ws.close(closeCode, reasons[code]);
  }

  /** Link sockets corked in this turn of the event loop; one setImmediate uncorks them all. */
  const corked: Socket[] = [];
  function uncorkAll(): void {
    for (const raw of corked) raw.uncork();
    corked.length = 0;
  }

  function send(ws: WebSocket, text: string): void {
    metrics.framesOut++;
    ws.send(text);
  }

  /**
   * What the registry sends through: the socket, with frames counted. One small object per link.
   * Frames sent to one computer in the same turn of the event loop leave in one write: its raw socket
   * is corked at the first and uncorked once this turn's I/O is handled (at N=1 C=100 the probes of
   * many clients reach the one computer together; one writev per frame was the bridge's top cost).
   */
  class CountedSocket implements LinkSocket {
    constructor(
      private readonly ws: WebSocket,
      private readonly raw: Socket,
    ) {}
    send(text: string): void {
      if (this.raw.writableCorked === 0) {
        if (corked.length === 0) setImmediate(uncorkAll);
        corked.push(this.raw);
        this.raw.cork();
      }
      send(this.ws, text);
    }
    close(code: number, reason: string): void {
      this.ws.close(code, reason);
    }
  }

  const heartbeat = setInterval(() => {
    for (const [ws, state] of states) {
      if (!state.alive) {
        log.info(`link from ${state.remoteAddress} missed a heartbeat; terminating`);
        ws.terminate();
        continue;
      }
      state.alive = false;
      ws.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();


  return {
    address: http.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(heartbeat);
        for (const [ws, state] of states) {
          // end in-flight requests now so their MCP calls are answered before we exit
          if (state.link) registry.unregister(state.link, 'bridge shutting down');
          state.link = null;
          ws.close(CLOSE_GOING_AWAY, 'bridge shutting down');
        }
        wss.close();
        http.close(() => resolve());
        // sockets that do not finish the closing handshake promptly are cut
        setTimeout(() => {
          for (const ws of states.keys()) ws.terminate();
          http.closeAllConnections();
        }, 1000).unref();
      }),
  };
}

