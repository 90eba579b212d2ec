// The SSE answer of one 2026-07-28 subscriptions/listen over Streamable HTTP, on the event streams
// the GET /mcp stream uses too (event-streams.ts: keep-alive comments every MCP_LISTEN_KEEPALIVE_MS,
// a client that takes nothing cut off, every stream ended at shutdown). Closing it is how the client
// ends the subscription.
import type { ServerResponse } from 'node:http';
import type { SubscriptionStream, Subscriptions } from '../mcp/subscriptions.js';
import type { EventStreams } from './event-streams.js';

/**
 * Opens the stream on `res` for the subscription under `key`; null when the bridge is shutting down
 * (nothing written). When the stream closes (the client, a cut-off, shutdown) the subscription is
 * cancelled: dropped, its watcher gone.
 */
export function openListenStream(res: ServerResponse, key: string, subscriptions: Subscriptions, streams: EventStreams): SubscriptionStream | null {
  const stream = streams.open(res);
  // 'limit' cannot happen (MCP_MAX_SUBSCRIPTIONS was checked for every transport, this set's max is
  // that limit, and a listen ended to make room freed its place at once); 'closing' only once
  // shutdown began
  if (typeof stream === 'string') return null;
  stream.onClose(() => subscriptions.cancel(key));
  return {
    send: (message) => void stream.send(message),
    end(final) {
      stream.send(final);
      stream.end();
    },
  };
}
