// Trust on first use for computer ids (CC_LINK_PIN): the first hello for an id that carries a key
// (mcp-computer's `mcp.key` setting) pins that id to the key's SHA-256 for the bridge's lifetime. A
// later hello for the id with another key, or with none, is refused, so a peer that can reach the link
// port cannot take over a computer that has linked with a key. Pins live in memory only: restarting
// the bridge forgets them all (the operator's reset for a reinstalled computer, whose key is gone).
import { createHash } from 'node:crypto';

/** What a hello's key means for its computer id. */
export type PinCheck =
  /** The id is pinned to this key, or it is not pinned and the hello has no key: link as before. */
  | 'ok'
  /** The id is not pinned and the hello has a key: link, then `pin`. */
  | 'new'
  /** The id is pinned to another key: refuse. */
  | 'mismatch'
  /** The id is pinned and the hello has no key: refuse. */
  | 'missing';

/** The key's SHA-256 (base64, 44 characters): one small string per pinned id; the key itself is never kept. */
function digest(key: string): string {
  return createHash('sha256').update(key).digest('base64');
}

export class KeyPins {
  /** computer id -> digest of the key it first linked with. */
  private readonly pins = new Map<number, string>();
  /** Keyed hellos for a new id that found the table full (linked unpinned). */
  full = 0;

  /** @param max most ids pinned at once (CC_LINK_MAX_PINS); a new id after that links unpinned. */
  constructor(readonly max: number) {}

  get size(): number {
    return this.pins.size;
  }

  check(computerId: number, key: string | null): PinCheck {
    const pinned = this.pins.get(computerId);
    if (pinned === undefined) return key === null ? 'ok' : 'new';
    if (key === null) return 'missing';
    return digest(key) === pinned ? 'ok' : 'mismatch';
  }

  /** Pins `computerId` to `key` (after check said 'new'); false when the table is full. */
  pin(computerId: number, key: string): boolean {
    if (this.pins.size >= this.max) {
      this.full++;
      return false;
    }
    this.pins.set(computerId, digest(key));
    return true;
  }
}
