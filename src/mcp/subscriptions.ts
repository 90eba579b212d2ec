// 2026-07-28 `subscriptions/listen`: the filter a client sends, the subscriptions open now, and what
// each one is sent (the acknowledgement, tool list changes, the completion at shutdown). No I/O of
// its own: each transport hands a SubscriptionStream that writes to its stdio line or SSE response.
import { INVALID_PARAMS, errorResponse, isRecord, resultResponse, type ErrorResponse, type JsonRpcId, type Response } from '../jsonrpc/message.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { Shares, type Why } from './shares.js';

export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** modern.ts's META_SERVER_INFO (not imported: modern.ts is loaded at the first 2026-07-28 request, not at start). */
const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';
export const TOOLS_LIST_CHANGED = 'notifications/tools/list_changed';
/** JSON-RPC code of a listen refused by MCP_MAX_SUBSCRIPTIONS (the same "busy" code as MCP_MAX_CONCURRENT_CALLS). */
export const SUBSCRIPTIONS_FULL = -32003;

/** The filter fields 2026-07-28 defines; the booleans and the one list of strings. */
const BOOLEAN_FIELDS = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const;

/** What this server honours of a filter: tool list changes only (it has no prompts or resources). */
export interface Honoured {
  toolsListChanged?: true;
}

/**
 * The part of a listen request's filter this server honours, or why the filter is malformed.
 * Fields the revision defines must have their types (a client that sends `"toolsListChanged": "yes"`
 * learns so instead of silently getting nothing); fields it does not define are ignored, as the
 * acknowledgement leaves out every type the server does not support.
 */
export function readFilter(params: Record<string, unknown>): { honoured: Honoured } | { problem: string } {
  const filter = params.notifications;
  if (filter === undefined) return { problem: 'params.notifications is required: the filter of notifications to receive, e.g. {"toolsListChanged": true}' };
  if (!isRecord(filter)) return { problem: 'params.notifications must be an object, e.g. {"toolsListChanged": true}' };
  for (const field of BOOLEAN_FIELDS) {
    if (field in filter && typeof filter[field] !== 'boolean') {
      return { problem: `params.notifications.${field} must be a boolean, not ${describe(filter[field])}` };
    }
  }
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((u) => typeof u === 'string'))) {
    return { problem: `params.notifications.resourceSubscriptions must be an array of strings, not ${describe(uris)}` };
  }
  return { honoured: filter.toolsListChanged === true ? { toolsListChanged: true } : {} };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    // the first element that is not a string (what makes a resourceSubscriptions list wrong), if any
    const odd = value.find((v) => typeof v !== 'string');
    return 'an array' + (odd === undefined ? '' : ` holding ${describe(odd)}`);
  }
  if (typeof value === 'object') return 'an object';
  // a value is echoed only so far (QUOTE_MAX, as every client value): a 1 MiB string is not sent back whole
  return `${typeof value} ${quoteValue(value)}`;
}

/** Where one subscription's messages go: a stdio line each, or an event on its SSE response. */
export interface SubscriptionStream {
  /** Writes one message on the subscription's stream. */
  send(message: unknown): void;
  /**
   * The server ends it: `final` (the listen request's answer) is written, then the stream closes
   * (stdio, which has no stream of its own: a notifications/cancelled giving `reason`).
   */
  end(final: Response, reason: string): void;
}

interface Live {
  id: JsonRpcId;
  stream: SubscriptionStream;
  unwatch(): void;
  /** Who opened it, for MCP_MAX_SUBSCRIPTIONS_PER_CLIENT (null: nobody the bridge can name). */
  client: string | null;
}

export interface SubscriptionsOptions {
  /** MCP_MAX_SUBSCRIPTIONS: most subscriptions open at once, over every transport. */
  max: number;
  /** MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: most one client holds; one more ends its oldest. */
  perClient: number;
  /** Tool set changes, once per burst (ToolRegistry.watch); returns the unwatch function. */
  watchTools(listener: () => void): () => void;
  /** The server's name and version, for the `_meta` of the result that ends a subscription. */
  serverInfo?: () => unknown;
}

const withId = (id: JsonRpcId, params: Record<string, unknown> = {}) => ({ _meta: { [META_SUBSCRIPTION_ID]: id }, ...params });

/**
 * Every open subscription, by a key its transport chooses: stdio keys by channel and request id (so
 * `notifications/cancelled` finds it), HTTP by its own response stream (closing it is the cancel);
 * and the client each belongs to, so none takes every place (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT).
 */
export class Subscriptions {
  private readonly live = new Map<string, Live>();
  /** Which client holds which keys (per-client cap, fair share at the total). */
  private readonly shares: Shares<string>;
  /** Subscriptions ended by a client (cancel or closed stream), by the server (shutdown), to make room. */
  cancelled = 0;
  completed = 0;
  replaced = 0;
  /** completeAll ran (shutdown): no new subscription opens. */
  private closing = false;

  constructor(private readonly options: SubscriptionsOptions) {
    this.shares = new Shares({ max: options.max, perClient: options.perClient, ownFirst: false });
  }

  get size(): number {
    return this.live.size;
  }

  /**
   * The error a new listen of `client` gets now (shutting down, its key taken, MCP_MAX_SUBSCRIPTIONS
   * reached with no place to free), or null when it may open; then, when a place had to be freed
   * (shares.ts: the client's own oldest over MCP_MAX_SUBSCRIPTIONS_PER_CLIENT, or at the total the
   * oldest of a client holding two more than this one would), that subscription is already ended.
   */
  admit(key: string, id: JsonRpcId, client: string | null): ErrorResponse | null {
    if (this.closing) return errorResponse(id, SUBSCRIPTIONS_FULL, 'Service Unavailable: the bridge is shutting down; open the subscription again once it is back');
    if (this.live.has(key)) {
      return errorResponse(id, INVALID_PARAMS, `Invalid params: a subscription with id ${quoteValue(id)} is already open on this connection; subscription ids must be unique while open`);
    }
    const admission = this.shares.admit(client);
    if (admission.kind === 'refuse') {
      return errorResponse(
        id,
        SUBSCRIPTIONS_FULL,
        `Too many subscriptions: ${this.live.size} are open, the most allowed at once (MCP_MAX_SUBSCRIPTIONS); close one or try again later`,
        { limit: this.options.max },
      );
    }
    if (admission.kind === 'replace') this.replace(admission.victim, admission.why, admission.held);
    return null;
  }

  /**
   * Opens a subscription (call `refusal` first): the acknowledgement goes out before anything else
   * carrying its id, then a tools/list_changed for each burst of changes when it asked for them.
   */
  open(key: string, id: JsonRpcId, honoured: Honoured, stream: SubscriptionStream, client: string | null): void {
    stream.send({ jsonrpc: '2.0', method: ACKNOWLEDGED, params: withId(id, { notifications: { ...honoured } }) });
    const notice = { jsonrpc: '2.0', method: TOOLS_LIST_CHANGED, params: withId(id) };
    const unwatch = honoured.toolsListChanged ? this.options.watchTools(() => stream.send(notice)) : () => {};
    this.live.set(key, { id, stream, unwatch, client });
    this.shares.add(client, key);
  }

  /** The client ended it (notifications/cancelled, a closed stream, EOF): dropped, nothing more is sent. */
  cancel(key: string): boolean {
    const sub = this.live.get(key);
    if (!sub) return false;
    this.drop(key, sub);
    this.cancelled++;
    return true;
  }

  /** Cancels every subscription whose key starts with `prefix` (a stdio channel that reached EOF). */
  cancelAll(prefix: string): void {
    for (const key of [...this.live.keys()]) if (key.startsWith(prefix)) this.cancel(key);
  }

  /**
   * The server ends every subscription (shutdown): each listen request is answered with a complete
   * result carrying its subscription id, then its stream is closed.
   */
  completeAll(): void {
    this.closing = true;
    for (const [key, sub] of [...this.live]) {
      this.drop(key, sub);
      this.completed++;
      // like every 2026-07-28 result, it names the server in _meta
      const info = this.options.serverInfo?.();
      const meta = info === undefined ? { [META_SUBSCRIPTION_ID]: sub.id } : { [META_SUBSCRIPTION_ID]: sub.id, [META_SERVER_INFO]: info };
      sub.stream.end(resultResponse(sub.id, { resultType: 'complete', _meta: meta }), 'the bridge is shutting down');
    }
  }

  /** Ends the subscription under `key` to make room for a newer one: its listen is answered with -32003 saying why. */
  private replace(key: string, why: Why, held: number): void {
    const sub = this.live.get(key)!;
    this.drop(key, sub);
    this.replaced++;
    const [message, variable, limit] =
      why === 'client'
        ? [`this client opened a newer one and may hold ${this.options.perClient} at once (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT); its newest are kept`, 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT', this.options.perClient]
        : [`${this.options.max} are open, the most allowed at once (MCP_MAX_SUBSCRIPTIONS), and this client held the most (${held}); its oldest was ended so another client could subscribe`, 'MCP_MAX_SUBSCRIPTIONS', this.options.max];
    sub.stream.end(errorResponse(sub.id, SUBSCRIPTIONS_FULL, `Subscription ended: ${message}`, { limit, variable }), `subscription ended: ${message}`);
  }

  private drop(key: string, sub: Live): void {
    this.live.delete(key);
    this.shares.remove(sub.client, key);
    sub.unwatch();
  }
}
