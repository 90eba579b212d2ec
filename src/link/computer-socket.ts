// A computer's WebSocket. ws builds one per accepted socket (its `WebSocket` option), and it carries
// what a link needs besides ws's own objects: the link state, the registry's `LinkSocket` (frames
// counted, corked per turn), and its events, handled in `emit` instead of by four listeners per
// socket. With 10,000 idle links, a separate state object and the Map entry to it, a wrapper for the
// registry and the listeners (ws keeps them in a dictionary-mode object, ~280 B) were ~550 B of a
// link's heap. The events handled here ('message', 'ping', 'pong', 'error', 'close') reach no listener.
import type { Socket } from 'node:net';
import { WebSocket, type RawData } from './ws.js';
import type { Ticket } from './admission.js';
import type { Link, LinkSocket } from './registry.js';
import type { ThrottleState } from './throttle.js';

/** What one listener does with its sockets' events. One object per listener, shared by its sockets. */
export interface SocketHandlers {
  frame(ws: ComputerSocket, data: RawData, isBinary: boolean): void;
  /** The peer answered a heartbeat ping (`alive` is already set again). */
  pong(ws: ComputerSocket): void;
  error(ws: ComputerSocket, err: Error & { code?: string }): void;
  close(ws: ComputerSocket, code: number, reason: Buffer): void;
  /** A frame is being sent to the peer (counted). */
  sent(): void;
  /**
   * Most bytes a socket may hold written but not yet taken by the peer (CC_LINK_MAX_UNSENT_BYTES): a
   * computer that stops reading its socket would otherwise have every request to it buffered here.
   */
  readonly maxUnsentBytes: number;
  /** The socket already held more than maxUnsentBytes when a frame was to be sent: the frame is not sent. */
  unread(ws: ComputerSocket, unsent: number): void;
}

/** Unwritten pongs that cut a peer (ws's default maxPendingAutoPongs). */
export const MAX_PENDING_PONGS = 60;

/** The listener table every ComputerSocket shares: empty, and frozen so nothing is ever added to it. */
const NO_LISTENERS: object = Object.freeze(Object.create(null) as object);

export class ComputerSocket extends WebSocket implements LinkSocket, ThrottleState, Ticket {
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
  /** The listener's handlers: on the prototype of the class `socketClass` makes, not in every socket. */
  declare readonly handlers: SocketHandlers;

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
        this.handlers.frame(this, args[0] as RawData, args[1] as boolean);
        return true;
      case 'ping':
        answerPing(this, args[0] as Buffer);
        return true;
      case 'pong':
        this.alive = true;
        this.handlers.pong(this);
        return true;
      case 'error':
        this.handlers.error(this, args[0] as Error & { code?: string });
        return true;
      case 'close':
        this.handlers.close(this, args[0] as number, args[1] as Buffer);
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
  // `ascii` is `unknown` only so the override fits ws's send(data, options, cb) overloads: `true` or not
  override send(text: string, ascii?: unknown): void {
    const raw = this.raw;
    if (this.unread()) return;
    if (raw && raw.writableCorked === 0) {
      if (corked.length === 0) setImmediate(uncorkAll);
      corked.push(raw);
      raw.cork();
    }
    this.handlers.sent();
    this.frame(text, ascii === true);
  }

  /**
   * A frame that leaves now, not at the end of the turn: a fan-out over many computers sends each
   * exactly one frame, so corking saves no write there and only holds every computer's request back
   * until the whole fan-out is built.
   */
  sendNow(text: string, ascii = false): void {
    if (this.unread()) return;
    this.handlers.sent();
    this.frame(text, ascii);
  }

  /**
   * True when the peer has not taken more than maxUnsentBytes already written to it: it is then handed
   * to the listener (which drops it) and nothing more is written. A computer that stops reading (and
   * keeps its link up with pongs of its own, which the heartbeat takes) made the bridge keep every
   * request sent to it; measured before: 64 callers of exec-lua with 60 KB of code grew the bridge's
   * RSS by 680 MB in 30 s.
   */
  private unread(): boolean {
    const raw = this.raw;
    if (raw === null || raw.writableLength <= this.handlers.maxUnsentBytes) return false;
    this.handlers.unread(this, raw.writableLength);
    return true;
  }

  /** `ascii`: the sender built `text` with asciiJson (every request frame), so it is not scanned again. */
  private frame(text: string, ascii: boolean): void {
    const raw = this.raw;
    // An ASCII text shorter than 64 KiB (a probe's ping) is written as one latin1 string, header and
    // payload together: one write, no header Buffer, no writev; the bytes are what ws would send. ws's
    // sender queues frames only while compressing (perMessageDeflate is off), so order is kept.
    if (raw !== null && this.readyState === WebSocket.OPEN && text.length <= 0xffff && (ascii || !NOT_ASCII.test(text))) {
      raw.write(textFrameHead(text.length) + text, 'latin1');
      return;
    }
    super.send(text);
  }
}

const NOT_ASCII = /[^\x00-\x7f]/;

/** RFC 6455 5.2: FIN + text opcode, then the unmasked payload length (7 bits, or 126 and 16 bits). */
export function textFrameHead(length: number): string {
  return length < 126 ? String.fromCharCode(0x81, length) : String.fromCharCode(0x81, 126, length >> 8, length & 0xff);
}

/** A ComputerSocket class for one listener: its handlers sit on the class's prototype. */
export function socketClass(handlers: SocketHandlers): typeof ComputerSocket {
  class ListenerSocket extends ComputerSocket {}
  Object.defineProperty(ListenerSocket.prototype, 'handlers', { value: handlers });
  return ListenerSocket;
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

/** Link sockets corked in this turn of the event loop; one setImmediate uncorks them all. */
const corked: Socket[] = [];
function uncorkAll(): void {
  for (const raw of corked) raw.uncork();
  corked.length = 0;
}
