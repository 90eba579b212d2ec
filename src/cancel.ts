// Cancellation for the call path without EventTarget (issue 16). A tool call can be cancelled by its
// HTTP request closing, by notifications/cancelled, by a REST client going away; almost none is. An
// AbortController per request and per call (plus the listener that links them) cost about 5% of the
// bridge's CPU at N=1, so the call path uses a `Cancellation`: a flag and a short list of listeners,
// with the same three members the bridge's code uses of an AbortSignal. Code that needs a real
// AbortSignal (fetch) links one to it, as it would to any signal.

/**
 * Called on abort: a function, or an object's `handleEvent()` (as EventTarget allows), so a
 * long-lived object can listen without a closure per request.
 */
export type AbortListener = (() => void) | { handleEvent(): void };

/** What the bridge's code uses of an AbortSignal; a real AbortSignal is one too. */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}

type Listener = AbortListener;

/**
 * A signal and its controller in one plain object. Listeners run once, in the order added, when
 * `abort()` is first called; adding one after that does nothing (as on an aborted AbortSignal).
 * `linked(parent)` makes one that is aborted with its parent too (`dispose()` unlinks it).
 */
export class Cancellation implements CancelSignal {
  aborted = false;
  // most signals get at most one listener: no array for them
  private first: Listener | null = null;
  private rest: Listener[] | null = null;
  private parent: CancelSignal | null = null;

  /** A Cancellation aborted when `parent` aborts (at once if it has). */
  static linked(parent: CancelSignal | undefined): Cancellation {
    const child = new Cancellation();
    if (!parent) return child;
    if (parent.aborted) child.aborted = true;
    else {
      // the child itself is the listener (handleEvent): no closure
      parent.addEventListener('abort', child, { once: true });
      child.parent = parent;
    }
    return child;
  }

  /** As a listener of its parent. */
  handleEvent(): void {
    this.abort();
  }

  addEventListener(_type: 'abort', listener: AbortListener): void {
    this.add(listener);
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    this.remove(listener);
  }

  /** Aborts once: runs every listener (one that throws does not keep the others from running). */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.dispose();
    const first = this.first;
    const rest = this.rest;
    this.first = null;
    this.rest = null;
    if (first) run(first);
    if (rest) for (const listener of rest) run(listener);
  }

  /** Stops following the parent (the call ended); the listeners stay. */
  dispose(): void {
    if (this.parent) {
      this.parent.removeEventListener('abort', this);
      this.parent = null;
    }
  }

  private add(listener: Listener): void {
    if (this.aborted || this.first === listener) return;
    if (this.first === null) this.first = listener;
    else if (this.rest === null) this.rest = [listener];
    else if (!this.rest.includes(listener)) this.rest.push(listener);
  }

  private remove(listener: Listener): void {
    if (this.first === listener) {
      this.first = this.rest?.shift() ?? null;
      if (this.rest?.length === 0) this.rest = null;
      return;
    }
    const i = this.rest?.indexOf(listener) ?? -1;
    if (i !== -1) this.rest!.splice(i, 1);
  }
}

function run(listener: Listener): void {
  try {
    if (typeof listener === 'function') listener();
    else listener.handleEvent();
  } catch (err) {
    // as EventTarget does: reported as uncaught, after the other listeners ran
    queueMicrotask(() => {
      throw err;
    });
  }
}
