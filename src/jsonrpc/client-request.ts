// Request tracking for the JSON-RPC client (client.ts): the error every request fails with, and one
// request in flight with its timer, its caller's abort listener and its delivery signal.
import { Cancellation, type AbortListener, type CancelSignal } from '../cancel.js';
import type { JsonRpcId } from './message.js';

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

/** A request waiting for its answer, as the client's pending map holds it. */
export interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(err: RpcClientError): void;
}

/** What a request in flight needs of its client. */
export interface RequestOwner {
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
export class ClientRequest<T> implements Pending, CancelSignal {
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
