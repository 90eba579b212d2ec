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
  /** A text frame taken by the socket's own reader (readOneFrame): its text and its payload's bytes. */
  text(ws: ComputerSocket, text: string, size: number): void;
  /** The peer sent a ping or a pong of `bytes` (charged to its CC_LINK_MAX_BYTES_PER_S like a frame). */
  control(ws: ComputerSocket, bytes: number): void;
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
        this.handlers.control(this, (args[0] as Buffer).length);
        answerPing(this, args[0] as Buffer);
        return true;
      case 'pong':
        this.handlers.control(this, (args[0] as Buffer).length);
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

  /**
   * The raw socket under it, once ws has set it up ('connection'). Its 'data' listener, ws's, is
   * replaced by readChunk, which reads a chunk that is one whole small ASCII text frame itself and
   * hands every other chunk to ws's listener.
   */
  attach(raw: Socket): void {
    this.raw = raw;
    const listeners = raw.rawListeners('data');
    const wsListener = listeners[0] as DataListener | undefined;
    if (listeners.length !== 1 || wsListener === undefined || wsListener.name !== 'socketOnData') return;
    if (wsOnData === null) {
      const symbol = Object.getOwnPropertySymbols(raw).find((s) => (raw as unknown as Record<symbol, unknown>)[s] === this);
      if (symbol === undefined) return;
      wsOnData = wsListener;
      socketKey = symbol;
      // ws removes its listener by `removeListener('data', socketOnData)` (a close frame, a protocol
      // error, the socket's close): EventEmitter also removes a listener whose `listener` is that
      // function, so ws still takes readChunk off exactly when it would take its own
      (readChunk as DataListener & { listener?: DataListener }).listener = wsListener;
    } else if (wsListener !== wsOnData) return;
    raw.removeListener('data', wsListener);
    raw.on('data', readChunk);
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

type DataListener = (this: Socket, chunk: Buffer) => void;
/** ws's 'data' listener of a socket (its socketOnData) and the key under which the socket names its WebSocket; found at the first attach. */
let wsOnData: DataListener | null = null;
let socketKey: symbol | null = null;

/**
 * The parts of ws's Receiver that tell it is between frames, with nothing of a frame or message
 * read (ws 8's field names: a version that renamed one reads undefined here, so never idle).
 */
interface ReceiverState {
  _state: unknown;
  _bufferedBytes: unknown;
  _fragmented: unknown;
  _errored: unknown;
  _allowSynchronousEvents: unknown;
  _maxPayload: number;
  _writableState: { length: number } | undefined;
}

/**
 * A link socket's 'data' listener in place of ws's. Computers answer a request with one small text
 * frame, which mostly arrives as one chunk: such a chunk is read here (readOneFrame) instead of going
 * through ws's Receiver (a Writable: its write, a nextTick per chunk, three Buffer views and an array
 * per frame). Any other chunk goes to ws's listener as before.
 */
function readChunk(this: Socket, chunk: Buffer): void {
  const ws = (this as unknown as Record<symbol, ComputerSocket | undefined>)[socketKey as symbol];
  if (ws === undefined || !readOneFrame(ws, chunk)) (wsOnData as DataListener).call(this, chunk);
}

/**
 * Reads `chunk` when it is exactly one frame that ws's Receiver would take and hand on as a text
 * message at once: FIN, no RSV bit, opcode text, masked (RFC 6455 5.3: a client's frames are), a
 * 7- or 16-bit payload length of 1..maxPayload bytes that are all ASCII once unmasked (so valid
 * UTF-8, and latin1 decoding is the same text), on an open socket whose Receiver is between frames
 * with nothing buffered. Anything else (control frames, fragments, several frames or part of one in a
 * chunk, a socket closing, other bytes) returns false with `chunk` as it came, for ws.
 */
function readOneFrame(ws: ComputerSocket, chunk: Buffer): boolean {
  const end = chunk.length;
  if (end < 7 || chunk[0] !== 0x81) return false;
  const second = chunk[1] as number;
  if (second < 0x80) return false;
  let size = second & 0x7f;
  let at = 6;
  if (size === 126) {
    size = ((chunk[2] as number) << 8) | (chunk[3] as number);
    at = 8;
  } else if (size === 127 || size === 0) return false;
  if (end !== at + size) return false;
  const receiver = (ws as unknown as { _receiver: ReceiverState | undefined })._receiver;
  if (
    ws.readyState !== WebSocket.OPEN ||
    receiver === undefined ||
    receiver._state !== 0 ||
    receiver._bufferedBytes !== 0 ||
    receiver._fragmented !== 0 ||
    receiver._errored !== false ||
    receiver._allowSynchronousEvents !== true ||
    receiver._writableState?.length !== 0 ||
    (receiver._maxPayload > 0 && size > receiver._maxPayload)
  ) {
    return false;
  }
  // unmask in place (as ws does), noting any byte over 0x7f
  const mask = at - 4;
  let high = 0;
  for (let i = 0; i < size; i++) {
    const byte = (chunk[at + i] as number) ^ (chunk[mask + (i & 3)] as number);
    chunk[at + i] = byte;
    high |= byte;
  }
  if (high > 0x7f) {
    // not ASCII: masked again as it came, for ws (which checks its UTF-8)
    for (let i = 0; i < size; i++) chunk[at + i] = (chunk[at + i] as number) ^ (chunk[mask + (i & 3)] as number);
    return false;
  }
  ws.handlers.text(ws, chunk.toString('latin1', at, end), size);
  return true;
}

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
