// Who holds an HTTP event stream (a GET /mcp stream, a subscriptions/listen answer), for the
// per-client limits (MCP_MAX_GET_STREAMS_PER_CLIENT, MCP_MAX_SUBSCRIPTIONS_PER_CLIENT): the
// MCP_AUTH_TOKEN the request passed with, or without tokens its remote address. Every client on the
// bridge's own machine shares 127.0.0.1, so without tokens they share one client's places; that is
// still a bound: before, one client (a reconnect loop, a UI that keeps the streams of closed tabs)
// could hold every place of MCP_MAX_GET_STREAMS / MCP_MAX_SUBSCRIPTIONS and leave the others refused.
import type { IncomingMessage } from 'node:http';
import { bearerToken, tokenIdentity } from '../auth/tokens.js';

/** The client of `req`: `token:<hash prefix>` when tokens are set (and it passed), else `address:<ip>`; null when neither can be named. */
export function streamClient(req: IncomingMessage, tokens: boolean, authenticated: boolean): string | null {
  if (tokens) {
    const token = authenticated ? bearerToken(Array.isArray(req.headers.authorization) ? req.headers.authorization.join(', ') : req.headers.authorization) : null;
    return token === null ? null : tokenIdentity(token);
  }
  return `address:${req.socket.remoteAddress ?? '?'}`;
}
