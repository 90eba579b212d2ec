// The link listener: WebSocket for computers (any path), plus plain `GET /mcp-computer.lua` so a
// player can `wget` the program from the same address the computer will dial.
import { createServer, type IncomingMessage } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from './ws.js';
import type { Logger } from '../log.js';
import { Admission, isRefusal, type AdmissionLimits, type Ticket } from './admission.js';
import { Metrics } from '../metrics.js';
import { LogBudget } from './log-budget.js';
import { disposeThrottle } from './throttle.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { logName, type Link, type LinkRegistry } from './registry.js';
import { plural } from '../plural.js';
import { MAX_JOBS, MAX_PERIPHERALS } from './identity.js';
import { socketClass, type ComputerSocket } from './computer-socket.js';
import { boundYoungGeneration } from './young-gen-hold.js';
import { CLOSE_POLICY, CLOSE_TRY_AGAIN, helloHandshake } from './hello.js';
import { linkOriginProblem } from './origin.js';
import { isLoopbackHost } from '../loopback.js';
import type { KeyPins } from './pins.js';
import { frameReader } from './frame-reader.js';

export interface LinkServerOptions {
  host: string;
  port: number;
  heartbeatMs: number;
  maxFrameBytes: number;
  /** A socket that has not said hello by then is closed. */
  helloTimeoutMs?: number;
  luaProgramPath: string;
  /**
   * CC_LINK_ALLOWED_ORIGINS: web origins whose pages may open a link. A handshake with any other
   * Origin header is refused (403): browsers send one on every WebSocket, CC:Tweaked sends none.
   */
  allowedOrigins?: readonly string[];
  /** When it holds tokens, a hello must carry one of them (CC_LINK_TOKEN). */
  tokens?: { readonly enabled: boolean; matches(token: string | null): boolean };
  /** Computer ids pinned to their first key (CC_LINK_PIN); no pinning when absent. */
  pins?: KeyPins;
  /** Caps on links and on connections that have not said hello; none when absent. */
  limits?: AdmissionLimits;
  metrics?: Metrics;
  /** Most frame bytes one socket may send a second before its reading pauses (CC_LINK_MAX_BYTES_PER_S). */
  maxBytesPerSecond?: number;
  /** Most bytes a link socket may hold unread by its computer before it is dropped (CC_LINK_MAX_UNSENT_BYTES); unbounded when absent. */
  maxUnsentBytes?: number;
  /** Deepest nesting a frame may have (CC_MAX_JSON_DEPTH); 64 when absent. */
  maxJsonDepth?: number;
  /** While computers link, V8's young generation grows to at most this many bytes (CC_LINK_YOUNG_GEN_MB); 0 or absent: no bound. */
  youngGenMaxBytes?: number;
}

export interface LinkServer {
  address: AddressInfo;
  /** Closes every link with 1001 and stops listening. */
  close(): Promise<void>;
}

const CLOSE_GOING_AWAY = 1001;

const UNLIMITED: AdmissionLimits = {
  maxLinks: Infinity,
  maxLinksPerAddress: Infinity,
  maxPendingHellos: Infinity,
  maxPendingHellosPerAddress: Infinity,
  helloRate: Infinity,
};

export async function startLinkServer(registry: LinkRegistry, log: Logger, options: LinkServerOptions): Promise<LinkServer> {
  const helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
  const youngGenMaxBytes = options.youngGenMaxBytes ?? 0;
  const metrics = options.metrics ?? new Metrics();
  const allowedOrigins = options.allowedOrigins ?? [];
  const loopbackOnly = isLoopbackHost(options.host);
  const admission = new Admission(options.limits ?? UNLIMITED);
  // warnings a peer can provoke at will go through a budget; metrics still count every event
  const budget = new LogBudget(50);
  const warn = (line: string) => {
    const text = budget.take(line);
    if (text !== null) log.warn(text);
  };
  // a hello or info frame richer than CC_MAX_IDENTITY_BYTES is cut to it (registry.ts): said once per link
  const warnedCut = new WeakSet<Link>();
  registry.identityCut = (link, cut) => {
    if (warnedCut.has(link)) return;
    warnedCut.add(link);
    const parts = [cut.peripherals > 0 ? plural(cut.peripherals, 'peripheral') : '', cut.jobs > 0 ? plural(cut.jobs, 'job') : ''].filter((p) => p !== '');
    warn(`computer ${logName(link.computerId, link.label)} from ${link.remoteAddress} says more about itself than the bridge keeps (CC_MAX_IDENTITY_BYTES: ${registry.maxIdentityBytes} bytes of JSON, at most ${MAX_PERIPHERALS} peripherals and ${MAX_JOBS} jobs): left out ${parts.join(' and ')} (list-computers shows how many); the link is kept`);
  };
  const hellos = helloHandshake({ registry, admission, metrics, log, warn, maxFrameBytes: options.maxFrameBytes, tokens: options.tokens, pins: options.pins });
  // every frame a socket sends: counted, charged, parsed, handed on (frame-reader.ts)
  const frames = frameReader({ registry, log, metrics, hellos, warn, budget, maxBytesPerSecond: options.maxBytesPerSecond, maxJsonDepth: options.maxJsonDepth });
  const pins = options.pins;
  // a pin is confirmed by the time its links stay up (CC_LINK_PIN_CONFIRM_MS); a linked id is not evicted
  if (pins) pins.linkedSince = (computerId) => registry.get(computerId)?.connectedAt ?? null;
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
    // an MCP client (or cc-mcp) given this port instead of the MCP port's: say where MCP is
    res.end('This is the cc-mcp-bridge computer link. Connect with a WebSocket, or GET /mcp-computer.lua. MCP clients connect to the MCP endpoint on MCP_PORT instead (3000 by default: http://127.0.0.1:3000/mcp).\n');
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

  const ListenerSocket = socketClass({
    frame: frames.onFrame,
    text: frames.onText,
    pong: (ws) => {
      if (ws.link) registry.touch(ws.link);
    },
    control: frames.charge,
    error: onError,
    close: onClose,
    sent: () => void metrics.framesOut++,
    maxUnsentBytes: options.maxUnsentBytes ?? Infinity,
    unread: onUnread,
  });

  const wss = new WebSocketServer({
    server: http,
    maxPayload: options.maxFrameBytes,
    WebSocket: ListenerSocket,
    // refused before the handshake, so a flood of sockets costs little
    verifyClient: (info, callback) => {
      const socket = info.req.socket;
      // a web page the operator's browser opened can dial ws://127.0.0.1:3001 (WebSockets have no
      // same-origin rule) and link as a computer; CC:Tweaked's handshake carries no Origin
      const origin = info.req.headers.origin ?? info.req.headers['sec-websocket-origin'];
      const originProblem = linkOriginProblem(origin === undefined ? undefined : String(origin), info.req.headers.host, allowedOrigins, loopbackOnly);
      if (originProblem !== null) {
        metrics.linksRefused.inc('origin');
        warn(`link from ${socket.remoteAddress} refused: ${originProblem} (Origin ${quoteValue(origin)}, Host ${quoteValue(info.req.headers.host)}); add its origin to CC_LINK_ALLOWED_ORIGINS if it is a CC emulator you trust`);
        callback(false, 403, 'Forbidden: a web page may not link as a computer (CC_LINK_ALLOWED_ORIGINS)');
        return;
      }
      const ticket = admission.open(socket.remoteAddress ?? '?');
      if (isRefusal(ticket)) {
        metrics.linksRefused.inc(ticket.reason);
        log.debug(`link from ${socket.remoteAddress} refused: ${ticket.message}`);
        callback(false, 503, ticket.message, { 'retry-after': String(ticket.retryAfter) });
        return;
      }
      boundYoungGeneration(youngGenMaxBytes);
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
    ws.attach(raw);
    // one flat string (a template literal would keep a cons string and its left half: 64 B, not 32)
    ws.remoteAddress = [raw.remoteAddress ?? '?', raw.remotePort ?? '?'].join(':');
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

  function onHelloTimeout(ws: ComputerSocket): void {
    ws.helloTimer = null;
    if (ws.stage === 'linked' && ws.link === null) {
      // admitted: its hello made a new pin and waits for the pins file write that holds it (hello.ts)
      warn(`link from ${ws.remoteAddress}: its hello waited more than ${helloTimeoutMs} ms for the CC_LINK_PINS_FILE write that holds its new pin; closing (the computer tries again, the pin stays in memory)`);
      ws.close(CLOSE_TRY_AGAIN, 'try again later: the pins file write is slow');
      return;
    }
    warn(`link from ${ws.remoteAddress} sent no hello within ${helloTimeoutMs} ms; closing`);
    ws.close(CLOSE_POLICY, 'no hello');
  }

  function onError(ws: ComputerSocket, err: Error & { code?: string }): void {
    warn(`link from ${ws.remoteAddress} error: ${err.code ?? ''} ${err.message}`.replace('  ', ' '));
  }

  function onClose(ws: ComputerSocket, code: number, reason: Buffer): void {
    sockets.delete(ws);
    hellos.closed(ws);
    disposeThrottle(ws);
    if (ws.helloTimer) clearTimeout(ws.helloTimer);
    ws.helloTimer = null;
    admission.close(ws);
    const link = ws.link;
    if (!link) return;
    const why = `closed ${code}${reason.length ? ` ${reason.toString()}` : ''}`;
    if (registry.unregister(link, why)) {
      log.info(`unlinked ${logName(link.computerId, link.label)}: ${why}`);
      pins?.linkEnded(link.computerId, link.connectedAt);
    }
  }

  /**
   * The computer has not taken what was already written to it (CC_LINK_MAX_UNSENT_BYTES): it stopped
   * reading its socket, so nothing more is buffered for it. Its link ends now, with its calls in flight
   * told why, and the socket is cut (a close frame would wait behind the bytes it does not read).
   */
  function onUnread(ws: ComputerSocket, unsent: number): void {
    if (ws.readyState !== ws.OPEN) return;
    metrics.linksUnread++;
    const link = ws.link;
    const who = link ? `computer ${logName(link.computerId, link.label)}` : 'a socket that has not linked';
    const why = `the computer did not read what was sent to it: ${unsent} bytes wait unread (over CC_LINK_MAX_UNSENT_BYTES=${options.maxUnsentBytes})`;
    warn(`link from ${ws.remoteAddress}: ${who} has not read ${unsent} bytes sent to it (over CC_LINK_MAX_UNSENT_BYTES=${options.maxUnsentBytes}); dropped`);
    if (link && registry.unregister(link, why)) {
      log.info(`unlinked ${logName(link.computerId, link.label)}: ${why}`);
      pins?.linkEnded(link.computerId, link.connectedAt);
    }
    ws.link = null;
    ws.terminate();
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

