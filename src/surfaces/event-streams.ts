// Long-lived server-to-client event streams (Server-Sent Events on an HTTP answer that stays open):
// the 2025 revisions' GET /mcp stream and 2026-07-28 subscriptions/listen answers. Every open stream
// counts against its set's limit (who may hold a place is decided before: shares.ts), gets a
// comment line every MCP_LISTEN_KEEPALIVE_MS so proxies and clients do not time it out, is cut off
// when its client takes none of it for MCP_SEND_STALL_MS or lets more than SEND_CHUNK_BYTES pile up
// (the bridge never buffers without bound for a client that does not read), and is ended when the
// bridge shuts down or makes room for a newer stream (its place free at once). No event ids: a
// stream is not resumable (Last-Event-ID is ignored).
import { performance } from 'node:perf_hooks';
import type { ServerResponse } from 'node:http';
import { SEND_CHUNK_BYTES } from './respond.js';

/** Most bytes a stream may have waiting for its client when it is written again; more cuts it off. */
export const STREAM_MAX_QUEUED_BYTES = SEND_CHUNK_BYTES;

const KEEPALIVE = ': keep-alive\n\n';

/** What a stream writes to: an HTTP answer whose head is written (any node Writable in tests). */
export interface StreamSink {
  write(chunk: string): boolean;
  end(): unknown;
  destroy(): unknown;
  readonly writableLength: number;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  once(event: 'close', listener: () => void): unknown;
}

export interface EventStreamsOptions {
  /** MCP_MAX_GET_STREAMS: most streams open at once. */
  maxStreams: number;
  /** MCP_LISTEN_KEEPALIVE_MS: a comment line this often on every stream; 0: none. */
  keepAliveMs: number;
  /** MCP_SEND_STALL_MS: a stream whose client has taken none of what waits for this long is cut off. */
  stallMs: number;
}

/** Why a stream was not opened: MCP_MAX_GET_STREAMS are open, or the bridge is shutting down. */
export type StreamRefusal = 'limit' | 'closing';

/** One open event stream. */
export class EventStream {
  /** performance.now() when the stream was first seen with bytes its client had not taken; -1: none. */
  private stalledSince = -1;
  private readonly closers: Array<() => void> = [];

  constructor(
    private readonly sink: StreamSink,
    private readonly owner: EventStreams,
  ) {}

  get open(): boolean {
    return !this.sink.destroyed && !this.sink.writableEnded;
  }

  /** Sends one JSON-RPC message as a `message` event (JSON text has no raw line breaks: one data line). */
  send(message: unknown): boolean {
    return this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /**
   * Ends the stream (the client sees its answer complete), after an SSE comment saying why when
   * given. Its place is free and its onClose functions run at once, before the connection closes.
   */
  end(reason?: string): void {
    if (this.open) {
      if (reason !== undefined) this.sink.write(`: ${reason.replace(/[\r\n]+/g, ' ')}\n\n`);
      this.sink.end();
    }
    this.owner.release(this);
    this.closed();
  }

  /** Ends the stream to make room for another (a per-client limit), saying why; counted in `replaced`. */
  replace(reason: string): void {
    this.owner.replaced++;
    this.end(reason);
  }

  /** Runs `fn` once the stream is gone (closed by either side, cut off or ended). */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  /** @internal the owner's keep-alive tick */
  tick(now: number): void {
    if (!this.open) return;
    if (this.sink.writableLength > 0) {
      // what was written before has not left: the client is not reading (a keep-alive adds nothing)
      if (this.stalledSince < 0) this.stalledSince = now;
      else if (now - this.stalledSince >= this.owner.options.stallMs) this.owner.cut(this);
      return;
    }
    this.stalledSince = -1;
    if (this.owner.options.keepAliveMs > 0) this.write(KEEPALIVE);
  }

  /** @internal */
  closed(): void {
    for (const fn of this.closers.splice(0)) fn();
  }

  /** @internal */
  destroy(): void {
    this.sink.destroy();
  }

  private write(text: string): boolean {
    if (!this.open) return false;
    // bytes left waiting by earlier writes decide, not this one's: a single message longer than
    // the bound (a listen's acknowledgement echoes the client's id) still goes out whole
    if (this.sink.writableLength > STREAM_MAX_QUEUED_BYTES) {
      this.owner.cut(this);
      return false;
    }
    this.sink.write(text);
    return true;
  }
}

/** The open streams of one listener: the limit, the keep-alive tick, the cut-offs and shutdown. */
export class EventStreams {
  private readonly streams = new Set<EventStream>();
  private timer: NodeJS.Timeout | undefined;
  private shuttingDown = false;
  /** Streams cut off because their client took nothing for stallMs or let too much wait. */
  cutOff = 0;
  /** Streams the bridge ended to make room for another (EventStream.replace). */
  replaced = 0;

  constructor(readonly options: EventStreamsOptions) {}

  /** Whether close() ran: no new stream opens. */
  get closing(): boolean {
    return this.shuttingDown;
  }

  /** Streams open now. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Opens an event stream on `res` (status 200, text/event-stream, head sent at once), or says why
   * not and writes nothing. The stream leaves the set when its connection closes.
   */
  open(res: ServerResponse, headers: Record<string, string> = {}): EventStream | StreamRefusal {
    if (this.shuttingDown) return 'closing';
    if (this.streams.size >= this.options.maxStreams) return 'limit';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...headers });
    res.flushHeaders();
    return this.adopt(res);
  }

  /** Tracks a stream on a sink whose head is already written (`open` does both). */
  adopt(sink: StreamSink): EventStream {
    const stream = new EventStream(sink, this);
    this.streams.add(stream);
    sink.once('close', () => {
      this.release(stream);
      stream.closed();
    });
    // without keep-alives the tick still looks for stalled clients, every stallMs
    this.timer ??= setInterval(() => this.tick(), this.options.keepAliveMs || this.options.stallMs).unref();
    return stream;
  }

  /** @internal The stream no longer counts (ended by the bridge, or closed). */
  release(stream: EventStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0) this.stopTimer();
  }

  /** @internal Cuts a stream off (its client does not read); its close then drops it. */
  cut(stream: EventStream): void {
    this.cutOff++;
    stream.destroy();
  }

  /** Ends every stream and refuses new ones (bridge shutdown). */
  close(): void {
    this.shuttingDown = true;
    this.stopTimer();
    for (const stream of this.streams) stream.end();
  }

  private tick(): void {
    const now = performance.now();
    for (const stream of this.streams) stream.tick(now);
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
