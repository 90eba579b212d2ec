// Who a tool call counts against for MCP_CALL_RATE (tools/call-rate.ts), over HTTP (MCP and REST):
// - with MCP_AUTH_TOKEN: its bearer token (one per client when each has its own), so a client cannot
//   start afresh by opening another connection or session;
// - without tokens, from another machine (MCP_ALLOW_UNAUTHENTICATED=on): its remote address, for the
//   same reason;
// - without tokens on loopback: its MCP session when it keeps one, else its TCP connection (the
//   cancellation scope, caller-scope.ts). Every local process shares 127.0.0.1, so the address would
//   make them one caller; each is a client of its own, and a local process can do as much as the
//   bridge could anyway.
// stdio is one caller: its pipe (stdio.ts).
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { bearerToken, tokenIdentity } from '../auth/tokens.js';
import { isLoopbackHost } from '../loopback.js';
import { callerScope } from './caller-scope.js';

/** The key made for a socket's last Authorization header: a client repeats it, so no hash per call. */
const byToken = new WeakMap<Socket, { authorization: string; key: string }>();

/**
 * The MCP_CALL_RATE key of `req`. `tokens`: MCP_AUTH_TOKEN is set (the request passed its check).
 * `scope`: the request's cancellation scope when the surface has it (MCP); REST uses its connection.
 */
export function rateKey(req: IncomingMessage, tokens: boolean, scope?: string): string {
  const socket = req.socket;
  if (tokens) {
    const header = req.headers.authorization;
    const authorization = typeof header === 'string' ? header : '';
    const seen = byToken.get(socket);
    if (seen !== undefined && seen.authorization === authorization) return seen.key;
    const token = bearerToken(authorization);
    if (token !== null) {
      const key = tokenIdentity(token);
      byToken.set(socket, { authorization, key });
      return key;
    }
  }
  const address = socket.remoteAddress;
  if (address !== undefined && !isLoopbackHost(address)) return `address:${address}`;
  return scope ?? callerScope(socket, undefined);
}

/** Retry-After (whole seconds, at least 1) for a call refused with `ms` to wait. */
export function retryAfterSeconds(ms: number | undefined): number {
  return Math.max(1, Math.ceil((ms ?? 1000) / 1000));
}
