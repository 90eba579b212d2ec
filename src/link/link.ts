// One linked computer and its requests in flight. Knows nothing about sockets beyond send/close.
import { encodeCancel } from './frames.js';
import { UNKNOWN_IDENTITY, type Identity } from './identity.js';

/** How a computer is named in every line we print: `12 (Label: base-turtle)`. */
export function describe(computerId: number, label: string | null): string {
  return `${computerId} (Label: ${label ?? 'null'})`;
}

export interface LinkSocket {
  send(text: string): void;
  /** `send`, written at once rather than with the rest of this turn's frames to the computer. */
  sendNow?(text: string): void;
  close(code: number, reason: string): void;
}

/** How one request to one computer ended. */
export type Outcome =
  | { status: 'ok'; result: unknown; ms: number }
  | { status: 'error'; error: string; result?: unknown; ms: number }
  | { status: 'timeout'; ms: number }
  | { status: 'disconnected'; reason: string; ms: number }
  | { status: 'cancelled'; ms: number };

/** A request in flight on one link, as its pending map holds it. */
export interface Pending {
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
}

export function track(link: Link, id: string, pending: Pending): void {
  if (link.pending === NONE_PENDING) link.pending = new Map();
  link.pending.set(id, pending);
}

/**
 * Forgets request `id` of `link`; false when it was not in flight. A link whose last request ended
 * goes back to the shared empty map: an emptied Map keeps its table (~180 B), and most links are
 * idle most of the time.
 */
export function untrack(link: Link, id: string): boolean {
  const pending = link.pending;
  if (!pending.delete(id)) return false;
  if (pending.size === 0) link.pending = NONE_PENDING;
  return true;
}

/** Tells the computer to stop working on request `id` (never throws). */
export function sendCancel(link: Link, id: string): void {
  if (link.closed) return;
  try {
    link.socket.send(encodeCancel(id));
  } catch {
    // the link is going away; its close handler ends everything else
  }
}
