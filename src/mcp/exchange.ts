// What a surface (HTTP, stdio) and the dispatcher exchange: who sent a message (Caller, its scope and
// signal, how it carries a subscriptions/listen stream), and what the surface should send back (Reply).
import type { CancelSignal } from '../cancel.js';
import { isRecord, type JsonRpcId, type Response } from '../jsonrpc/message.js';
import type { SubscriptionStream } from './subscriptions.js';

/** JSON-RPC code of a call refused by MCP_MAX_CONCURRENT_CALLS (answered 503 with Retry-After when alone). */
export const SERVER_BUSY = -32003;

/**
 * JSON-RPC code of a tools/call refused by MCP_CALL_RATE (its caller started too many calls a second;
 * `data.retryAfterMs` says when it may call again; answered 429 with Retry-After when alone over HTTP).
 */
export const RATE_LIMITED = -32029;

/**
 * Who sent a message, as far as cancellation goes: notifications/cancelled reaches only calls with the
 * same scope (HTTP: the TCP connection; stdio: the one pipe). `signal` aborts every call of the message
 * (the HTTP request was closed before its answer).
 */
export interface Caller {
  scope: string;
  /** Who its tool calls count against for MCP_CALL_RATE (surfaces/rate-key.ts); the scope when absent. */
  rate?: string;
  signal?: CancelSignal;
  /** The transport can deliver notifications/tools/list_changed (stdio; HTTP's GET stream), so initialize declares it. */
  listChanged?: boolean;
  /** How this transport carries a 2026-07-28 subscriptions/listen stream; absent: it cannot. */
  listen?: ListenTransport;
  /**
   * The 2025 revision this message speaks (HTTP: MCP-Protocol-Version, none meaning 2025-03-26; stdio:
   * what initialize settled on); absent when not known. A 2025-03-26 caller gets tool results in that
   * revision's content types (older-content.ts).
   */
  revision?: string;
}

/** A transport's side of subscriptions/listen (see modern-dispatch.ts). */
export interface ListenTransport {
  /** Why this request cannot become a stream (HTTP: Accept lacks text/event-stream); null when it can. */
  problem: string | null;
  /** The key the subscription is kept under while open (stdio: the channel and request id). */
  key(id: JsonRpcId): string;
  /**
   * Who is asking, for MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: stdio its connection, HTTP its auth token
   * when MCP_AUTH_TOKEN is set; null when the bridge cannot name the client (HTTP without tokens).
   */
  client(): string | null;
  /** Starts the stream (HTTP: the SSE head) and returns where its messages go; null: shutting down. */
  open(key: string, id: JsonRpcId): SubscriptionStream | null;
}

/** What the transport should send: a status and a JSON body, or nothing (202). */
export interface Reply {
  status: number;
  body: Response | Response[] | null;
  headers?: Record<string, string>;
  /** The transport took the request over as a long-lived stream (subscriptions/listen): write nothing. */
  streaming?: boolean;
  /**
   * The client cancelled this request with notifications/cancelled: the cancellation utility says the
   * receiver SHOULD NOT answer it (an answer makes the TypeScript SDK, hence Claude Code and opencode,
   * report "Received a response for an unknown message ID" as a connection error). stdio writes
   * nothing; HTTP, which must close the request's exchange, ends an event stream without an event
   * when the client takes one, else sends `body` as usual.
   */
  cancelled?: boolean;
}

/**
 * On the result of a tools/call whose call the client cancelled with notifications/cancelled. A
 * symbol, so no JSON answer ever shows it; `complete()` (2026-07-28) keeps it by spreading.
 */
export const CANCELLED_BY_CLIENT: unique symbol = Symbol('cancelled by notifications/cancelled');

/** Whether a single answer is for a call its client cancelled with notifications/cancelled. */
export function cancelledByClient(response: Response | null): boolean {
  return response !== null && 'result' in response && isRecord(response.result) && CANCELLED_BY_CLIENT in response.result;
}

/**
 * Calls (and stdio subscriptions) are tracked per caller scope, so one client's
 * notifications/cancelled never reaches another's call.
 */
export const callKey = (caller: Caller, id: JsonRpcId) => `${caller.scope}\u0000${typeof id}:${id}`;

/**
 * The HTTP reply of a lone request refused before it ran: MCP_MAX_CONCURRENT_CALLS and the like 503
 * with `Retry-After: 1`, MCP_CALL_RATE 429 with the whole seconds until the caller may call again;
 * null for any other answer.
 */
export function refusedReply(response: Response): Reply | null {
  if (!('error' in response)) return null;
  const { code, data } = response.error;
  if (code === SERVER_BUSY) return { status: 503, body: response, headers: { 'retry-after': '1' } };
  if (code === RATE_LIMITED) {
    const ms = isRecord(data) && typeof data.retryAfterMs === 'number' ? data.retryAfterMs : 1000;
    return { status: 429, body: response, headers: { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) } };
  }
  return null;
}
