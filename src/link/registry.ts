// Linked computers and the requests in flight on each link. Knows nothing about sockets beyond
// send/close, so every rule here is testable with plain values.
import { randomUUID } from 'node:crypto';
import type { CancelSignal } from '../cancel.js';
import { REQUEST_HEAD, encodeCancel, encodeRequest, requestTail, type HelloFrame, type InfoFrame, type ResponseFrame } from './frames.js';
import { UNKNOWN_IDENTITY, jobChanges, type Identity } from './identity.js';

/** How a computer is named in every line we print: `12 (Label: base-turtle)`. */
export function describe(computerId: number, label: string | null): string {
  return `${computerId} (Label: ${label ?? 'null'})`;
}

export interface LinkSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

export interface ComputerInfo {
  computerId: number;
  label: string | null;
  version: string | null;
  connectedAt: number;
  lastSeenAt: number;
  remoteAddress: string;
}

/** How one request to one computer ended. */
export type Outcome =
  | { status: 'ok'; result: unknown; ms: number }
  | { status: 'error'; error: string; result?: unknown; ms: number }
  | { status: 'timeout'; ms: number }
  | { status: 'disconnected'; reason: string; ms: number }
  | { status: 'cancelled'; ms: number };

interface Pending {
  startedAt: number;
  settle(outcome: Outcome): void;
}

/**
 * The pending map of every link with no request in flight: an empty Map costs ~170 B and most links
 * sit idle. Never written: `track` gives a link its own map first, `untrack` takes it back.
 */
const NONE_PENDING: Map<string, Pending> = new Map();

export class Link {
  /** Requests in flight on this link, by id. */
  pending: Map<string, Pending> = NONE_PENDING;
  lastSeenAt: number;
  closed = false;
  /** Largest frame the computer takes (hello.maxFrame), when it said. */
  maxFrame: number | null = null;
  /** What the computer said it is (hello), its peripherals kept current by info frames. */
  identity: Identity = UNKNOWN_IDENTITY;

  constructor(
    readonly socket: LinkSocket,
    readonly computerId: number,
    /** Changed by an info frame (the player relabelled the computer). */
    public label: string | null,
    readonly version: string | null,
    readonly remoteAddress: string,
    readonly connectedAt: number,
  ) {
    this.lastSeenAt = connectedAt;
  }

  info(): ComputerInfo {
    const { computerId, label, version, connectedAt, lastSeenAt, remoteAddress } = this;
    return { computerId, label, version, connectedAt, lastSeenAt, remoteAddress };
  }
}

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

export class LinkRegistry {
  private readonly links = new Map<number, Link>();
  /** `links` in ascending computerId order, rebuilt only after a link comes or goes. */
  private ordered: readonly Link[] | null = null;
  /** Most requests in flight on one link (CC_MAX_REQUESTS_PER_COMPUTER); more fail at once. */
  maxPendingPerLink = Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.links.size;
  }

  /** Registers a computer after a valid hello; returns the link it replaced, if any. */
  register(socket: LinkSocket, hello: HelloFrame, remoteAddress: string): { link: Link; replaced: Link | null } {
    const link = new Link(socket, hello.computerId, hello.computerLabel, hello.version, remoteAddress, this.now());
    if (hello.maxFrame !== undefined) link.maxFrame = hello.maxFrame;
    link.identity = hello.identity;
    const replaced = this.links.get(hello.computerId) ?? null;
    this.links.set(hello.computerId, link);
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

  /** Links in ascending computerId order (kept, not sorted per call; callers must not change it). */
  list(): readonly Link[] {
    this.ordered ??= [...this.links.values()].sort((a, b) => a.computerId - b.computerId);
    return this.ordered;
  }

  /** Requests in flight on every link; read by /metrics, not on the hot path. */
  pendingCount(): number {
    let n = 0;
    for (const link of this.links.values()) n += link.pending.size;
    return n;
  }

  /** An info frame: the computer's label and peripherals now. Returns what changed, for the log. */
  updateInfo(link: Link, info: InfoFrame): string[] {
    const changes: string[] = [];
    if (info.computerLabel !== link.label) {
      changes.push(`label ${JSON.stringify(link.label)} -> ${JSON.stringify(info.computerLabel)}`);
      link.label = info.computerLabel;
    }
    // names are quoted like labels: a computer chooses them, and a raw line break would forge a log line
    const before = new Set((link.identity.peripherals ?? []).map((p) => p.name));
    const after = new Set(info.peripherals.map((p) => p.name));
    for (const name of after) if (!before.has(name)) changes.push(`peripheral ${JSON.stringify(name)} attached`);
    for (const name of before) if (!after.has(name)) changes.push(`peripheral ${JSON.stringify(name)} detached`);
    if (info.jobs !== undefined) changes.push(...jobChanges(link.identity.jobs, info.jobs));
    link.identity = { ...link.identity, peripherals: info.peripherals, jobs: info.jobs ?? link.identity.jobs };
    return changes;
  }

  touch(link: Link): void {
    link.lastSeenAt = this.now();
  }

  request(link: Link, method: string, params: unknown, options: RequestOptions): Promise<Outcome> {
    const startedAt = this.now();
    if (link.closed) return Promise.resolve({ status: 'disconnected', reason: 'link closed', ms: 0 });
    if (options.signal?.aborted) return Promise.resolve({ status: 'cancelled', ms: 0 });
    if (link.pending.size >= this.maxPendingPerLink) {
      return Promise.resolve({ status: 'error', error: this.tooManyPending(link), ms: 0 });
    }
    const id = randomUUID();
    const frame = encodeRequest(id, method, params);
    if (options.maxFrameBytes !== undefined && Buffer.byteLength(frame) > options.maxFrameBytes) {
      return Promise.reject(
        new FrameTooLargeError(`request is ${Buffer.byteLength(frame)} bytes encoded; the computer accepts at most ${options.maxFrameBytes}`),
      );
    }
    const request = new SingleRequest(this, link, id, startedAt, this.now, options);
    track(link, id, request);
    options.signal?.addEventListener('abort', request, { once: true });
    try {
      link.socket.send(frame);
    } catch (err) {
      request.settle({ status: 'disconnected', reason: `send failed: ${(err as Error).message}`, ms: request.elapsed() });
    }
    return request.promise;
  }

  /**
   * The same request to every link in `links` (probe-computers), outcomes in the same order. Each link
   * still gets its own unguessable id, matched only on that link, and ends exactly as `request` would
   * end it; but the whole fan-out holds one timer, at most one abort listener and one promise,
   * instead of one of each per link.
   */
  requestAll(links: readonly Link[], method: string, params: unknown, options: Omit<RequestOptions, 'maxFrameBytes'>): Promise<Outcome[]> {
    const fanout = new Fanout(this, links.length, this.now, options);
    const tail = requestTail(method, params);
    if (options.signal?.aborted) {
      for (let i = 0; i < links.length; i++) fanout.done(i, { status: 'cancelled', ms: 0 });
      return fanout.promise;
    }
    for (let i = 0; i < links.length; i++) {
      const link = links[i] as Link;
      if (link.closed) {
        fanout.done(i, { status: 'disconnected', reason: 'link closed', ms: 0 });
      } else if (link.pending.size >= this.maxPendingPerLink) {
        fanout.done(i, { status: 'error', error: this.tooManyPending(link), ms: 0 });
      } else {
        const id = randomUUID();
        const slot = new FanoutSlot(fanout, i, link, id);
        fanout.slots.push(slot);
        track(link, id, slot);
        try {
          link.socket.send(REQUEST_HEAD + id + tail);
        } catch (err) {
          slot.settle({ status: 'disconnected', reason: `send failed: ${(err as Error).message}`, ms: fanout.elapsed() });
        }
      }
    }
    fanout.arm();
    return fanout.promise;
  }

  /** A response is matched only against requests sent on the same link it arrived on. */
  resolve(link: Link, frame: ResponseFrame): boolean {
    const pending = link.pending.get(frame.id);
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

  private tooManyPending(link: Link): string {
    return `computer ${link.computerId} already has ${this.maxPendingPerLink} requests in flight (CC_MAX_REQUESTS_PER_COMPUTER); try again shortly`;
  }

  /** Tells the computer to stop working on request `id` (never throws). */
  sendCancel(link: Link, id: string): void {
    if (link.closed) return;
    try {
      link.socket.send(encodeCancel(id));
    } catch {
      // the link is going away; its close handler ends everything else
    }
  }

  private endLink(link: Link, reason: string): void {
    link.closed = true;
    for (const pending of [...link.pending.values()]) {
      pending.settle({ status: 'disconnected', reason, ms: this.now() - pending.startedAt });
    }
  }
}

function track(link: Link, id: string, pending: Pending): void {
  if (link.pending === NONE_PENDING) link.pending = new Map();
  link.pending.set(id, pending);
}

/**
 * Forgets request `id` of `link`; false when it was not in flight. A link whose last request ended
 * goes back to the shared empty map: an emptied Map keeps its table (~180 B), and most links are
 * idle most of the time.
 */
function untrack(link: Link, id: string): boolean {
  const pending = link.pending;
  if (!pending.delete(id)) return false;
  if (pending.size === 0) link.pending = NONE_PENDING;
  return true;
}

/** One `requestAll`: the outcomes so far, its one timer and its one abort listener. */
class Fanout {
  readonly outcomes: Outcome[];
  readonly slots: FanoutSlot[] = [];
  readonly promise: Promise<Outcome[]>;
  readonly startedAt: number;
  private left: number;
  private timer: NodeJS.Timeout | null = null;
  private resolve!: (outcomes: Outcome[]) => void;

  constructor(
    private readonly registry: LinkRegistry,
    count: number,
    private readonly now: () => number,
    private readonly options: Omit<RequestOptions, 'maxFrameBytes'>,
  ) {
    this.startedAt = now();
    this.outcomes = new Array<Outcome>(count);
    this.left = count;
    this.promise = new Promise((resolve) => (this.resolve = resolve));
    if (count === 0) this.resolve(this.outcomes);
  }

  elapsed(): number {
    return this.now() - this.startedAt;
  }

  /** After every request went out: start the one timer and listen for the abort, unless all ended. */
  arm(): void {
    if (this.left === 0) return;
    this.timer = setTimeout(() => this.endPending('timeout', this.options.cancelOnTimeout === true), this.options.timeoutMs);
    this.options.signal?.addEventListener('abort', this, { once: true });
  }

  done(index: number, outcome: Outcome): void {
    this.outcomes[index] = outcome;
    if (--this.left > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this);
    this.resolve(this.outcomes);
  }

  /** The caller aborted (this object is its abort listener: no closure per probe). */
  handleEvent(): void {
    this.endPending('cancelled', true);
  }

  /** The timer fired or the caller aborted: every request still in flight ends so. */
  private endPending(status: 'timeout' | 'cancelled', cancel: boolean): void {
    const ms = this.elapsed();
    for (const slot of this.slots) {
      if (slot.link.pending.get(slot.id) !== slot) continue;
      if (cancel) this.registry.sendCancel(slot.link, slot.id);
      slot.settle({ status, ms });
    }
  }
}

/** One link's request of a fan-out: what the link's pending map holds (no closure, no timer). */
class FanoutSlot implements Pending {
  constructor(
    readonly fanout: Fanout,
    readonly index: number,
    readonly link: Link,
    readonly id: string,
  ) {}

  get startedAt(): number {
    return this.fanout.startedAt;
  }

  settle(outcome: Outcome): void {
    if (!untrack(this.link, this.id)) return;
    this.fanout.done(this.index, outcome);
  }
}

/**
 * One `request`: what the link's pending map holds, its timer and (handleEvent) its abort listener,
 * in one object instead of three closures.
 */
class SingleRequest implements Pending {
  readonly promise: Promise<Outcome>;
  private resolve!: (outcome: Outcome) => void;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly registry: LinkRegistry,
    private readonly link: Link,
    private readonly id: string,
    readonly startedAt: number,
    private readonly now: () => number,
    private readonly options: RequestOptions,
  ) {
    this.promise = new Promise((resolve) => (this.resolve = resolve));
    this.timer = setTimeout(requestTimedOut, options.timeoutMs, this);
  }

  elapsed(): number {
    return this.now() - this.startedAt;
  }

  settle(outcome: Outcome): void {
    if (!untrack(this.link, this.id)) return;
    clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this);
    this.resolve(outcome);
  }

  /** The caller aborted: the computer is told to stop. */
  handleEvent(): void {
    this.registry.sendCancel(this.link, this.id);
    this.settle({ status: 'cancelled', ms: this.elapsed() });
  }

  timedOut(): void {
    if (this.options.cancelOnTimeout) this.registry.sendCancel(this.link, this.id);
    this.settle({ status: 'timeout', ms: this.elapsed() });
  }
}

function requestTimedOut(request: SingleRequest): void {
  request.timedOut();
}
