// Who "the same client" is over HTTP, for notifications/cancelled: a client that keeps the
// Mcp-Session-Id this bridge handed out at initialize is one client across connections; any other
// request belongs to its TCP connection alone. Session ids are signed (HMAC with a per-process key,
// or the key kept in MCP_SESSION_KEY_FILE so ids outlive a restart: useSessionKey), so only ids this
// bridge issued count and nothing needs storing; an unknown or forged id falls back
// to the connection here (the MCP route then answers a 2025 request carrying one 404, see
// staleSession in mcp-route.ts). Nobody can name another client's scope without holding its id.
//
// With MCP_AUTH_TOKEN set, an id is also bound to the token that initialized it: the signature
// covers the token's identity (tokenIdentity, a SHA-256 prefix), so the id verifies only on requests
// bearing that same token. A client holding another of the configured tokens that learns the id (a
// log, a proxy, a shared screen) gets the same 404 as for an id never issued: it can neither cancel
// that session's calls nor take its GET stream, and cannot tell the id exists. Without tokens the
// binding is empty and the signature is over the nonce alone, as before.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { bearerToken, tokenIdentity } from '../auth/tokens.js';

let key = randomBytes(32);
const sign = (nonce: string, binding: string) =>
  createHmac('sha256', key)
    .update(binding === '' ? nonce : `${nonce}\n${binding}`)
    .digest('hex')
    .slice(0, 32);

/**
 * What a session id is bound to: with tokens (`authorization` is the request's Authorization header,
 * which passed the token check), the identity of its bearer token; without (`undefined`), nothing.
 */
export function sessionBinding(authorization: string | undefined): string {
  if (authorization === undefined) return '';
  return tokenIdentity(bearerToken(authorization) ?? '');
}

/**
 * Signs and verifies ids with `next` from now on (MCP_SESSION_KEY_FILE, at start, before anything
 * listens). One key per process: a second bridge in the same process shares it.
 */
export function useSessionKey(next: Buffer): void {
  key = Buffer.from(next);
}

// Every nonce this start issues begins with this tag and then the tool set's generation (changes
// since start, ToolRegistry.generation) when it was issued, so the GET /mcp stream can tell a client
// whose tool list may be stale (toolsMayDiffer): an id of an earlier start (one that verifies now was
// kept valid by MCP_SESSION_KEY_FILE), or one issued before a change. An id from a build before the
// tag (random there) counts as earlier too, but for one chance in 2^32.
const START_TAG = randomBytes(4).toString('hex');
const generationHex = (generation: number) => (generation >>> 0).toString(16).padStart(8, '0');

/**
 * A fresh session id: 32 hex digits of nonce (this start's 8-digit tag, 8 of the tool set's
 * `generation` now, 16 random), a dot, 32 of signature (over the nonce and `binding`: sessionBinding).
 */
export function issueSessionId(generation = 0, binding = ''): string {
  const nonce = START_TAG + generationHex(generation) + randomBytes(8).toString('hex');
  return `${nonce}.${sign(nonce, binding)}`;
}

/**
 * Whether the tool set may differ from the one when the valid session `id` was issued: an earlier
 * start issued it, or the set has changed since (`generation` is ToolRegistry.generation now).
 */
export function toolsMayDiffer(id: string, generation: number): boolean {
  return !id.startsWith(START_TAG) || id.slice(8, 16) !== generationHex(generation);
}

/** Whether `id` is one this process issued, to a client with this `binding` (sessionBinding). */
export function validSessionId(id: string, binding = ''): boolean {
  const match = /^([0-9a-f]{32})\.([0-9a-f]{32})$/.exec(id);
  if (!match) return false;
  return timingSafeEqual(Buffer.from(sign(match[1]!, binding)), Buffer.from(match[2]!));
}

const connections = new WeakMap<Socket, string>();
let nextConnection = 1;
// The last session id verified on each socket, with the Authorization header it was verified with
// (one keep-alive connection may carry requests with different tokens): a client repeats both on
// every request, so an exact match skips the HMAC. Anything else (altered, forged, another token) is
// verified afresh.
const verified = new WeakMap<Socket, { id: string; authorization: string | undefined }>();

/**
 * The cancellation scope of a request: its valid session, else its connection. `authorization`: the
 * request's Authorization header when tokens are set (the id must have been issued to that token),
 * undefined without tokens.
 */
export function callerScope(socket: Socket, sessionHeader: string | string[] | undefined, authorization?: string): string {
  if (typeof sessionHeader === 'string') {
    const id = sessionHeader.trim();
    const seen = verified.get(socket);
    if (seen !== undefined && seen.id === id && seen.authorization === authorization) return `session:${id}`;
    if (validSessionId(id, sessionBinding(authorization))) {
      verified.set(socket, { id, authorization });
      return `session:${id}`;
    }
  }
  let scope = connections.get(socket);
  if (scope === undefined) {
    scope = `connection:${nextConnection++}`;
    connections.set(socket, scope);
  }
  return scope;
}
