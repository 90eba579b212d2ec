// The --stdio surface as the process sees it: what serveStdio (stdio.ts) is given, what it hands
// back (its state, its shutdown), and the metrics read from it.
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../log.js';
import type { Dispatcher } from '../mcp/dispatch.js';
import type { Metrics } from '../metrics.js';

export interface StdioOptions {
  input: Readable;
  output: Writable;
  dispatcher: Dispatcher;
  log: Logger;
  /** Largest line accepted (MCP_MAX_BODY_BYTES); a longer one is answered -32600 and skipped. */
  maxLineBytes: number;
  /** Tool set changes, once per burst (ToolRegistry.watch); returns the unwatch function. */
  onToolsChanged(listener: () => void): () => void;
  /**
   * MCP_STDIO_HIGH_WATER_BYTES: with more than this waiting in `output` (and at least its own
   * writableHighWaterMark), no input is read until `output` drains.
   */
  highWaterBytes: number;
  /**
   * MCP_STDIO_MAX_QUEUED_BYTES (at least highWaterBytes counts): while the host has left bytes
   * unread, an answer that would take `output` past this is replaced by a -32003 error for its id.
   */
  maxQueuedBytes: number;
}

export interface StdioSurface {
  /**
   * Resolves once input has ended (EOF) and every answer still due has been written: each call in
   * flight has finished, or been answered by cutOff().
   */
  readonly ended: Promise<void>;
  /** Resolves at EOF (or a stdin error), before the lines read are all run. */
  readonly inputEnded: Promise<void>;
  /**
   * Resolves (with the error code, or "closed") once the host no longer reads stdout: its calls in
   * flight have been cancelled, nothing more is written or read; the process should exit.
   */
  readonly hostGone: Promise<string>;
  /** Resolves after EOF once every line read has been run (calls may still be in flight). */
  readonly allRun: Promise<void>;
  /**
   * After EOF, when the shutdown stops waiting (`why`: cutOffReason()): each request still running
   * is answered -32003 with it now and its call cancelled (a late answer of its own is dropped).
   * Returns how many requests were answered so.
   */
  cutOff(why: string): number;
  /**
   * The bridge stops (`reason`: "SIGTERM received"): stdin is no longer read, each request read and
   * not run yet is answered -32003 (notifications among those lines are still handled); resolves
   * once the calls under way have settled (their answers written).
   */
  shutdown(reason: string): Promise<void>;
  /** Bytes written to stdout that the host has not taken yet. */
  queuedBytes(): number;
  /** Whether stdin is not being read now, waiting for stdout to drain. */
  readonly waiting: boolean;
  /** Times stdin reading stopped for stdout (each wait counted once). */
  readonly waits: number;
  /** Tool list notices not written because one for the same target was already owed. */
  readonly coalesced: number;
  /** Answers replaced by a -32003 error for MCP_STDIO_MAX_QUEUED_BYTES. */
  readonly replaced: number;
}

/** The stdio gauges of /metrics (served with MCP_PORT). */
export function addStdioGauges(metrics: Metrics, surface: StdioSurface): void {
  metrics.addGauge({ name: 'cc_stdio_output_queued_bytes', help: 'Bytes written to stdout that the host has not read yet (--stdio; stdin is not read while over MCP_STDIO_HIGH_WATER_BYTES).', read: () => surface.queuedBytes() });
  metrics.addGauge({ name: 'cc_stdio_input_waiting', help: 'Whether stdin is not being read now, waiting for the host to read stdout (--stdio).', read: () => (surface.waiting ? 1 : 0) });
  metrics.addGauge({ name: 'cc_stdio_input_waits_total', type: 'counter', help: 'Times stdin reading stopped until the host read stdout (MCP_STDIO_HIGH_WATER_BYTES).', read: () => surface.waits });
  metrics.addGauge({ name: 'cc_stdio_notices_coalesced_total', type: 'counter', help: 'Tool list change notices folded into one already owed while stdout was stuck (--stdio).', read: () => surface.coalesced });
  metrics.addGauge({ name: 'cc_stdio_answers_replaced_total', type: 'counter', help: 'Answers not written, replaced by a -32003 error, because the host had left more than MCP_STDIO_MAX_QUEUED_BYTES of stdout unread (--stdio).', read: () => surface.replaced });
}
