// MCP over stdin/stdout (`--stdio`): one JSON message per line each way, as every MCP revision
// defines stdio. The same Dispatcher as HTTP answers; only protocol messages are ever written to
// `output` (logs go to the logger, on stderr). This file runs the lines in order and owns the
// surface's life (EOF, signals, the host gone); the parts each have their own module:
// stdio-lines.ts what a line read is (a message, or the error for one that is not);
// stdio-era.ts which revision each message speaks (2026-07-28 by its `_meta`, else the 2025 one
// initialize settled on); stdio-listen.ts subscriptions/listen on stdout.
// stdout (stdio-output.ts): once more than MCP_STDIO_HIGH_WATER_BYTES wait in it for the host,
// stdin is not read (lines already read wait, in order) until it has drained; calls in flight,
// computers and HTTP go on meanwhile, their answers bounded by MCP_STDIO_MAX_QUEUED_BYTES.
// Shutdown (stdio-shutdown.ts): at EOF every line read is still run and the calls in flight may finish
// (the host that closed stdin may still read stdout: the spec's stdio shutdown has the client close
// stdin and wait for the server to exit); those still running when the shutdown clock runs out are
// answered -32003 and cancelled (cutOff()). At a signal (shutdown()) stdin is no longer read and every
// request read but not run yet is answered -32003 at once. Once the host no longer reads stdout
// (stdio-host.ts: closed or quit) the calls in flight are cancelled, nothing more is read or written
// and `hostGone` tells the process to exit.
import { randomUUID } from 'node:crypto';
import { Cancellation } from '../cancel.js';
import type { Caller } from '../mcp/exchange.js';
import { handleModern } from '../mcp/modern-dispatch.js';
import { ASSUMED_PROTOCOL_VERSION, allowsBatches } from '../mcp/protocol.js';
import { StdioEra } from './stdio-era.js';
import { parseLine, stdioLineReader, type Pending } from './stdio-lines.js';
import { stdioListen } from './stdio-listen.js';
import { LIST_CHANGED, stdioOutput } from './stdio-output.js';
import { cutOff, refusalOf } from './stdio-shutdown.js';
import type { StdioOptions, StdioSurface } from './stdio-surface.js';

export type { StdioOptions, StdioSurface } from './stdio-surface.js';

export { LIST_CHANGED } from './stdio-output.js';

/** How many requests an answer of cutOff() answers (an array for a batch; 0 for null). */
const requestCount = (answer: unknown): number => (answer === null ? 0 : Array.isArray(answer) ? answer.length : 1);

/**
 * Lines handled in one turn before the answers already due are let out (a setImmediate): lines read
 * in one chunk (up to 64 KiB of them) are otherwise all started before any answer is written, and
 * the high-water mark is looked at only between them.
 */
export const LINES_PER_TURN = 64;

/** A message being answered; `cut` once cutOff() has answered it (its own answer is then dropped). */
interface Running {
  body: unknown;
  cut: boolean;
}

export function serveStdio(options: StdioOptions): StdioSurface {
  const { input, output, dispatcher, log } = options;
  // the client is gone (stdout closed after EOF, or cutOff()): its calls in flight are cancelled
  // (their cancel frames go out)
  const gone = new Cancellation();
  const caller: Caller = { scope: `stdio:${randomUUID()}`, signal: gone, listChanged: true };
  const era = new StdioEra();
  const handling = new Set<Promise<void>>();
  /** The messages being answered (each in `handling` too). */
  const running = new Set<Running>();
  /** Lines read and not handled yet, from `head` on: stdin is paused while any wait. */
  let pending: Pending[] = [];
  let head = 0;
  /** A setImmediate is due to go on with `pending` (LINES_PER_TURN reached). */
  let turnDue = false;
  /** stdin ended (or failed): finish once `pending` is done. */
  let inputOver = false;
  let finished = false;
  /** Why the bridge stops (shutdown()); null while it serves. */
  let closing: string | null = null;
  const PLAIN = {};
  const out = stdioOutput({
    output,
    log,
    highWaterBytes: options.highWaterBytes,
    maxQueuedBytes: Math.max(options.maxQueuedBytes, options.highWaterBytes),
    onWait: () => input.pause(),
    onDrain: () => pump(),
    onHostGone: (reason) => hostLost(reason),
  });
  const { write, notice } = out;
  caller.listen = stdioListen(caller, out);
  /** `caller` with the 2025 revision initialize settled on, for 2025 messages (same scope: one client). */
  let legacyCaller: Caller = caller;

  const handle = async (body: unknown, textLength: number, entry: Running) => {
    const { modern, revision } = era.read(body);
    const reply = modern
      ? await handleModern(dispatcher, body, undefined, caller, textLength)
      : await dispatcher.handleBody(body, allowsBatches(era.negotiated ?? ASSUMED_PROTOCOL_VERSION), legacyCaller, textLength);
    // the status is HTTP's business; on stdio only the JSON-RPC answer travels, and none for a call
    // the client cancelled with notifications/cancelled (see Reply.cancelled) or one cutOff() answered
    if (reply.body !== null && !reply.cancelled && !entry.cut) write(era.forRevision(reply.body, revision));
    era.answered(body, reply);
    // 2025 messages: tool results as the revision initialize settled on has them (older-content.ts)
    if (era.negotiated !== null && legacyCaller.revision !== era.negotiated) legacyCaller = { ...caller, revision: era.negotiated };
  };

  const handleLine = (line: Pending) => {
    const parsed = parseLine(line, options.maxLineBytes);
    if ('error' in parsed) {
      write(era.forRevision(parsed.error));
      return;
    }
    const { body, textLength } = parsed;
    const entry: Running = { body, cut: false };
    running.add(entry);
    const done: Promise<void> = handle(body, textLength, entry).catch((err: Error) => {
      // Dispatcher answers its own failures; this is a last guard so the stream goes on
      log.error(`stdio message failed: ${err.stack ?? err.message}`);
    });
    handling.add(done);
    void done.finally(() => {
      handling.delete(done);
      running.delete(entry);
    });
  };

  /**
   * Runs a line read; once the bridge stops (shutdown()), a request is refused instead (true), and
   * anything else (a notification, a bad line) is handled as it would have been.
   */
  const take = (line: Pending): boolean => {
    const answer = closing !== null && typeof line === 'string' ? refusalOf(line, closing) : null;
    if (answer === null) {
      handleLine(line);
      return false;
    }
    write(answer);
    return true;
  };

  /** Handles the lines read, in order, while stdout takes its answers; reads stdin again once all are. */
  const pump = () => {
    if (out.lost !== null) return;
    let turn = 0;
    while (head < pending.length) {
      if (out.waiting) return;
      if (turn === LINES_PER_TURN) {
        // let the answers of the lines just handled out first, so the mark sees them
        input.pause();
        if (!turnDue) {
          turnDue = true;
          setImmediate(() => {
            turnDue = false;
            pump();
          });
        }
        return;
      }
      take(pending[head++] as Pending);
      turn++;
    }
    if (out.waiting) return;
    pending = [];
    head = 0;
    if (inputOver) finish();
    else if (closing === null) input.resume();
  };

  const reader = stdioLineReader(options.maxLineBytes, (line) => pending.push(line));

  // one notice per burst of changes (a reload may swap several sources at once): the registry's watch
  const unsubscribe = options.onToolsChanged(() => {
    if (era.ready && !finished) notice(PLAIN, { jsonrpc: '2.0', method: LIST_CHANGED });
  });

  const onData = (chunk: Buffer | string) => {
    reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (!out.waiting && !turnDue) pump();
  };
  input.on('data', onData);
  let finish = () => {};
  let markAllRun = () => {};
  const allRun = new Promise<void>((resolve) => (markAllRun = resolve));
  const ended = new Promise<void>((resolve) => {
    finish = () => {
      if (finished) return;
      finished = true;
      unsubscribe();
      // the transport closed: its subscriptions end without an answer
      dispatcher.subscriptions.cancelAll(`${caller.scope}\u0000`);
      // the calls still running may finish and their answers go out: the host may still read stdout,
      // unless it has closed it too (then nothing can be delivered: they are cancelled at once)
      const calls = [...running].reduce((n, entry) => n + requestCount(cutOff(entry.body, '')), 0);
      if (calls > 0) log.info(`end of input on stdin: ${calls} request(s) still running may finish; their answers are written before exiting (bounded by MCP_STDIO_SHUTDOWN_IDLE_MS, MCP_STDIO_SHUTDOWN_MAX_MS)`);
      markAllRun();
      void Promise.allSettled([...handling]).then(() => resolve());
    };
  });
  /** Answers each request still running with `why` (-32003) and cancels its call; how many. */
  const cutOffRunning = (why: string): number => {
    let requests = 0;
    for (const entry of running) {
      if (entry.cut) continue;
      const answer = cutOff(entry.body, why);
      entry.cut = true;
      if (answer === null) continue;
      requests += requestCount(answer);
      write(answer);
    }
    gone.abort();
    return requests;
  };
  let markInputEnded = () => {};
  const inputEnded = new Promise<void>((resolve) => (markInputEnded = resolve));
  // the end of input: a last line without a newline counts, and every line read is handled first
  const inputEnds = () => {
    if (inputOver) return;
    inputOver = true;
    markInputEnded();
    input.off('end', inputEnds);
    input.off('close', inputEnds);
    reader.end();
    if (!out.waiting && !turnDue) pump();
  };
  input.once('end', inputEnds);
  input.once('close', inputEnds);
  input.once('error', (err: Error) => {
    log.warn(`stdin: ${err.message}; treated as the end of input`);
    inputEnds();
  });
  let markHostGone = (_reason: string) => {};
  const hostGone = new Promise<string>((resolve) => (markHostGone = resolve));
  // the host no longer reads stdout (closed it, or quit): nothing can be delivered any more, so the
  // calls in flight are cancelled at once (their cancel frames go out) and no further line is run
  const hostLost = (reason: string) => {
    input.off('data', onData);
    input.pause();
    const dropped = pending.length - head;
    pending = [];
    head = 0;
    const calls = [...running].reduce((n, entry) => n + (entry.cut ? 0 : requestCount(cutOff(entry.body, ''))), 0);
    gone.abort();
    dispatcher.subscriptions.cancelAll(`${caller.scope}\u0000`);
    log.warn(`stdout: the host no longer reads it (${reason}); ${calls} request(s) in flight cancelled at their computers${dropped > 0 ? `, ${dropped} line(s) read and not run dropped` : ''}; nothing more is written; exiting`);
    markHostGone(reason);
  };
  const shutdown = (reason: string) => {
    if (closing === null && !finished && out.lost !== null) closing = reason;
    if (closing === null && !finished) {
      closing = reason;
      input.off('data', onData);
      input.pause();
      let refused = 0;
      for (; head < pending.length; head++) if (take(pending[head] as Pending)) refused++;
      pending = [];
      head = 0;
      log.info(`${reason}: stdin is no longer read${refused > 0 ? `; ${refused} request(s) read and not run yet answered -32003 (shutting down)` : ''}`);
    }
    return Promise.allSettled([...handling]).then(() => undefined);
  };
  return {
    ended,
    inputEnded,
    hostGone,
    allRun,
    shutdown,
    cutOff: cutOffRunning,
    queuedBytes: () => output.writableLength,
    get waiting() {
      return out.waiting;
    },
    get waits() {
      return out.waits;
    },
    get coalesced() {
      return out.coalesced;
    },
    get replaced() {
      return out.replaced;
    },
  };
}
