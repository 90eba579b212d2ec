// Linked computers and the requests in flight on each link. Knows nothing about sockets beyond
// send/close, so every rule here is testable with plain values.
import type { CancelSignal } from '../cancel.js';
import { nextId, requestAll, requestEach, type FanoutHost, type FanoutObserver, type FanoutOptions } from './fanout.js';
import { REQUEST_HEAD, requestTail } from './request-frames.js';
import type { HelloFrame, InfoFrame, ResponseFrame } from './frames.js';
import { fitIdentity } from './identity-budget.js';
import { jobChanges } from './identity-text.js';
import type { Identity, Omitted } from './identity.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { Link, sendCancel, track, untrack, type LinkSocket, type Outcome, type Pending } from './link.js';
import { startTimeout, stopTimeout, type DeadlineList, type Timed } from './deadlines.js';

export { Link, dataName, describe, logName, logText, type LinkSocket, type Outcome } from './link.js';

export interface RequestOptions {
  timeoutMs: number;
  signal?: CancelSignal;
  /** Tell the computer to stop working on it when we stop waiting (exec-lua). */
  cancelOnTimeout?: boolean;
  /** Largest frame the computer can receive; a larger request fails before it is sent. */
  maxFrameBytes?: number;
}

export class FrameTooLargeError extends Error {
  readonly code = 'ERR_FRAME_TOO_LARGE';
}

export class LinkRegistry implements FanoutHost {
  private readonly links = new Map<number, Link>();
  /** `links` in ascending computerId order, rebuilt only after a link comes or goes. */
  private ordered: readonly Link[] | null = null;
  /** Most requests in flight on one link (CC_MAX_REQUESTS_PER_COMPUTER); more fail at once. */
  maxPendingPerLink = Infinity;
  /** Why no computer can link now (the link listener is not up: see port-holder.ts); null while it listens. */
  unreachable: string | null = null;
  /** Whether a computer id is pinned to its key (CC_LINK_PIN, set by the bridge); null with pinning off. */
  pinned: ((computerId: number) => boolean) | null = null;
  /**
   * The pins' labels (CC_LINK_PIN, set by the bridge; null with pinning off): `seen` is told the label
   * each link says (hello, info frame), `holders` gives the pinned ids whose computer last said a label.
   */
  pinLabels: { seen(computerId: number, label: string | null): void; holders(label: string): Iterable<number> } | null = null;
  /**
   * Most bytes of JSON a link's identity (hello, info frames) is kept in (CC_MAX_IDENTITY_BYTES, at least
   * MIN_IDENTITY_BYTES): a richer one, or one listing more than MAX_PERIPHERALS or MAX_JOBS, is cut to
   * it (fitIdentity) and the link kept. Infinity (plain registries in tests): kept as said.
   */
  maxIdentityBytes = Infinity;
  /** Told when a hello or info frame's identity was cut to maxIdentityBytes (the link listener warns, once per link). */
  identityCut: ((link: Link, cut: Omitted) => void) | null = null;

  constructor(readonly now: () => number = Date.now) {}

  get size(): number {
    return this.links.size;
  }

  /** Registers a computer after a valid hello; returns the link it replaced, if any. */
  register(socket: LinkSocket, hello: HelloFrame, remoteAddress: string): { link: Link; replaced: Link | null } {
    const link = new Link(socket, hello.computerId, hello.computerLabel, hello.version, remoteAddress, this.now());
    if (hello.maxFrame !== undefined) link.maxFrame = hello.maxFrame;
    if (hello.identityCut === undefined) link.identity = this.kept(link, hello.identity);
    else {
      // fitted when it came (fitHello): told now that it has a link
      link.identity = hello.identity;
      this.identityCut?.(link, hello.identityCut);
    }
    const replaced = this.links.get(hello.computerId) ?? null;
    this.links.set(hello.computerId, link);
    this.pinLabels?.seen(link.computerId, link.label);
    this.ordered = null;
    if (replaced) {
      this.endLink(replaced, `replaced by a new link from ${remoteAddress}`);
      replaced.socket.close(4000, 'replaced by a newer link for this computer');
    }
    return { link, replaced };
  }

  /** The link's socket is gone: forget it and end its requests now rather than at their timeouts. */
  unregister(link: Link, reason: string): boolean {
    const current = this.links.get(link.computerId) === link;
    if (current) {
      this.links.delete(link.computerId);
      this.ordered = null;
    }
    this.endLink(link, reason);
    return current;
  }

  get(computerId: number): Link | undefined {
    return this.links.get(computerId);
  }

  /** A "no computers" sentence ("No computers connected."), with why none can link while that is so. */
  none(sentence: string): string {
    return this.unreachable === null ? sentence : `${sentence.replace(/\.$/, '')}: ${this.unreachable}.`;
  }

  /**
   * The pinned ids that are not linked now and whose computer last said `label`: a label lookup counts
   * them as holding it (computer-target.ts). Ascending.
   */
  awayWithLabel(label: string): number[] {
    if (this.pinLabels === null) return [];
    const away: number[] = [];
    for (const id of this.pinLabels.holders(label)) if (!this.links.has(id)) away.push(id);
    return away.sort((a, b) => a - b);
  }

  /** Links in ascending computerId order (kept, not sorted per call; callers must not change it). */
  list(): readonly Link[] {
    this.ordered ??= [...this.links.values()].sort((a, b) => a.computerId - b.computerId);
    return this.ordered;
  }

  /** Requests in flight on every link; read by /metrics, not on the hot path. */
  pendingCount(): number {
    let n = 0;
    for (const link of this.links.values()) n += link.pendingCount;
    return n;
  }

  /** An info frame: the computer's label and peripherals now. Returns what changed, for the log. */
  updateInfo(link: Link, info: InfoFrame): string[] {
    // a replaced link's socket stays readable until its closing handshake ends: what it says then is
    // no longer this computer id's (its label would become the pinned id's, for label lookups)
    if (link.closed) return [];
    const changes: string[] = [];
    if (info.computerLabel !== link.label) {
      changes.push(`label ${quoteValue(link.label)} -> ${quoteValue(info.computerLabel)}`);
      link.label = info.computerLabel;
      this.pinLabels?.seen(link.computerId, link.label);
    }
    const said: Identity = { ...link.identity, peripherals: info.peripherals, jobs: info.jobs ?? link.identity.jobs };
    // the marker only on the few links that have one: no slot for it on every other link's identity
    if (info.omitted !== undefined) said.omitted = info.omitted;
    else delete said.omitted;
    // what changed in what is kept: a peripheral or job cut to the identity budget is not logged as there
    const identity = this.kept(link, said);
    // names are quoted like labels: a computer chooses them, and a raw line break would forge a log line
    const before = new Set((link.identity.peripherals ?? []).map((p) => p.name));
    const after = new Set((identity.peripherals ?? []).map((p) => p.name));
    for (const name of after) if (!before.has(name)) changes.push(`peripheral ${quoteValue(name)} attached`);
    for (const name of before) if (!after.has(name)) changes.push(`peripheral ${quoteValue(name)} detached`);
    if (info.jobs !== undefined) changes.push(...jobChanges(link.identity.jobs, identity.jobs ?? []));
    link.identity = identity;
    return changes;
  }

  /**
   * Cuts a hello's identity to what a link keeps as soon as it is parsed (the link listener), so a hello
   * that waits (for its pin's write) holds no more than a link would; register tells identityCut then.
   */
  fitHello(hello: HelloFrame): void {
    if (this.maxIdentityBytes === Infinity) return;
    const fitted = fitIdentity(hello.identity, this.maxIdentityBytes);
    if (fitted.cut === null) return;
    hello.identity = fitted.identity;
    hello.identityCut = fitted.cut;
  }

  /** `identity` as `link` keeps it: cut to maxIdentityBytes (and the most entries kept), and identityCut told when it was. */
  private kept(link: Link, identity: Identity): Identity {
    if (this.maxIdentityBytes === Infinity) return identity;
    const fitted = fitIdentity(identity, this.maxIdentityBytes);
    if (fitted.cut !== null) this.identityCut?.(link, fitted.cut);
    return fitted.identity;
  }

  touch(link: Link): void {
    link.lastSeenAt = this.now();
  }

  request(link: Link, method: string, params: unknown, options: RequestOptions): Promise<Outcome> {
    const refused = this.refusal(link, options);
    if (refused) return Promise.resolve(refused);
    let request: SingleRequest;
    try {
      request = this.start(link, method, params, options, null);
    } catch (err) {
      return Promise.reject(err);
    }
    return request.promise as Promise<Outcome>;
  }

  /**
   * `request`, with its outcome handed to `sink` instead of a promise (exec-lua: the tool's own
   * promise is resolved from there, with no promise and no await per call in between). The outcome
   * may come at once (a closed link, an aborted signal, too many in flight). Throws FrameTooLargeError.
   */
  requestTo(link: Link, method: string, params: unknown, options: RequestOptions, sink: OutcomeSink): void {
    const refused = this.refusal(link, options);
    if (refused) sink.settled(refused);
    else this.start(link, method, params, options, sink);
  }

  /** How a request ends before it is sent, or null. */
  private refusal(link: Link, options: RequestOptions): Outcome | null {
    if (link.closed) return { status: 'disconnected', reason: 'link closed', ms: 0 };
    if (options.signal?.aborted) return { status: 'cancelled', ms: 0 };
    if (link.pendingCount >= this.maxPendingPerLink) return { status: 'error', error: this.tooManyPending(link), ms: 0 };
    return null;
  }

  private start(link: Link, method: string, params: unknown, options: RequestOptions, sink: OutcomeSink | null): SingleRequest {
    const startedAt = this.now();
    const id = nextId();
    // ASCII (asciiJson): its length is its byte count, and the socket need not scan it again; the id is
    // base64url, which JSON writes as it is, so it is spliced in as the probe's are (no test of it)
    const frame = REQUEST_HEAD + id + requestTail(method, params);
    if (options.maxFrameBytes !== undefined && frame.length > options.maxFrameBytes) {
      throw new FrameTooLargeError(`request is ${frame.length} bytes encoded; the computer accepts at most ${options.maxFrameBytes}`);
    }
    const request = new SingleRequest(link, id, startedAt, this.now, options, sink);
    track(link, request);
    options.signal?.addEventListener('abort', request, { once: true });
    try {
      link.socket.send(frame, true);
    } catch (err) {
      request.settle({ status: 'disconnected', reason: `send failed: ${(err as Error).message}`, ms: request.elapsed() });
    }
    return request;
  }

  /**
   * The same request to every link in `links` (probe-computers), outcomes in the same order: see
   * fanout.ts (each link its own id, one timer, one abort listener and one promise for all).
   */
  requestAll(links: readonly Link[], method: string, params: unknown, options: FanoutOptions): Promise<Outcome[]> {
    return requestAll(this, links, method, params, options);
  }

  /** `requestAll`, each outcome handed to `observer` as it comes (see fanout.ts); settles after the last. */
  requestEach(links: readonly Link[], method: string, params: unknown, options: FanoutOptions, observer: FanoutObserver): Promise<void> {
    return requestEach(this, links, method, params, options, observer);
  }

  /** A response is matched only against requests sent on the same link it arrived on. */
  resolve(link: Link, frame: ResponseFrame): boolean {
    const pending = link.pendingRequest(frame.id);
    if (!pending) return false;
    const ms = this.now() - pending.startedAt;
    if (frame.ok) {
      pending.settle({ status: 'ok', result: frame.result ?? null, ms });
    } else {
      const outcome: Outcome = { status: 'error', error: frame.error ?? 'unknown error', ms };
      if (frame.result !== undefined) outcome.result = frame.result;
      pending.settle(outcome);
    }
    return true;
  }

  tooManyPending(link: Link): string {
    return `computer ${link.computerId} already has ${this.maxPendingPerLink} requests in flight (CC_MAX_REQUESTS_PER_COMPUTER); try again shortly`;
  }

  private endLink(link: Link, reason: string): void {
    link.closed = true;
    for (const pending of link.pendingRequests()) {
      pending.settle({ status: 'disconnected', reason, ms: this.now() - pending.startedAt });
    }
  }
}

/** Where a request's outcome goes when the caller gave no promise to resolve (`requestTo`). */
export interface OutcomeSink {
  settled(outcome: Outcome): void;
}

/**
 * One `request`: what the link holds while it is in flight, its timer and (handleEvent) its abort listener,
 * in one object instead of three closures. Its outcome resolves its promise, or goes to its sink.
 */
class SingleRequest implements Pending, Timed {
  readonly promise: Promise<Outcome> | null = null;
  private resolve: ((outcome: Outcome) => void) | null = null;
  // its timeout, in the list of requests with the same one (deadlines.ts): no node timer of its own
  deadline = 0;
  prevTimed: Timed | null = null;
  nextTimed: Timed | null = null;
  timedList: DeadlineList | null = null;

  constructor(
    private readonly link: Link,
    readonly id: string,
    readonly startedAt: number,
    private readonly now: () => number,
    private readonly options: RequestOptions,
    private readonly sink: OutcomeSink | null,
  ) {
    if (sink === null) this.promise = new Promise((resolve) => (this.resolve = resolve));
    startTimeout(this, options.timeoutMs);
  }

  elapsed(): number {
    return this.now() - this.startedAt;
  }

  settle(outcome: Outcome): void {
    if (!untrack(this.link, this)) return;
    stopTimeout(this);
    this.options.signal?.removeEventListener('abort', this);
    if (this.sink !== null) this.sink.settled(outcome);
    else (this.resolve as (outcome: Outcome) => void)(outcome);
  }

  /** The caller aborted: the computer is told to stop. */
  handleEvent(): void {
    sendCancel(this.link, this.id);
    this.settle({ status: 'cancelled', ms: this.elapsed() });
  }

  timedOut(): void {
    if (this.options.cancelOnTimeout) sendCancel(this.link, this.id);
    this.settle({ status: 'timeout', ms: this.elapsed() });
  }
}
