// Request tracking for the JSON-RPC client (client.ts): the error every request fails with, one
// request in flight with its deadline, its caller's abort listener and its delivery signal, and the
// one timer per client that times requests out.
import { performance } from 'node:perf_hooks';
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
  /** When it times out, on performance.now()'s clock. */
  readonly deadline: number;
  resolve(result: unknown): void;
  reject(err: RpcClientError): void;
  timedOut(): void;
}

/** What a request in flight needs of its client. */
export interface RequestOwner {
  pending: Map<JsonRpcId, Pending>;
  deadlines: Deadlines;
  cancelRemote(id: JsonRpcId, reason: string): Promise<void>;
  noticeBeforeClose: boolean;
}

/**
 * How a caller turns the end of its request into the value the request's promise resolves with,
 * given to JsonRpcClient.request instead of a `.then(ok, failed)` on its promise (one promise and
 * one job per request fewer). Called once, synchronously, when the request ends; a throw rejects
 * the promise with what was thrown.
 */
export interface RequestEnds<R> {
  ok(result: unknown): R;
  failed(err: RpcClientError): R;
}

/**
 * One request in flight: its pending entry, its deadline (the client's Deadlines times it out) and its
 * abort listener (handleEvent) in one object, instead of six closures and a timer per request. It is also the signal its
 * transport gets for the delivery (aborted when the request is given up: HTTP aborts the POST); the
 * Cancellation behind it is made only if the transport listens (stdio does not).
 */
export class ClientRequest<T> implements Pending, CancelSignal {
  readonly promise: Promise<T>;
  private delivery: Cancellation | null = null;
  private given = false;
  private ok!: (value: T) => void;
  private fail!: (err: unknown) => void;
  readonly deadline: number;

  constructor(
    private readonly owner: RequestOwner,
    readonly id: JsonRpcId,
    readonly method: string,
    private readonly timeoutMs: number,
    private readonly signal: CancelSignal | undefined,
    private readonly ends?: RequestEnds<T>,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.ok = resolve;
      this.fail = reject;
    });
    this.deadline = performance.now() + timeoutMs;
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
    const ends = this.ends;
    if (ends === undefined) {
      this.ok(result as T);
      return;
    }
    let value: T;
    try {
      value = ends.ok(result);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.ok(value);
  }

  reject(err: RpcClientError): void {
    this.finish();
    this.failWith(err);
  }

  /** Rejects with `err`, or resolves with what the caller's ends make of it. */
  private failWith(err: RpcClientError): void {
    const ends = this.ends;
    if (ends === undefined) {
      this.fail(err);
      return;
    }
    let value: T;
    try {
      value = ends.failed(err);
    } catch (thrown) {
      this.fail(thrown);
      return;
    }
    this.ok(value);
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
    this.owner.deadlines.left();
    this.signal?.removeEventListener('abort', this);
  }

  private giveUp(err: RpcClientError, reason: string): void {
    if (!this.owner.pending.has(this.id)) return;
    this.finish();
    this.failWith(err);
    const notice = this.owner.cancelRemote(this.id, reason);
    if (this.owner.noticeBeforeClose) void notice.finally(() => this.abortDelivery());
    else this.abortDelivery();
  }
}

/**
 * The timeouts of one client's requests on one timer, armed for the earliest deadline (a setTimeout
 * and clearTimeout per request were about 1.5% of the bridge's busy time on an upstream call). When
 * it fires, every request past its deadline times out and it is armed for the next one. While no
 * request is pending it stays armed but unref'd, so it never keeps the process alive on its own and
 * the next request needs no new timer (under load the pending map empties between most calls).
 */
export class Deadlines {
  private timer: NodeJS.Timeout | null = null;
  /** The deadline the timer is armed for; Infinity when it is not. */
  private at = Infinity;
  /** Whether the timer keeps the process alive (only while a request is pending). */
  private held = false;

  constructor(private readonly pending: Map<JsonRpcId, Pending>) {}

  /** A request due at `deadline` joined the pending map. */
  watch(deadline: number): void {
    if (deadline < this.at) {
      if (this.timer) clearTimeout(this.timer);
      this.arm(deadline);
    } else if (!this.held) {
      (this.timer as NodeJS.Timeout).ref();
      this.held = true;
    }
  }

  /** A request left the pending map. */
  left(): void {
    if (this.pending.size > 0 || !this.held) return;
    (this.timer as NodeJS.Timeout).unref();
    this.held = false;
  }

  /** The timer fired: times out what is due, then waits for the next deadline. */
  sweep(): void {
    this.timer = null;
    this.at = Infinity;
    this.held = false;
    const now = performance.now();
    let next = Infinity;
    // deleting the entry being visited is safe in a Map iteration
    for (const request of this.pending.values()) {
      if (request.deadline <= now) request.timedOut();
      else if (request.deadline < next) next = request.deadline;
    }
    if (next !== Infinity && this.pending.size > 0) this.arm(next);
  }

  private arm(deadline: number): void {
    this.at = deadline;
    this.held = true;
    this.timer = setTimeout(sweep, Math.max(1, Math.ceil(deadline - performance.now())), this);
  }
}

function sweep(deadlines: Deadlines): void {
  deadlines.sweep();
}
