// The fan-out of probe-computers: the same request to many links at once. Each link gets its own
// unguessable id, matched only on that link, and ends exactly as a single request would end; the
// whole fan-out holds one timer, at most one abort listener and one promise.
import { randomFillSync } from 'node:crypto';
import type { CancelSignal } from '../cancel.js';
import { REQUEST_HEAD, requestTail } from './request-frames.js';
import { sendCancel, track, untrack, type Link, type Outcome, type Pending } from './link.js';

export interface FanoutOptions {
  timeoutMs: number;
  signal?: CancelSignal;
  /** Tell each computer to stop working on it when we stop waiting. */
  cancelOnTimeout?: boolean;
}

/**
 * Told each outcome of a `requestEach` as it comes (index: its link's place in `links`). What it throws
 * is dropped (it would otherwise reach whoever settled the request: a frame handler, or the timer with
 * other requests still to end), so it must record what it needs before anything can throw. An object,
 * not a closure: the frame handlers call it 10,000 times in a big probe, and a call site that saw one
 * probe's closure is compiled for that one function and thrown away at the next probe.
 */
export interface FanoutObserver {
  settled(outcome: Outcome, index: number): void;
}

/** What the fan-out needs from the registry: its clock and its per-link limit. */
export interface FanoutHost {
  readonly now: () => number;
  readonly maxPendingPerLink: number;
  tooManyPending(link: Link): string;
}

/**
 * One request id: 22 base64url characters of random bytes, 132 bits (a UUID has 122), which need no
 * JSON escaping. A randomUUID is a tree of concatenated strings (~480 B on the heap, kept until its
 * computer answers, and every pending lookup walks it). Ids are cut from one base64url text of a pool
 * of random bytes that one randomFillSync refills every POOL_IDS ids (like randomUUID's own cache: a
 * randomFillSync per probe at N=1 was 5% of busy time): each id is a slice of that text (V8 keeps a
 * 22-character slice as a reference into it, no copy). A Buffer toString per id, a native call, cost
 * ~1,600 instructions (issue 16: 1% of an exec-lua call, and once per computer in every probe); a slice
 * ~50. Each character, so each random bit, is in one id only, and the pool is never exposed otherwise.
 * While an id is in flight it keeps its pool's text (11 KiB, 512 ids) alive; ids live only as long
 * as their requests.
 */
const ID_CHARS = 22;
/**
 * A fan-out over more computers than this writes each request at once instead of corking it to the
 * end of the turn: building 10,000 requests held the first back ~100 ms, while at N=100 C=10 corking
 * joins concurrent probes' frames to each computer (writing each at once cost ~13% more CPU per call).
 */
export const UNCORKED_FANOUT = 256;
const POOL_IDS = 512;
// 6 random bits per character: 16.5 bytes an id, 8,448 bytes a pool (a multiple of 3: no padding)
const pool = Buffer.allocUnsafeSlow((POOL_IDS * ID_CHARS * 6) / 8);
let poolText = '';
let poolAt = 0;

/** A fresh request id: the next 22 characters of the pool's text (refilled when used up; also every single request's: registry.ts). */
export function nextId(): string {
  if (poolAt === poolText.length) {
    randomFillSync(pool);
    poolText = pool.toString('base64url');
    poolAt = 0;
  }
  const id = poolText.slice(poolAt, poolAt + ID_CHARS);
  poolAt += ID_CHARS;
  return id;
}

/** Sends `method`/`params` to every link in `links`; the outcomes come back in the same order. */
export function requestAll(host: FanoutHost, links: readonly Link[], method: string, params: unknown, options: FanoutOptions): Promise<Outcome[]> {
  return start(host, links, method, params, options, null).promise as Promise<Outcome[]>;
}

/**
 * `requestAll`, with each outcome handed to `observer` as it comes instead of kept for an array: a
 * caller that builds its answer from them (probe-computers) has it ready when the last one comes, and
 * the outcomes die young instead of living until then. The promise settles after the last one.
 */
export function requestEach(host: FanoutHost, links: readonly Link[], method: string, params: unknown, options: FanoutOptions, observer: FanoutObserver): Promise<void> {
  // resolved with undefined: there is no array
  return start(host, links, method, params, options, observer).promise as Promise<undefined>;
}

function start(host: FanoutHost, links: readonly Link[], method: string, params: unknown, options: FanoutOptions, observer: FanoutObserver | null): Fanout {
  const fanout = new Fanout(links, host.now, options, observer);
  if (options.signal?.aborted) {
    for (let i = 0; i < links.length; i++) fanout.done(i, { status: 'cancelled', ms: 0 });
    return fanout;
  }
  sendAll(host, fanout, links, requestTail(method, params));
  fanout.arm();
  return fanout;
}

/**
 * The send loop alone: V8 compiles a 10,000-link loop while it runs (on-stack replacement), before
 * the code after it has ever run, and code compiled that way is thrown away when it reaches that code
 * (at the end of the first big probe and, reused, in the second); here nothing follows the loop.
 */
function sendAll(host: FanoutHost, fanout: Fanout, links: readonly Link[], tail: string): void {
  for (let i = 0; i < links.length; i++) {
    const link = links[i] as Link;
    if (link.closed) {
      fanout.done(i, { status: 'disconnected', reason: 'link closed', ms: 0 });
    } else if (link.pendingCount >= host.maxPendingPerLink) {
      fanout.done(i, { status: 'error', error: host.tooManyPending(link), ms: 0 });
    } else {
      const id = nextId();
      const slot = new FanoutSlot(fanout, i, link, id);
      track(link, slot);
      try {
        const socket = link.socket;
        // up to UNCORKED_FANOUT computers: corked with the turn's other frames to each (concurrent
        // probes reach the same computers together and leave in one write); more: each leaves at once
        // ASCII by construction: a base64url id in asciiJson's frame, so the socket does not scan it again
        if (socket.sendNow && links.length > UNCORKED_FANOUT) socket.sendNow(REQUEST_HEAD + id + tail, true);
        else socket.send(REQUEST_HEAD + id + tail, true);
      } catch (err) {
        slot.settle({ status: 'disconnected', reason: `send failed: ${(err as Error).message}`, ms: fanout.elapsed() });
      }
    }
  }
}

/** One fan-out: the outcomes so far (or its observer), its one timer and its one abort listener. */
class Fanout {
  /** undefined when an observer takes the outcomes. */
  readonly outcomes: Outcome[] | undefined;
  readonly promise: Promise<Outcome[] | undefined>;
  readonly startedAt: number;
  private left: number;
  private timer: NodeJS.Timeout | null = null;
  private resolve!: (outcomes: Outcome[] | undefined) => void;

  /**
   * `links`: the fan-out's links, in order. Its requests in flight are found through them (each link
   * holds its own), not kept in a list of the fan-out's: a request's slot is garbage as soon as its
   * answer came, instead of living, with its id, until the last one (over 10,000 computers they
   * outlived young-generation collections and were promoted).
   */
  constructor(
    private readonly links: readonly Link[],
    private readonly now: () => number,
    private readonly options: FanoutOptions,
    private readonly observer: FanoutObserver | null,
  ) {
    const count = links.length;
    this.startedAt = now();
    this.outcomes = observer === null ? new Array<Outcome>(count) : undefined;
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
    const observer = this.observer;
    if (observer === null) (this.outcomes as Outcome[])[index] = outcome;
    else {
      try {
        observer.settled(outcome, index);
      } catch {
        // see FanoutObserver
      }
    }
    if (--this.left === 0) this.finish();
  }

  /**
   * The last outcome is in. Its own method, run once per fan-out: the promise's resolve function is
   * a new closure every time, and a call to it compiled into the hot `done` (inlined into the frame
   * handlers) would be compiled for one fan-out's resolve and thrown away at the next.
   */
  private finish(): void {
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
    const links = this.links;
    for (let i = 0; i < links.length; i++) {
      const link = links[i] as Link;
      const slot = this.slotOn(link, i);
      if (slot === null) continue;
      if (cancel) sendCancel(link, slot.id);
      slot.settle({ status, ms });
    }
  }

  /** This fan-out's request in flight on `link` (its `index`th), or null when it has ended. */
  private slotOn(link: Link, index: number): FanoutSlot | null {
    const held = link.inFlight;
    if (held instanceof FanoutSlot) return held.fanout === this && held.index === index ? held : null;
    if (!(held instanceof Map)) return null;
    for (const pending of held.values()) {
      if (pending instanceof FanoutSlot && pending.fanout === this && pending.index === index) return pending;
    }
    return null;
  }
}

/** One link's request of a fan-out: what the link holds while it is in flight (no closure, no timer). */
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
    if (!untrack(this.link, this)) return;
    this.fanout.done(this.index, outcome);
  }
}
