// Timeouts of single requests (issue 16). Requests with the same timeout end in the order they were
// made, so each timeout length keeps its requests in a list, oldest first, under one node timer set
// for the oldest; a request that ends is unlinked, and the timer, when it fires, ends every request
// past its deadline and is set again for the oldest one left. A node timer per request (setTimeout and
// clearTimeout, a Timeout object with its async ids) cost ~1,300 instructions and ~200 B per exec-lua
// call; with calls in flight all the time, this timer fires about once per timeout length instead.

/** A request with a deadline, as a list holds it. */
export interface Timed {
  /** performance.now() at which it times out. */
  deadline: number;
  prevTimed: Timed | null;
  nextTimed: Timed | null;
  timedList: DeadlineList | null;
  /** Called once, when its deadline passed and it is still in its list (already unlinked). */
  timedOut(): void;
}

const TIMEOUT_MAX = 2 ** 31 - 1;

/** Lists by timeout length; a list is dropped when it empties, so there are at most as many as requests in flight. */
const lists = new Map<number, DeadlineList>();

/** Starts `item`'s timeout of `ms` milliseconds from now. */
export function startTimeout(item: Timed, timeoutMs: number): void {
  // as setTimeout takes its delay: whole milliseconds, and 1 for anything outside 1..2^31-1
  const ms = timeoutMs >= 1 && timeoutMs <= TIMEOUT_MAX ? Math.trunc(timeoutMs) : 1;
  let list = lists.get(ms);
  if (list === undefined) {
    list = new DeadlineList(ms);
    lists.set(ms, list);
  }
  list.push(item, performance.now() + ms);
}

/** Stops `item`'s timeout (nothing if it has none running). */
export function stopTimeout(item: Timed): void {
  item.timedList?.remove(item);
}

/** How many lists exist (tests: an emptied list is dropped with its timer). */
export function deadlineLists(): number {
  return lists.size;
}

export class DeadlineList {
  private head: Timed | null = null;
  private tail: Timed | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly ms: number) {}

  push(item: Timed, deadline: number): void {
    item.deadline = deadline;
    item.timedList = this;
    item.nextTimed = null;
    item.prevTimed = this.tail;
    if (this.tail) this.tail.nextTimed = item;
    else this.head = item;
    this.tail = item;
    this.timer ??= setTimeout(fire, this.ms, this);
  }

  remove(item: Timed): void {
    this.unlink(item);
    if (this.head === null) this.drop();
  }

  /** The timer fired: every request past its deadline times out, then the timer waits for the oldest left. */
  fire(): void {
    // `timer` stays set (to the one that fired) until the end: a request made by a timed-out one's
    // caller joins the list without arming a second timer
    const now = performance.now();
    // node may fire a little before performance.now() reaches the deadline (its clock is the loop's,
    // read at the start of the turn): under a millisecond early counts as due, as node's own timers do
    while (this.head !== null && this.head.deadline - now < 1) {
      const item = this.head;
      this.unlink(item);
      item.timedOut();
    }
    if (this.head === null) this.drop();
    else this.timer = setTimeout(fire, Math.max(1, Math.ceil(this.head.deadline - performance.now())), this);
  }

  private unlink(item: Timed): void {
    const { prevTimed: prev, nextTimed: next } = item;
    if (prev) prev.nextTimed = next;
    else this.head = next;
    if (next) next.prevTimed = prev;
    else this.tail = prev;
    item.prevTimed = item.nextTimed = null;
    item.timedList = null;
  }

  private drop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (lists.get(this.ms) === this) lists.delete(this.ms);
  }
}

function fire(list: DeadlineList): void {
  list.fire();
}
