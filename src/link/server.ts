// The link listener: WebSocket for computers (any path), plus plain `GET /mcp-computer.lua` so a
// player can `wget` the program from the same address the computer will dial.
import { createServer, type IncomingMessage } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Logger } from '../log.js';
import { HELLO_OK, encodeHelloError, parseComputerFrame, type HelloErrorCode } from './frames.js';
import { Admission, isRefusal, type AdmissionLimits, type Ticket } from './admission.js';
import { Metrics } from '../metrics.js';
import { LogBudget } from './log-budget.js';
import { chargeFrame, disposeThrottle, type ThrottleState } from './throttle.js';
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

const CLOSE_POLICY = 1008;
const CLOSE_GOING_AWAY = 1001;
/** A wrong or missing link token: the computer should stop and ask for the right one. */
export const CLOSE_UNAUTHORIZED = 4401;
/** A limit was hit: try again later. */
const CLOSE_TRY_AGAIN = 1013;

/** Unwritten pongs that cut a peer (ws's default maxPendingAutoPongs). */
const MAX_PENDING_PONGS = 60;

/** The listener table every ComputerSocket shares: empty, and frozen so nothing is ever added to it. */
const NO_LISTENERS: object = Object.freeze(Object.create(null) as object);

const UNLIMITED: AdmissionLimits = {
  maxLinks: Infinity,
  maxLinksPerAddress: Infinity,
  maxPendingHellos: Infinity,
  maxPendingHellosPerAddress: Infinity,
  helloRate: Infinity,
};

export async function startLinkServer(registry: LinkRegistry, log: Logger, options: LinkServerOptions): Promise<LinkServer> {
  const helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
  const maxBytesPerSecond = options.maxBytesPerSecond ?? Infinity;
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

  /** Every computer socket open now, linked or not: the heartbeat and shutdown walk it. */
  const sockets = new Set<ComputerSocket>();

  /**
   * A computer's WebSocket. ws builds one per accepted socket (its `WebSocket` option), and it carries
   * what a link needs besides ws's own objects: the link state, the registry's `LinkSocket` (frames
   * counted, corked per turn), and its events, handled in `emit` instead of by four listeners per
   * socket. With 10,000 idle links, a separate state object and the Map entry to it, a wrapper for
   * the registry and the listeners (ws keeps them in a dictionary-mode object, ~280 B) were ~550 B of
   * a link's heap. The events handled here ('message', 'pong', 'error', 'close') reach no listener.
   */
  class ComputerSocket extends WebSocket implements LinkSocket, ThrottleState, Ticket {
    link: Link | null = null;
    /** The TCP socket under the WebSocket; set on 'connection'. */
    raw: Socket | null = null;
    alive = true;
    /** `address:port` of the peer, for the log and the link. */
    remoteAddress = '?';
    helloTimer: NodeJS.Timeout | null = null;
    // its admission ticket (admission.ts), copied from the one verifyClient took: no object of its own
    address = '?';
    stage: Ticket['stage'] = 'closed';
    // the inbound throttle's state (throttle.ts)
    throttleStart = -Infinity;
    throttleUsed = 0;
    throttleTimer: NodeJS.Timeout | null = null;
    /** Pongs to the peer's pings not yet written out (ws's autoPong, done here: see answerPing). */
    pendingPongs = 0;
    pongWritten: (() => void) | null = null;

    // ws builds it as `new WebSocket(null, undefined, options)`
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    constructor(...args: any[]) {
      super(...(args as ConstructorParameters<typeof WebSocket>));
      // Its events are handled in `emit` and it never has a listener, so it shares one frozen, empty
      // listener table instead of the per-emitter one (an object with a null prototype is in
      // dictionary mode: ~200 B a link). Frozen, so a listener added by mistake throws instead of
      // reaching every socket.
      (this as unknown as { _events: object })._events = NO_LISTENERS;
    }

    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override emit(event: string | symbol, ...args: any[]): boolean {
      switch (event) {
        case 'message':
          onFrame(this, args[0] as RawData, args[1] as boolean);
          return true;
        case 'ping':
          answerPing(this, args[0] as Buffer);
          return true;
        case 'pong':
          this.alive = true;
          if (this.link) registry.touch(this.link);
          return true;
        case 'error':
          onError(this, args[0] as Error & { code?: string });
          return true;
        case 'close':
          onClose(this, args[0] as number, args[1] as Buffer);
          return true;
        default:
          return super.emit(event, ...args);
      }
    }

    /**
     * Frames sent to one computer in the same turn of the event loop leave in one write: its raw
     * socket is corked at the first and uncorked once this turn's I/O is handled (at N=1 C=100 the
     * probes of many clients reach the one computer together; one writev per frame was the bridge's
     * top cost).
     */
    override send(text: string): void {
      const raw = this.raw;
      if (raw && raw.writableCorked === 0) {
        if (corked.length === 0) setImmediate(uncorkAll);
        corked.push(raw);
        raw.cork();
      }
      metrics.framesOut++;
      super.send(text);
    }
  }

  const wss = new WebSocketServer({
    server: http,
    maxPayload: options.maxFrameBytes,
    WebSocket: ComputerSocket,
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
      // until the WebSocket exists, the raw socket's close gives the ticket back
      tickets.set(socket, ticket);
      socket.on('close', onRawClose);
      callback(true);
    },
    // `sockets` is the one list of them (heartbeat, shutdown): no second set of them
    clientTracking: false,
    // answerPing does it: ws's would make a closure per socket, and computers never ping
    autoPong: false,
  });
  metrics.addGauge({ name: 'cc_link_connections_pre_hello', help: 'Link sockets that have not said hello yet (each holds one hello timer).', read: () => admission.pending });

  // The upgrade request is not kept: what the link needs from it is copied here.
  wss.on('connection', (ws: ComputerSocket, req: IncomingMessage) => {
    const raw = req.socket;
    ws.raw = raw;
    // one flat string (a template literal would keep a cons string and its left half: 64 B, not 32)
    ws.remoteAddress = [raw.remoteAddress ?? '?', raw.remotePort ?? '?'].join(':');
    // verifyClient always ran for this socket; the fallback only satisfies the types
    // verifyClient always ran for this socket; without a ticket it stays 'closed' (never counted)
    const ticket = tickets.get(raw);
    if (ticket) {
      ws.address = ticket.address;
      ws.stage = ticket.stage;
    }
    // from now on the WebSocket's close gives the ticket back
    tickets.delete(raw);
    raw.off('close', onRawClose);
    ws.helloTimer = setTimeout(onHelloTimeout, helloTimeoutMs, ws);
    sockets.add(ws);
  });

  function onRawClose(this: object): void {
    const ticket = tickets.get(this);
    if (ticket) admission.close(ticket);
  }

  /**
   * A peer's ping gets a pong, as ws's autoPong does (and like it, a peer with MAX_PENDING_PONGS pongs
   * not yet written out, i.e. one that pings faster than they can be written, is cut); the callback
   * that counts them is made at the first ping instead of for every socket.
   */
  function answerPing(ws: ComputerSocket, data: Buffer): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.pendingPongs >= MAX_PENDING_PONGS) {
      ws.terminate();
      return;
    }
    ws.pendingPongs++;
    ws.pongWritten ??= () => void ws.pendingPongs--;
    ws.pong(data, false, ws.pongWritten);
  }

  function onHelloTimeout(ws: ComputerSocket): void {
    ws.helloTimer = null;
    warn(`link from ${ws.remoteAddress} sent no hello within ${helloTimeoutMs} ms; closing`);
    ws.close(CLOSE_POLICY, 'no hello');
  }

  function onFrame(ws: ComputerSocket, data: RawData, isBinary: boolean): void {
    // nothing a peer sends may throw out of here: ws would hand it to the process as uncaught
    try {
      onMessage(ws, data, isBinary);
    } catch (err) {
      metrics.framesRejected.inc('internal');
      const line = budget.take(`link from ${ws.remoteAddress}: handling a frame failed; frame dropped: ${(err as Error).stack ?? String(err)}`);
      if (line !== null) log.error(line);
    }
  }

  function onError(ws: ComputerSocket, err: Error & { code?: string }): void {
    warn(`link from ${ws.remoteAddress} error: ${err.code ?? ''} ${err.message}`.replace('  ', ' '));
  }

  function onClose(ws: ComputerSocket, code: number, reason: Buffer): void {
    sockets.delete(ws);
    disposeThrottle(ws);
    if (ws.helloTimer) clearTimeout(ws.helloTimer);
    ws.helloTimer = null;
    admission.close(ws);
    const link = ws.link;
    if (!link) return;
    const why = `closed ${code}${reason.length ? ` ${reason.toString()}` : ''}`;
    if (registry.unregister(link, why)) log.info(`unlinked ${describe(link.computerId, link.label)}: ${why}`);
  }

  function onMessage(ws: ComputerSocket, data: RawData, isBinary: boolean): void {
    metrics.framesIn++;
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
    if (chargeFrame(ws, size, maxBytesPerSecond, Date.now())) {
      metrics.linksThrottled++;
      warn(`link from ${ws.remoteAddress} sent more than ${options.maxBytesPerSecond} bytes in a second; reading paused until the second is over`);
    }
    if (ws.link) registry.touch(ws.link);
    if (isBinary) {
      metrics.framesRejected.inc('binary');
      warn(`link from ${ws.remoteAddress}: binary frame dropped`);
      return;
    }
    const parsed = parseComputerFrame(data.toString(), options.maxJsonDepth);
    if (!parsed.ok) {
      metrics.framesRejected.inc(parsed.error.startsWith('hello.') ? 'invalid_hello' : 'invalid');
      warn(`link from ${ws.remoteAddress}: ${parsed.error}; frame dropped`);
      if (!ws.link && parsed.error.startsWith('hello.')) rejectHello(ws, parsed.error);
      // the request it answers fails now with what was wrong, not at its timeout
      if (ws.link && parsed.id !== undefined) {
        registry.resolve(ws.link, { type: 'response', id: parsed.id, ok: false, error: `protocol error: the computer sent a malformed response (${parsed.error})` });
      }
      return;
    }
    const frame = parsed.frame;
    if (frame.type === 'hello') {
      if (ws.link) {
        metrics.framesRejected.inc('second_hello');
        warn(`link ${describe(ws.link.computerId, ws.link.label)} sent a second hello; ignored`);
        return;
      }
      if (ws.stage !== 'pending') return; // already refused; the socket is closing
      const current = registry.get(frame.computerId);
      const refusal = admission.hello(ws, registry.size, current ? current.remoteAddress.slice(0, current.remoteAddress.lastIndexOf(':')) : null);
      if (refusal) {
        metrics.linksRefused.inc(refusal.reason);
        warn(`link from ${ws.remoteAddress} (computer ${frame.computerId}) refused: ${refusal.message}`);
        refuse(ws, refusal.message, 'busy', CLOSE_TRY_AGAIN);
        return;
      }
      // only after the limits, so a token guess costs a hello from the rate budget
      if (options.tokens?.enabled && !options.tokens.matches(frame.token)) {
        metrics.linksRefused.inc('unauthorized');
        // the remote address, never the token
        warn(`link from ${ws.remoteAddress} (computer ${frame.computerId}) refused: ${frame.token === null ? 'no link token' : 'wrong link token'}`);
        refuse(ws, 'the bridge refused the token (CC_LINK_TOKEN); set it on the computer with: set mcp.token <token>', 'unauthorized', CLOSE_UNAUTHORIZED);
        return;
      }
      if (ws.helloTimer) clearTimeout(ws.helloTimer);
      ws.helloTimer = null;
      const { link, replaced } = registry.register(ws, frame, ws.remoteAddress);
      ws.link = link;
      metrics.linksLinked++;
      ws.send(HELLO_OK);
      if (replaced) metrics.linksReplaced++;
      if (replaced) log.info(`replaced ${describe(replaced.computerId, replaced.label)} from ${replaced.remoteAddress}`);
      log.info(`linked ${describe(link.computerId, link.label)} from ${ws.remoteAddress}${link.version ? ` (mcp-computer ${link.version})` : ''}`);
      return;
    }
    if (!ws.link) {
      metrics.framesRejected.inc('before_hello');
      rejectHello(ws, 'the first frame must be a hello');
      return;
    }
    if (frame.type === 'info') {
      const changes = registry.updateInfo(ws.link, frame);
      if (changes.length > 0) log.info(`computer ${describe(ws.link.computerId, ws.link.label)}: ${changes.join(', ')}`);
      return;
    }
    if (!registry.resolve(ws.link, frame)) {
      metrics.framesRejected.inc('unknown_id');
      log.debug(`link ${describe(ws.link.computerId, ws.link.label)}: response ${frame.id} matches no request in flight on this link; dropped`);
    }
  }

  function rejectHello(ws: ComputerSocket, error: string): void {
    metrics.linksRefused.inc('invalid');
    refuse(ws, error, 'invalid', CLOSE_POLICY);
  }

  /** hello-error, then close: the socket never becomes a link, so it is never sent a request. */
  function refuse(ws: ComputerSocket, error: string, code: HelloErrorCode, closeCode: number): void {
    if (ws.helloTimer) clearTimeout(ws.helloTimer);
    ws.helloTimer = null;
    admission.close(ws);
    ws.send(encodeHelloError(error, code));
    const reasons: Record<HelloErrorCode, string> = { invalid: 'invalid hello', unauthorized: 'unauthorized', busy: 'try again later' };
    ws.close(closeCode, reasons[code]);
  }

  /** Link sockets corked in this turn of the event loop; one setImmediate uncorks them all. */
  const corked: Socket[] = [];
  function uncorkAll(): void {
    for (const raw of corked) raw.uncork();
    corked.length = 0;
  }

  const heartbeat = setInterval(() => {
    for (const ws of sockets) {
      if (!ws.alive) {
        log.info(`link from ${ws.remoteAddress} missed a heartbeat; terminating`);
        ws.terminate();
        continue;
      }
      ws.alive = false;
      ws.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();


  return {
    address: http.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(heartbeat);
        for (const ws of sockets) {
          // end in-flight requests now so their MCP calls are answered before we exit
          if (ws.link) registry.unregister(ws.link, 'bridge shutting down');
          ws.link = null;
          ws.close(CLOSE_GOING_AWAY, 'bridge shutting down');
        }
        wss.close();
        http.close(() => resolve());
        // sockets that do not finish the closing handshake promptly are cut
        setTimeout(() => {
          for (const ws of sockets) ws.terminate();
          http.closeAllConnections();
        }, 1000).unref();
      }),
  };
}

