// The SSE response of one 2026-07-28 subscriptions/listen over Streamable HTTP: it stays open, one
// `message` event per notification, a comment line when idle (keep-alive), and closing it is how
// the client ends the subscription.
import type { ServerResponse } from 'node:http';
import type { SubscriptionStream, Subscriptions } from '../mcp/subscriptions.js';
import { SEND_CHUNK_BYTES } from './respond.js';

export interface ListenStreamOptions {
  /** MCP_LISTEN_KEEPALIVE_MS: a comment after this long without a write; 0: none. */
  keepAliveMs: number;
  /** Extra response headers (CORS and the like are already set on `res`). */
  headers?: Record<string, string>;
}

/**
 * Writes the SSE head and returns the stream the subscription writes to. When the client closes the
 * response (or its socket dies), the subscription under `key` is cancelled and its timer stopped.
 * A client that takes nothing while more than SEND_CHUNK_BYTES wait unsent is cut off the same way:
 * a subscription never holds more than that (notifications are ~150 bytes, a comment 3).
 */
export function openListenStream(res: ServerResponse, key: string, subscriptions: Subscriptions, options: ListenStreamOptions): SubscriptionStream {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    // nginx and the like hold back a buffered response; each notification must go out at once
    'x-accel-buffering': 'no',
    ...options.headers,
  });
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (options.keepAliveMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => write(':\n\n'), options.keepAliveMs);
    timer.unref();
  };
  const write = (text: string) => {
    if (res.destroyed || res.writableEnded) return;
    if (res.writableLength > SEND_CHUNK_BYTES) {
      // the client has taken nothing for a long while: free the stream (the close cancels it)
      res.destroy();
      return;
    }
    res.write(text);
    arm();
  };
  res.once('close', () => {
    clearTimeout(timer);
    // the client closed the stream (or the server cut it): the subscription ends without an answer
    subscriptions.cancel(key);
  });
  // the head goes out with the first event; headers alone flushed now let a client see 200 at once
  res.flushHeaders();
  arm();
  const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
  return {
    send: (message) => write(event(message)),
    end(final) {
      clearTimeout(timer);
      if (res.destroyed || res.writableEnded) return;
      res.end(event(final));
    },
  };
}
