// What serveStdio (stdio.ts) is given and hands back: the --stdio surface's options and its view
// for the process (metrics, shutdown).
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../log.js';
import type { Dispatcher } from '../mcp/dispatch.js';

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
}

export interface StdioSurface {
  /** Resolves once input has ended (EOF) and every answer still due has been written. */
  readonly ended: Promise<void>;
  /** Resolves at EOF (or a stdin error), before the lines read are all run. */
  readonly inputEnded: Promise<void>;
  /** Resolves after EOF once every line read has been run (calls still in flight are being cancelled). */
  readonly allRun: Promise<void>;
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
}
