// The client role of JSON-RPC 2.0 over any message transport (stdio lines, Streamable HTTP):
// requests with ids and timeouts, notifications both ways, and cancellation that tells the other
// side (`notifications/cancelled`, as MCP defines it). The server role lives in mcp/dispatch.ts;
// both classify messages with message.ts.
//
//   const client = new JsonRpcClient(transport, { timeoutMs: 30_000 });
//   await client.start();
//   const result = await client.request('tools/list', {}, { signal });   // rejects with RpcClientError
//   client.onNotification('notifications/tools/list_changed', () => ...);
//   await client.notify('notifications/initialized');
//   await client.close();
import type { Logger } from '../log.js';
import { Cancellation, type AbortListener, type CancelSignal } from '../cancel.js';
import { METHOD_NOT_FOUND, classify, errorResponse, isRecord, resultResponse, type JsonRpcId } from './message.js';
import { DEFAULT_MAX_JSON_DEPTH, boundsProblem } from './bounds.js';

/** What a transport tells its client. */
export interface TransportHandlers {
  /** One parsed JSON value the other side sent (a message, or a batch array). */
  message(value: unknown): void;
  /** The transport ended by itself (process exited, session expired ...): no more messages. */
  close(reason: string): void;
  /**
   * A message was dropped unread (over a size limit). `id`: the request it answered, when known;
   * that request fails now with `the answer <reason>` instead of waiting for its timeout.
   */
  dropped?(id: JsonRpcId | null, reason: string): void;
}

/** Moves JSON-RPC messages; knows nothing of ids or methods. */
export interface Transport {
  start(handlers: TransportHandlers): Promise<void>;
  /**
   * Sends one message. Rejects when it could not be delivered; a request's answer may also arrive
   * through `handlers.message` before this resolves (HTTP). `signal` aborts the delivery.
   */
  send(message: unknown, signal?: CancelSignal): Promise<void>;
  /** Ends the transport (kills the process, deletes the HTTP session). Idempotent. */
  close(): Promise<void>;
  /** Streamable HTTP sends the negotiated revision on every request after initialize. */
  setProtocolVersion?(version: string): void;
}

/** How long an abandoned request stays open while its notifications/cancelled is being delivered. */
export const CANCEL_SEND_MS = 2000;

export type RpcClientErrorCode = 'ERR_RPC_TIMEOUT' | 'ERR_RPC_CANCELLED' | 'ERR_RPC_CLOSED' | 'ERR_RPC_SEND' | 'ERR_RPC_REMOTE' | 'ERR_RPC_MALFORMED';

export class RpcClientError extends Error {
  constructor(
    readonly code: RpcClientErrorCode,
    message: string,
    /** For ERR_RPC_REMOTE: the error object the other side answered. */
    readonly rpcCode?: number,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcClientError';
  }
}

export interface ClientOptions {
  /** Default timeout of every request, in ms. */
  timeoutMs: number;
  log?: Logger;
  /** How this peer is named in log lines: `upstream files`. */
  name?: string;
  /**
   * On cancel, keep the request open until notifications/cancelled is delivered (at most
   * CANCEL_SEND_MS), then close it; default: close it at once. cc-mcp sets it so its notice, not the
   * closed request, is what cancels the call at the bridge.
   */
  noticeBeforeClose?: boolean;
  /** Deepest nesting a message may have (CC_UPSTREAM_MAX_JSON_DEPTH); 64 when absent. */
  maxDepth?: number;
}

export interface RequestOptions {
  timeoutMs?: number;
  /** Aborting it cancels the request: `notifications/cancelled` goes to the other side. */
  signal?: CancelSignal;
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(err: RpcClientError): void;
}

export class JsonRpcClient {
  private nextId = 1;
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly notificationHandlers = new Map<string, Set<(params: unknown) => void>>();
  private readonly closeHandlers = new Set<(reason: string) => void>();
  private closedReason: string | null = null;

  /** What a request in flight needs of its client. */
  private readonly owner: RequestOwner;

  constructor(
    private readonly transport: Transport,
    private readonly options: ClientOptions,
  ) {
    this.owner = { pending: this.pending, cancelRemote: (id, reason) => this.cancelRemote(id, reason), noticeBeforeClose: options.noticeBeforeClose === true };
  }

  /** Why the connection ended, or null while it is open. */
  get closed(): string | null {
    return this.closedReason;
  }

  /** Requests waiting for their answers. */
  get inFlight(): number {
    return this.pending.size;
  }

  start(): Promise<void> {
    return this.transport.start({
      message: (value) => this.receive(value),
      close: (reason) => this.ended(reason),
      dropped: (id, reason) => this.fail(id, reason),
    });
  }

  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    if (this.closedReason !== null) return Promise.reject(new RpcClientError('ERR_RPC_CLOSED', `connection closed: ${this.closedReason}`));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new RpcClientError('ERR_RPC_CANCELLED', `${method} cancelled before it was sent`));
    const id = this.nextId++;
    const request = new ClientRequest<T>(this.owner, id, method, options.timeoutMs ?? this.options.timeoutMs, signal);
    this.pending.set(id, request);
    signal?.addEventListener('abort', request, { once: true });
    const message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
    this.transport.send(message, request).catch((err: Error) => {
      if (this.pending.get(id) === request) request.reject(new RpcClientError('ERR_RPC_SEND', `${method} did not get through: ${err.message}`));
    });
    return request.promise;
  }

  async notify(method: string, params?: unknown): Promise<void> {
    if (this.closedReason !== null) throw new RpcClientError('ERR_RPC_CLOSED', `connection closed: ${this.closedReason}`);
    const message = params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    try {
      await this.transport.send(message, AbortSignal.timeout(this.options.timeoutMs));
    } catch (err) {
      throw new RpcClientError('ERR_RPC_SEND', `${method} could not be sent: ${(err as Error).message}`);
    }
  }

  /** Calls `handler` for every notification `method`; returns the unsubscribe function. */
  onNotification(method: string, handler: (params: unknown) => void): () => void {
    const set = this.notificationHandlers.get(method) ?? new Set();
    set.add(handler);
    this.notificationHandlers.set(method, set);
    return () => set.delete(handler);
  }

  /** Calls `handler` once when the connection ends, whichever side ended it. */
  onClose(handler: (reason: string) => void): () => void {
    this.closeHandlers.add(handler);
    return () => this.closeHandlers.delete(handler);
  }

  /** Fails what is in flight and closes the transport. */
  async close(reason = 'closed by the bridge'): Promise<void> {
    this.ended(reason);
    await this.transport.close();
  }

  /** Tells the other side a request is abandoned; settles once sent, failed, or after CANCEL_SEND_MS. */
  private async cancelRemote(id: JsonRpcId, reason: string): Promise<void> {
    if (this.closedReason !== null) return;
    const message = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } };
    try {
      await this.transport.send(message, AbortSignal.timeout(Math.min(CANCEL_SEND_MS, this.options.timeoutMs)));
    } catch (err) {
      this.options.log?.debug(`${this.label()}: cancel for request ${id} not sent: ${(err as Error).message}`);
    }
  }

  private label(): string {
    return this.options.name ?? 'JSON-RPC peer';
  }

  private ended(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    for (const pending of [...this.pending.values()]) {
      pending.reject(new RpcClientError('ERR_RPC_CLOSED', `connection closed before ${pending.method} was answered: ${reason}`));
    }
    for (const handler of this.closeHandlers) handler(reason);
  }

  /** Fails request `id` (when it is waiting) because its answer was unusable: `the answer <reason>`. */
  private fail(id: JsonRpcId | null, reason: string): void {
    const pending = id === null ? undefined : this.pending.get(id);
    pending?.reject(new RpcClientError('ERR_RPC_MALFORMED', `${pending.method}: the answer ${reason}`));
  }

  private receive(value: unknown, inBatch = false): void {
    if (Array.isArray(value) && !inBatch) {
      for (const item of value) this.receive(item, true);
      return;
    }
    // bounded before anything walks it (classify, the tools that copy a result, JSON.stringify)
    const maxDepth = this.options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH;
    const tooDeep = boundsProblem(value, { maxDepth });
    if (tooDeep) {
      // the id sits at the top: reading it walks nothing; a request from the server has a method
      const id = isRecord(value) && !('method' in value) && (typeof value.id === 'string' || typeof value.id === 'number') ? value.id : null;
      const pending = id === null ? undefined : this.pending.get(id);
      if (pending) this.fail(id, `${tooDeep} (CC_UPSTREAM_MAX_JSON_DEPTH)`);
      else this.options.log?.warn(`${this.label()} sent a message that ${tooDeep}; dropped`);
      return;
    }
    const message = classify(value);
    const log = this.options.log;
    switch (message.kind) {
      case 'invalid': {
        // a broken answer that still names one of our requests fails that request now, not at its timeout
        const pending = message.id === null || (isRecord(value) && 'method' in value) ? undefined : this.pending.get(message.id);
        if (pending) {
          pending.reject(new RpcClientError('ERR_RPC_MALFORMED', `${pending.method}: the answer is not JSON-RPC (${message.reason})`));
          return;
        }
        log?.warn(`${this.label()} sent an invalid JSON-RPC message (${message.reason}); ignored`);
        return;
      }
      case 'notification': {
        const handlers = this.notificationHandlers.get(message.method);
        for (const handler of handlers ?? []) handler(message.params);
        return;
      }
      case 'request':
        // the bridge offers no client capabilities (sampling, roots, elicitation): only ping
        this.reply(message.method === 'ping' ? resultResponse(message.id, {}) : errorResponse(message.id, METHOD_NOT_FOUND, `Method not found: ${message.method}`));
        return;
      case 'response': {
        const response = value as { id: JsonRpcId | null; result?: unknown; error?: { code: number; message: string; data?: unknown } };
        const pending = response.id === null ? undefined : this.pending.get(response.id);
        if (!pending) {
          log?.debug(`${this.label()} answered an unknown or finished request ${JSON.stringify(response.id)}; ignored`);
          return;
        }
        if (isRecord(response.error)) {
          const { code, message: text, data } = response.error;
          pending.reject(new RpcClientError('ERR_RPC_REMOTE', `${pending.method} failed: ${text} (${code})`, code, data));
        } else {
          pending.resolve(response.result);
        }
      }
    }
  }

  private reply(message: unknown): void {
    this.transport.send(message).catch((err: Error) => this.options.log?.debug(`${this.label()}: answer not sent: ${err.message}`));
  }
}

interface RequestOwner {
  pending: Map<JsonRpcId, Pending>;
  cancelRemote(id: JsonRpcId, reason: string): Promise<void>;
  noticeBeforeClose: boolean;
}

/**
 * One request in flight: its pending entry, its timer (setTimeout's argument) and its abort listener
 * (handleEvent) in one object, instead of six closures per request. It is also the signal its
 * transport gets for the delivery (aborted when the request is given up: HTTP aborts the POST); the
 * Cancellation behind it is made only if the transport listens (stdio does not).
 */
class ClientRequest<T> implements Pending, CancelSignal {
  readonly promise: Promise<T>;
  private delivery: Cancellation | null = null;
  private given = false;
  private ok!: (value: T) => void;
  private fail!: (err: RpcClientError) => void;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly owner: RequestOwner,
    readonly id: JsonRpcId,
    readonly method: string,
    private readonly timeoutMs: number,
    private readonly signal: CancelSignal | undefined,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.ok = resolve;
      this.fail = reject;
    });
    this.timer = setTimeout(requestTimedOut, timeoutMs, this as ClientRequest<unknown>);
  }

  get aborted(): boolean {
    return this.given;
  }

  addEventListener(_type: 'abort', listener: AbortListener): void {
    (this.delivery ??= new Cancellation()).addEventListener('abort', listener);
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    this.delivery?.removeEventListener('abort', listener);
  }

  private abortDelivery(): void {
    this.given = true;
    this.delivery?.abort();
  }

  resolve(result: unknown): void {
    this.finish();
    this.ok(result as T);
  }

  reject(err: RpcClientError): void {
    this.finish();
    this.fail(err);
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.giveUp(new RpcClientError('ERR_RPC_CANCELLED', `${this.method} cancelled`), 'cancelled by the caller');
  }

  timedOut(): void {
    this.giveUp(new RpcClientError('ERR_RPC_TIMEOUT', `${this.method} timed out after ${this.timeoutMs} ms`), `timed out after ${this.timeoutMs} ms`);
  }

  private finish(): void {
    this.owner.pending.delete(this.id);
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
  }

  private giveUp(err: RpcClientError, reason: string): void {
    if (!this.owner.pending.has(this.id)) return;
    this.finish();
    this.fail(err);
    const notice = this.owner.cancelRemote(this.id, reason);
    if (this.owner.noticeBeforeClose) void notice.finally(() => this.abortDelivery());
    else this.abortDelivery();
  }
}

function requestTimedOut(request: ClientRequest<unknown>): void {
  request.timedOut();
}
