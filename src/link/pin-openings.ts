// CC_LINK_PIN=strict: the computer ids the operator let in (cc-mcp pin-reset), each open to its next
// keyed hello until a time (CC_LINK_ENROLL_MS). KeyPins keeps one, and counts the openings with the
// pins toward CC_LINK_MAX_PINS; the pins file keeps them across restarts (`# open <id> until <time>`).

export class EnrollOpenings {
  /** id -> until when (ms) it is open. */
  private readonly until = new Map<number, number>();

  constructor(private readonly now: () => number) {}

  /** Openings held, ended ones not yet dropped included. */
  get size(): number {
    return this.until.size;
  }

  /** Openings that have not ended (ended ones dropped). */
  get current(): number {
    this.expire();
    return this.until.size;
  }

  /** Whether an opening is held for the id, ended or not. */
  has(computerId: number): boolean {
    return this.until.has(computerId);
  }

  /** Whether the id is open now; an ended opening is dropped. */
  isOpen(computerId: number): boolean {
    const until = this.until.get(computerId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(computerId);
    return false;
  }

  set(computerId: number, until: number): void {
    this.until.set(computerId, until);
  }

  /** Drops the id's opening; whether it held one (ended or not). */
  delete(computerId: number): boolean {
    return this.until.delete(computerId);
  }

  /** The openings that have not ended and until when (ms), ids ascending. */
  entries(): Array<[number, number]> {
    this.expire();
    return [...this.until].sort((a, b) => a[0] - b[0]);
  }

  private expire(): void {
    if (this.until.size === 0) return;
    const now = this.now();
    for (const [id, until] of this.until) if (until <= now) this.until.delete(id);
  }
}
