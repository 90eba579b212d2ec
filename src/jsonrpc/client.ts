// The client role of JSON-RPC 2.0 over any message transport (stdio lines, Streamable HTTP):
// requests with ids and timeouts, notifications both ways, and cancellation that tells the other
// side (`notifications/cancelled`, as MCP defines it). The server role lives in mcp/dispatch.ts;
// both classify messages with message.ts. A request in flight is a ClientRequest (client-request.ts);
// what comes in from the transport is handled by client-inbound.ts.
//
//   const client = new JsonRpcClient(transport, { timeoutMs: 30_000 });
//   await client.start();
//   const result = await client.request('tools/list', {}, { signal });   // rejects with RpcClientError
//   client.onNotification('notifications/tools/list_changed', () => ...);
//   await client.notify('notifications/initialized');
//   await client.close();
import type { Logger } from '../log.js';
import type { CancelSignal } from '../cancel.js';
import type { JsonRpcId } from './message.js';
import { DEFAULT_MAX_JSON_DEPTH } from './bounds.js';
import { ClientRequest, Deadlines, RpcClientError, type Pending, type RequestEnds, type RequestOwner } from './client-request.js';
import { failAnswer, receive, type InboundPeer } from './client-inbound.js';

export { RpcClientError, type RequestEnds, type RpcClientErrorCode } from './client-request.js';

/**
 * What a transport's send rejects with when the request reached the other side but its answer was
 * lost on the way back (Streamable HTTP: the connection closed part-way through the answer or its
 * event stream). The request fails `<method> was not answered: ...`, not `did not get through`,
 * which told the operator the server had never seen it.
 */
export class NotAnsweredError extends Error {}

/** What a transport tells its client. */
export interface TransportHandlers {
  /**
   * One parsed JSON value the other side sent (a message, or a batch array). `chars`: the length of
   * the JSON text it was parsed from, when the transport has it (a text shorter than
   * 2 * (maxDepth + 1) characters cannot nest deeper than maxDepth, so it is not walked for depth).
   */
  message(value: unknown, chars?: number): void;
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
  /**
   * Optional: sends the request `{ jsonrpc: '2.0', id, method, params }` (params left out when
   * undefined) as `send` would, given in pieces so a line transport can write its envelope as text
   * instead of building and stringifying the object (stdio).
   */
  sendRequest?(id: number, method: string, params: unknown, signal: CancelSignal): Promise<void>;
  /** Ends the transport (kills the process, deletes the HTTP session). Idempotent. */
  close(): Promise<void>;
  /** Streamable HTTP sends the negotiated revision on every request after initialize. */
  setProtocolVersion?(version: string): void;
}

/** How long an abandoned request stays open while its notifications/cancelled is being delivered. */
export const CANCEL_SEND_MS = 2000;

/**
 * Most answers to the other side's own requests (ping; anything else is answered -32601) being sent at
 * once: written but not yet taken by a stdio child, or POSTed and not yet answered over HTTP. A
 * request past it is not answered.
 */
export const MAX_REPLIES_IN_FLIGHT = 64;

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

/** Requests whose sends returned the same promise (JsonRpcClient.sending). */
interface SendGroup {
  readonly sent: Promise<void>;
  readonly requests: (Pending & { readonly id: JsonRpcId })[];
}

export class JsonRpcClient {
  private nextId = 1;
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly notificationHandlers = new Map<string, Set<(params: unknown) => void>>();
  private readonly closeHandlers = new Set<(reason: string) => void>();
  private closedReason: string | null = null;
  /**
   * The requests whose sends returned one promise (stdio: every line of a turn leaves in one write
   * and shares its promise): its failure fails them all, through one handler per promise instead of
   * a `.catch` (a promise, a closure and a job) per request.
   */
  private sending: SendGroup | null = null;
  /** Answers to the other side's requests being sent now (MAX_REPLIES_IN_FLIGHT), and the requests left unanswered. */
  private replying = 0;
  private repliesRefused = 0;
  private readonly replied = (): void => void this.replying--;

  /** What a request in flight needs of its client. */
  private readonly owner: RequestOwner;
  /** What the transport's messages are handled against (client-inbound.ts). */
  private readonly peer: InboundPeer;

  constructor(
    private readonly transport: Transport,
    private readonly options: ClientOptions,
  ) {
    this.owner = { pending: this.pending, deadlines: new Deadlines(this.pending), cancelRemote: (id, reason) => this.cancelRemote(id, reason), noticeBeforeClose: options.noticeBeforeClose === true };
    const label = this.label();
    const log = options.log;
    this.peer = {
      pending: this.pending,
      notificationHandlers: this.notificationHandlers,
      log,
      label,
      maxDepth: options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH,
      reply: (message) => {
        // a peer that sends requests faster than it takes the answers (a stdio server that does not
        // read its stdin, an HTTP server that does not answer their POSTs) would have every answer
        // kept here: past MAX_REPLIES_IN_FLIGHT its requests go unanswered
        if (this.replying >= MAX_REPLIES_IN_FLIGHT) {
          if (this.repliesRefused++ === 0) log?.warn(`${label} sends requests of its own faster than it takes the answers: ${MAX_REPLIES_IN_FLIGHT} answers are still being sent to it; its requests past that are not answered (said once per connection)`);
          return;
        }
        this.replying++;
        transport.send(message).then(this.replied, (err: Error) => {
          this.replied();
          log?.debug(`${label}: answer not sent: ${err.message}`);
        });
      },
    };
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
      message: (value, chars) => receive(this.peer, value, false, chars),
      close: (reason) => this.ended(reason),
      dropped: (id, reason) => failAnswer(this.peer, id, reason),
    });
  }

  /**
   * Sends a request; its promise resolves with the answer's result or rejects with RpcClientError.
   * With `ends`, it resolves with what `ends.ok(result)` or `ends.failed(error)` returns instead
   * (as `.then(ends.ok, ends.failed)` would, without that promise): also when it fails before it
   * is sent (closed, cancelled).
   */
  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}, ends?: RequestEnds<T>): Promise<T> {
    if (this.closedReason !== null) return this.failed(new RpcClientError('ERR_RPC_CLOSED', `connection closed: ${this.closedReason}`), ends);
    const { signal } = options;
    if (signal?.aborted) return this.failed(new RpcClientError('ERR_RPC_CANCELLED', `${method} cancelled before it was sent`), ends);
    const id = this.nextId++;
    const request = new ClientRequest<T>(this.owner, id, method, options.timeoutMs ?? this.options.timeoutMs, signal, ends);
    this.pending.set(id, request);
    this.owner.deadlines.watch(request.deadline);
    signal?.addEventListener('abort', request, { once: true });
    const { transport } = this;
    const sent = transport.sendRequest
      ? transport.sendRequest(id, method, params, request)
      : transport.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }, request);
    const group = this.sending;
    if (group !== null && group.sent === sent) group.requests.push(request);
    else this.watchSend(sent, request);
    return request.promise;
  }

  /** A request that ends before it is sent: rejected with `err`, or what `ends` makes of it. */
  private failed<T>(err: RpcClientError, ends: RequestEnds<T> | undefined): Promise<T> {
    if (ends === undefined) return Promise.reject(err);
    try {
      return Promise.resolve(ends.failed(err));
    } catch (thrown) {
      return Promise.reject(thrown);
    }
  }

  /** Fails the requests sent with `sent` (ERR_RPC_SEND) if it rejects; forgets them once it settles. */
  private watchSend(sent: Promise<void>, first: Pending & { readonly id: JsonRpcId }): void {
    const group: SendGroup = { sent, requests: [first] };
    this.sending = group;
    sent.then(
      () => {
        if (this.sending === group) this.sending = null;
      },
      (err: Error) => {
        if (this.sending === group) this.sending = null;
        for (const request of group.requests) {
          if (this.pending.get(request.id) === request) request.reject(new RpcClientError('ERR_RPC_SEND', `${request.method} ${err instanceof NotAnsweredError ? 'was not answered' : 'did not get through'}: ${err.message}`));
        }
      },
    );
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
}
