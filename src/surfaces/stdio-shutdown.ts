// The end of a --stdio bridge. At a signal, a request read from stdin but not run yet is answered
// with a clear error rather than left without an answer (refusal); at the end of stdin the calls
// still running may finish while the clock below allows, and those still running when it runs out
// are answered with a clear error and cancelled (cutOff). While shutting down, the answers
// still in stdout are handed to a host that keeps reading them, however slowly, and the clock that
// bounds it all (shutdownClock) runs only while the host takes nothing: MCP_STDIO_SHUTDOWN_IDLE_MS
// without a byte taken, and at most MCP_STDIO_SHUTDOWN_MAX_MS in all.
import type { Writable } from 'node:stream';
import { errorResponse, isRecord } from '../jsonrpc/message.js';
import { SERVER_BUSY } from '../mcp/exchange.js';

/**
 * One answer per request in `body` (a batch gives an array of them), made by `answer` from the
 * request's id; null when `body` holds no request (a notification, a response, a malformed message).
 */
function answerEach(body: unknown, answer: (id: string | number) => unknown): unknown {
  if (Array.isArray(body)) {
    const answers = body.map((message) => answerEach(message, answer)).filter((one) => one !== null);
    return answers.length > 0 ? answers : null;
  }
  if (!isRecord(body) || typeof body.method !== 'string' || (typeof body.id !== 'string' && typeof body.id !== 'number')) return null;
  return answer(body.id);
}

/**
 * What a message read but not run gets when the bridge stops (`reason`: "SIGTERM received"): a
 * -32003 error for a request, an array of them for a batch holding requests; null for anything else
 * (a notification, a response, a malformed message), which is handled as usual.
 */
export function refusal(body: unknown, reason: string): unknown {
  return answerEach(body, (id) => errorResponse(id, SERVER_BUSY, `Service Unavailable: the bridge is shutting down (${reason}); this request was read but not run. Send it again once the bridge is back`));
}

/**
 * What a request still running gets when the shutdown after the end of stdin stops waiting for it
 * (`why`: cutOffReason()): a -32003 error (an array of them for a batch), the call itself cancelled;
 * null for a message that holds no request.
 */
export function cutOff(body: unknown, why: string): unknown {
  return answerEach(body, (id) => errorResponse(id, SERVER_BUSY, `Service Unavailable: stdin ended and the bridge stopped waiting for this request, still running: ${why}. It was cancelled; send it again to a running bridge`));
}

/** refusal() of a line read and not run; null for a line that is not JSON (answered -32700 as usual). */
export function refusalOf(line: string, reason: string): unknown {
  try {
    return refusal(JSON.parse(line), reason);
  } catch {
    return null;
  }
}

export interface ShutdownBounds {
  /** MCP_STDIO_SHUTDOWN_IDLE_MS: the longest the host may take no byte of stdout. */
  idleMs: number;
  /** MCP_STDIO_SHUTDOWN_MAX_MS: the longest the shutdown takes in all. */
  maxMs: number;
}

/** Why the clock ran out: the host took nothing for idleMs, or maxMs passed. */
export type Expiry = 'idle' | 'max';

/** The warning when the clock runs out (`unsent`: bytes of stdout the host has not taken). */
export function expiryMessage(why: Expiry, unsent: number, bounds: ShutdownBounds): string {
  if (why === 'max') return `the shutdown took ${bounds.maxMs} ms (MCP_STDIO_SHUTDOWN_MAX_MS) with ${unsent} bytes of stdout not taken by the host`;
  if (unsent > 0) return `the host took no byte of stdout for ${bounds.idleMs} ms (MCP_STDIO_SHUTDOWN_IDLE_MS) with ${unsent} bytes not taken`;
  return `the shutdown waited ${bounds.idleMs} ms (MCP_STDIO_SHUTDOWN_IDLE_MS) with nothing for the host to read: calls or links still closing`;
}

/** Why the requests still running are cut off (cutOff()) when the clock runs out. */
export function cutOffReason(why: Expiry, unsent: number, bounds: ShutdownBounds): string {
  if (why === 'max') return `the shutdown took ${bounds.maxMs} ms (MCP_STDIO_SHUTDOWN_MAX_MS)`;
  if (unsent > 0) return `the host took no byte of stdout for ${bounds.idleMs} ms (MCP_STDIO_SHUTDOWN_IDLE_MS)`;
  return `it did not finish within ${bounds.idleMs} ms (MCP_STDIO_SHUTDOWN_IDLE_MS) with nothing else for the host to read`;
}

export interface ShutdownClock {
  /**
   * The bridge has nothing left to run (at EOF: every line read has been; at a signal: at once):
   * from now, time with nothing for the host to take counts as idle too, and maxMs runs.
   */
  limit(): void;
  /** The shutdown finished by itself: no expiry. */
  stop(): void;
}

/** Bytes libuv has not handed to the pipe yet (all of a write in progress, taken a little at a time). */
function unsentOfHandle(output: Writable): number {
  const size = (output as { _handle?: { writeQueueSize?: unknown } })._handle?.writeQueueSize;
  return typeof size === 'number' ? size : 0;
}

/**
 * Calls `expire` (once) when `bounds.idleMs` pass in which the host took no byte of `output`, or
 * `bounds.maxMs` after limit(), whichever is first. Until limit() only time in which `output` holds
 * bytes the host does not take counts (the lines read are still being run: input from a file ends
 * at once, and the answers may all go out synchronously); from limit() on, any time without a byte
 * taken counts, so a call or a close that hangs costs at most idleMs. A byte taken shows as less
 * queued in `output` or, within one large write (stream writes queued behind a slow host go out as
 * one), less left in the handle's write queue; looked at every idleMs / 4 (at most every 100 ms).
 */
export function shutdownClock(output: Writable, bounds: ShutdownBounds, expire: (why: Expiry, unsent: number) => void): ShutdownClock {
  let queued = output.writableLength;
  let unsent = unsentOfHandle(output);
  let lastTaken = Date.now();
  let max: NodeJS.Timeout | null = null;
  const fire = (why: Expiry) => {
    stop();
    expire(why, output.writableLength);
  };
  const look = setInterval(() => {
    const nowQueued = output.writableLength;
    const nowUnsent = unsentOfHandle(output);
    const hostsTurn = nowQueued > 0 || nowUnsent > 0;
    if (nowQueued < queued || nowUnsent < unsent || (max === null && !hostsTurn)) lastTaken = Date.now();
    queued = nowQueued;
    unsent = nowUnsent;
    if (Date.now() - lastTaken >= bounds.idleMs) fire('idle');
  }, Math.max(1, Math.min(100, Math.floor(bounds.idleMs / 4))));
  // neither timer keeps the process alive: what does is the shutdown still under way
  look.unref();
  const stop = () => {
    clearInterval(look);
    if (max !== null) clearTimeout(max);
  };
  const limit = () => {
    if (max !== null) return;
    lastTaken = Date.now();
    max = setTimeout(() => fire('max'), bounds.maxMs);
    max.unref();
  };
  return { limit, stop };
}
