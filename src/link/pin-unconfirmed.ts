// CC_LINK_PIN=on: the pins not confirmed yet (CC_LINK_PIN_CONFIRM_MS), in pinning order, and how long
// the links of each that ended were up. A pin is confirmed once its links have been up `confirmMs` in
// all; until then a full table evicts it first (KeyPins). The pins file keeps which pins are
// unconfirmed (`# unconfirmed <id>` lines, oldest first); the time up starts again after a restart.

export class UnconfirmedPins {
  /** id -> how long (ms) its links that ended were up; the oldest pin first. */
  private readonly up = new Map<number, number>();

  constructor(readonly confirmMs: number) {}

  get size(): number {
    return this.up.size;
  }

  has(computerId: number): boolean {
    return this.up.has(computerId);
  }

  /** A pin not confirmed yet, its links up for no time so far: the newest. */
  add(computerId: number): void {
    this.up.set(computerId, 0);
  }

  /** Drops the id (confirmed, evicted or reset); whether it was here. */
  delete(computerId: number): boolean {
    return this.up.delete(computerId);
  }

  clear(): void {
    this.up.clear();
  }

  /** The ids, oldest first. */
  ids(): number[] {
    return [...this.up.keys()];
  }

  /** [id, ms its ended links were up], oldest first; an entry may be deleted during the walk. */
  entries(): IterableIterator<[number, number]> {
    return this.up.entries();
  }

  /**
   * One of the id's links that was up `ms` has ended: added to its time, keeping its place. True when
   * the times now add up to `confirmMs`: the id is dropped here then (confirmed).
   */
  addUp(computerId: number, ms: number): boolean {
    const total = (this.up.get(computerId) ?? 0) + ms;
    if (total >= this.confirmMs) return this.up.delete(computerId);
    this.up.set(computerId, total);
    return false;
  }
}
