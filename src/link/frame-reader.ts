// What a computer's socket sends, read: each frame counted and charged to its byte budget
// (CC_LINK_MAX_BYTES_PER_S), parsed and checked (frames.ts), and handed on: a hello to the handshake
// (hello.ts), an info frame and a response to the registry. Nothing a peer sends may throw out of
// here. The link listener (server.ts) gives every socket these handlers.
import type { RawData } from './ws.js';
import type { Logger } from '../log.js';
import { parseComputerFrame } from './frames.js';
import type { Metrics } from '../metrics.js';
import { LogBudget } from './log-budget.js';
import { chargeFrame } from './throttle.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { logName, type LinkRegistry } from './registry.js';
import type { ComputerSocket } from './computer-socket.js';
import type { Hellos } from './hello.js';

/** Changes one log line of an info frame names (a frame may attach or detach 1024 peripherals). */
const MAX_CHANGES_SHOWN = 20;

export interface FrameReaderOptions {
  registry: LinkRegistry;
  log: Logger;
  metrics: Metrics;
  hellos: Hellos;
  /** Warnings a peer can provoke at will (through `budget`). */
  warn: (line: string) => void;
  /** The listener's log budget for lines a peer triggers. */
  budget: LogBudget;
  /** Most frame bytes one socket may send a second before its reading pauses (CC_LINK_MAX_BYTES_PER_S). */
  maxBytesPerSecond?: number;
  /** Deepest nesting a frame may have (CC_MAX_JSON_DEPTH); 64 when absent. */
  maxJsonDepth?: number;
}

export interface FrameReader {
  /** A frame ws's Receiver read (its 'message'). */
  onFrame(ws: ComputerSocket, data: RawData, isBinary: boolean): void;
  /** A text frame the socket read itself (computer-socket.ts readOneFrame): as onFrame's. */
  onText(ws: ComputerSocket, text: string, size: number): void;
  /** `bytes` of a ping or pong the socket sent, charged to its budget like a frame. */
  charge(ws: ComputerSocket, bytes: number): void;
}

export function frameReader(options: FrameReaderOptions): FrameReader {
  const { registry, log, metrics, hellos, warn, budget } = options;
  const maxBytesPerSecond = options.maxBytesPerSecond ?? Infinity;
  // the changes info frames bring (label, peripherals, jobs), which a computer sends at will
  const changeBudget = new LogBudget(50);

  function onFrame(ws: ComputerSocket, data: RawData, isBinary: boolean): void {
    // nothing a peer sends may throw out of here: ws would hand it to the process as uncaught
    try {
      onMessage(ws, data, isBinary);
    } catch (err) {
      frameFailed(ws, err);
    }
  }

  function onText(ws: ComputerSocket, text: string, size: number): void {
    try {
      if (frameIn(ws, size)) onTextFrame(ws, text);
    } catch (err) {
      frameFailed(ws, err);
    }
  }

  function frameFailed(ws: ComputerSocket, err: unknown): void {
    metrics.framesRejected.inc('internal');
    const line = budget.take(`link from ${ws.remoteAddress}: handling a frame failed; frame dropped: ${(err as Error).stack ?? String(err)}`);
    if (line !== null) log.error(line);
  }

  /** A socket's first frame is not a valid hello: logged (budget), then hello-error and close 1008. */
  function preHelloReject(ws: ComputerSocket, error: string): void {
    // frames already in flight behind a refused first one change nothing
    if (ws.stage !== 'pending') return;
    warn(`link from ${ws.remoteAddress} refused before hello: ${error}; closing (1008)`);
    hellos.reject(ws, error);
  }

  /**
   * Charges `bytes` of what the socket sent to its budget (CC_LINK_MAX_BYTES_PER_S): data frames, and
   * pings and pongs, which before were free (a computer sending pongs without pause was read at tens
   * of MB a second through a 1 MiB/s budget).
   */
  function charge(ws: ComputerSocket, bytes: number): void {
    if (chargeFrame(ws, bytes, maxBytesPerSecond, Date.now())) {
      metrics.linksThrottled++;
      warn(`link from ${ws.remoteAddress} sent more than ${options.maxBytesPerSecond} bytes in a second; reading paused until the second is over`);
    }
  }

  /** Counts a frame of `size` bytes (metrics, throttle, the link's last sign of life); false when it is not to be read. */
  function frameIn(ws: ComputerSocket, size: number): boolean {
    metrics.framesIn++;
    charge(ws, size);
    if (ws.link) registry.touch(ws.link);
    // refused before hello and closing: what it sent behind the refused frame is not even parsed
    else if (ws.stage !== 'pending') return false;
    return true;
  }

  function onMessage(ws: ComputerSocket, data: RawData, isBinary: boolean): void {
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
    if (!frameIn(ws, size)) return;
    if (isBinary) {
      metrics.framesRejected.inc('binary');
      if (!ws.link) {
        preHelloReject(ws, 'the first frame must be a hello (a JSON text frame); got a binary frame');
        return;
      }
      warn(`link from ${ws.remoteAddress}: binary frame dropped`);
      return;
    }
    onTextFrame(ws, data.toString());
  }

  function onTextFrame(ws: ComputerSocket, text: string): void {
    const parsed = parseComputerFrame(text, options.maxJsonDepth);
    if (!parsed.ok) {
      metrics.framesRejected.inc(parsed.error.startsWith('hello.') ? 'invalid_hello' : 'invalid');
      // before hello, any bad frame ends the socket now (hello-error, close 1008), not at the hello timeout
      if (!ws.link) {
        preHelloReject(ws, parsed.error.startsWith('hello.') ? parsed.error : `the first frame must be a hello; ${parsed.error}`);
        return;
      }
      warn(`link from ${ws.remoteAddress}: ${parsed.error}; frame dropped`);
      // the request it answers fails now with what was wrong, not at its timeout
      if (parsed.id !== undefined) {
        registry.resolve(ws.link, { type: 'response', id: parsed.id, ok: false, error: `protocol error: the computer sent a malformed response (${parsed.error})` });
      }
      return;
    }
    const frame = parsed.frame;
    if (frame.type === 'hello') {
      // cut to what a link keeps before anything holds it (a hello may wait for its pin's write)
      registry.fitHello(frame);
      hellos.hello(ws, frame);
      return;
    }
    if (!ws.link) {
      metrics.framesRejected.inc('before_hello');
      preHelloReject(ws, `the first frame must be a hello; got a "${frame.type}" frame`);
      return;
    }
    if (frame.type === 'info') {
      const changes = registry.updateInfo(ws.link, frame);
      if (changes.length > 0) {
        // a computer sends info frames at will: at most 50 such lines a second, each at most 20 changes
        const shown = changes.length > MAX_CHANGES_SHOWN ? [...changes.slice(0, MAX_CHANGES_SHOWN), `and ${changes.length - MAX_CHANGES_SHOWN} more`] : changes;
        const line = changeBudget.take(`computer ${logName(ws.link.computerId, ws.link.label)}: ${shown.join(', ')}`);
        if (line !== null) log.info(line);
      }
      return;
    }
    if (!registry.resolve(ws.link, frame)) {
      metrics.framesRejected.inc('unknown_id');
      log.debug(`link ${logName(ws.link.computerId, ws.link.label)}: response ${quoteValue(frame.id)} matches no request in flight on this link; dropped`);
    }
  }

  return { onFrame, onText, charge };
}
