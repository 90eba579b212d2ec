// stdout of a --stdio bridge: one JSON message per line, written only as fast and as far as the
// host reads it.
// - Backpressure: once more than MCP_STDIO_HIGH_WATER_BYTES wait in stdout for the host, `onWait`
//   stops the reading of stdin until stdout has drained (`onDrain`); the answers of work already
//   under way are still written.
// - Those answers are bounded too: while the host has left bytes unread, an answer that would take
//   stdout past MCP_STDIO_MAX_QUEUED_BYTES is replaced by a short -32003 error for its id (each item
//   of a batch), so a host that stops reading while many calls finish costs that much memory, not
//   their answers (notifications are always written: they are small and few).
// - A tool list change while stdout is stuck is owed, not written: at most one notice per target (the
//   plain one, each subscription) waits, and goes out when stdout drains.
// - Once the host no longer reads stdout (stdio-host.ts) nothing more is written; `onHostGone`.
import type { Writable } from 'node:stream';
import { errorResponse, isRecord } from '../jsonrpc/message.js';
import { encodeLine } from '../jsonrpc/ndjson.js';
import type { Logger } from '../log.js';
import { SERVER_BUSY } from '../mcp/exchange.js';
import { watchHost } from './stdio-host.js';

export const LIST_CHANGED = 'notifications/tools/list_changed';

export interface StdioOutputOptions {
  output: Writable;
  log: Logger;
  /** MCP_STDIO_HIGH_WATER_BYTES */
  highWaterBytes: number;
  /** MCP_STDIO_MAX_QUEUED_BYTES (never below highWaterBytes) */
  maxQueuedBytes: number;
  /** stdout is stuck: stop reading stdin. */
  onWait(): void;
  /** stdout drained (owed notices written): go on. */
  onDrain(): void;
  /** The host no longer reads stdout (the error code, or "closed"). */
  onHostGone(reason: string): void;
}

export interface StdioOutput {
  /** Writes one message (replaced by an error when over the limit; nothing once the host is gone). */
  write(message: unknown): void;
  /** A message for `target` (a subscription, or the plain notices): a tool list notice is owed while stdout is stuck. */
  notice(target: object, message: unknown): void;
  /** Writes the notice owed to `target`, if any. */
  payOwed(target: object): void;
  /** Why the host can no longer read stdout; null while it can. */
  readonly lost: string | null;
  /** Waiting for stdout to drain (stdin not read). */
  readonly waiting: boolean;
  readonly waits: number;
  readonly coalesced: number;
  /** Answers replaced by an error for MCP_STDIO_MAX_QUEUED_BYTES (each request of a batch counted). */
  readonly replaced: number;
}

/** A JSON-RPC response (not a request or notification) with its id, or null. */
function responseId(message: unknown): string | number | null | undefined {
  if (!isRecord(message) || 'method' in message || !('result' in message || 'error' in message)) return undefined;
  const { id } = message;
  return typeof id === 'string' || typeof id === 'number' || id === null ? id : undefined;
}

/**
 * What goes out instead of `message` (`bytes` long) with `queued` bytes unread: an error per
 * response; null for a message holding no response (written as it is).
 */
function standIn(message: unknown, bytes: number, queued: number, limit: number): { message: unknown; answers: number } | null {
  const text = `Service Unavailable: the answer (${bytes} bytes) was not written: the host had not read ${queued} bytes of stdout (over MCP_STDIO_MAX_QUEUED_BYTES=${limit}). The request was run; a host must read stdout while its calls run`;
  if (Array.isArray(message)) {
    const answers = message.map((item) => {
      const id = responseId(item);
      return id === undefined ? item : errorResponse(id, SERVER_BUSY, text);
    });
    const count = message.filter((item) => responseId(item) !== undefined).length;
    return count > 0 ? { message: answers, answers: count } : null;
  }
  const id = responseId(message);
  return id === undefined ? null : { message: errorResponse(id, SERVER_BUSY, text), answers: 1 };
}

export function stdioOutput(options: StdioOutputOptions): StdioOutput {
  const { output, log, highWaterBytes, maxQueuedBytes } = options;
  let lost: string | null = null;
  let waiting = false;
  let waits = 0;
  let coalesced = 0;
  let replaced = 0;
  /** Whether the replacing of answers was logged since stdout last drained. */
  let overSaid = false;
  const owed = new Map<object, unknown>();

  const stuck = () => !output.destroyed && output.writableNeedDrain && output.writableLength > highWaterBytes;

  const write = (message: unknown) => {
    if (lost !== null || output.destroyed || output.writableEnded) return;
    let line = encodeLine(message);
    const queued = output.writableLength;
    // bytes <= 3 per UTF-16 unit: the exact count only when it may matter
    if (queued > 0 && queued + 3 * line.length > maxQueuedBytes) {
      const bytes = Buffer.byteLength(line);
      const instead = queued + bytes > maxQueuedBytes ? standIn(message, bytes, queued, maxQueuedBytes) : null;
      if (instead !== null) {
        replaced += instead.answers;
        if (!overSaid) {
          overSaid = true;
          log.warn(`stdout: the host has not read ${queued} bytes (over MCP_STDIO_MAX_QUEUED_BYTES=${maxQueuedBytes}); answers are replaced by -32003 errors until it reads`);
        }
        line = encodeLine(instead.message);
      }
    }
    output.write(line);
    if (!waiting && stuck()) waitForDrain();
  };

  /** Stops reading stdin until stdout drains (or closes: nothing more can be delivered then). */
  const waitForDrain = () => {
    waiting = true;
    waits++;
    options.onWait();
    log.debug(`stdout: ${output.writableLength} bytes not yet taken by the host (over MCP_STDIO_HIGH_WATER_BYTES=${highWaterBytes}); stdin is not read until it drains`);
    output.once('drain', drained);
    output.once('close', drained);
  };
  const drained = () => {
    output.off('drain', drained);
    output.off('close', drained);
    waiting = false;
    overSaid = false;
    for (const target of [...owed.keys()]) payOwed(target);
    options.onDrain();
  };

  const notice = (target: object, message: unknown) => {
    if (!isRecord(message) || message.method !== LIST_CHANGED || !(waiting || stuck())) return write(message);
    if (owed.has(target)) coalesced++;
    owed.set(target, message);
    if (!waiting) waitForDrain();
  };
  const payOwed = (target: object) => {
    const message = owed.get(target);
    if (message === undefined) return;
    owed.delete(target);
    write(message);
  };

  watchHost(output, (reason) => {
    lost = reason;
    owed.clear();
    options.onHostGone(reason);
  });

  return {
    write,
    notice,
    payOwed,
    get lost() {
      return lost;
    },
    get waiting() {
      return waiting;
    },
    get waits() {
      return waits;
    },
    get coalesced() {
      return coalesced;
    },
    get replaced() {
      return replaced;
    },
  };
}
