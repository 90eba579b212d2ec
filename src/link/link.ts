// One linked computer and its requests in flight. Knows nothing about sockets beyond send/close.
import { QUOTE_MAX, dataText, messageText, quoteValue } from '../jsonrpc/quote.js';
import { encodeCancel } from './request-frames.js';
import { UNKNOWN_IDENTITY, type Identity } from './identity.js';

/**
 * A computer as a tool's message names it: `12 (Label: base-turtle)`; the label as messageText shows it
 * (quoted and cut when long or holding control characters: the computer chooses it). list-computers and
 * probe-computers, whose lines are the computers' data, show it whole (dataName); logs use logName.
 */
export function describe(computerId: number, label: string | null): string {
  return `${computerId} (Label: ${label === null ? 'null' : messageText(label)})`;
}

/** `describe` for a line of data: the label whole (dataText). */
export function dataName(computerId: number, label: string | null): string {
  return `${computerId} (Label: ${label === null ? 'null' : dataText(label)})`;
}

/** Text printed as it is in a log line: printable ASCII, at most QUOTE_MAX characters. */
const PLAIN = new RegExp(`^[\\x20-\\x7e]{1,${QUOTE_MAX}}$`);

/**
 * A computer's string (its label, its program's version) for a log line: as it is when it is short
 * printable text, else quoted and cut (quoteValue), so it can neither break a log line in two nor
 * fill it with a megabyte.
 */
export function logText(text: string): string {
  return PLAIN.test(text) ? text : quoteValue(text);
}

/** `describe` for a log line (logText's label: printable ASCII as it is, anything else quoted). */
export function logName(computerId: number, label: string | null): string {
  return `${computerId} (Label: ${label === null ? 'null' : logText(label)})`;
}

export interface LinkSocket {
  /** `ascii`: the caller knows the text is ASCII (asciiJson's), so the socket need not check it. */
  send(text: string, ascii?: boolean): void;
  /** `send`, written at once rather than with the rest of this turn's frames to the computer. */
  sendNow?(text: string, ascii?: boolean): void;
  close(code: number, reason: string): void;
}

/** How one request to one computer ended. */
export type Outcome =
  | { status: 'ok'; result: unknown; ms: number }
  | { status: 'error'; error: string; result?: unknown; ms: number }
  | { status: 'timeout'; ms: number }
  | { status: 'disconnected'; reason: string; ms: number }
  | { status: 'cancelled'; ms: number };

/** A request in flight on one link, as the link holds it. */
export interface Pending {
  /** Its request id: the link matches answers against it. */
  readonly id: string;
  startedAt: number;
  settle(outcome: Outcome): void;
}

export class Link {
  /**
   * Requests in flight on this link: none (null), the one request itself (a probe gives each idle link
   * exactly one, and answers are matched by comparing its id), or a Map by id while there are more.
   * One probe over 10,000 idle links made a Map per link (~540 B allocated with its table and the
   * shrink at its delete) only to hold one entry. Read it through `pendingCount`/`pendingRequest`.
   */
  inFlight: Pending | Map<string, Pending> | null = null;
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

  /** How many requests are in flight on this link. */
  get pendingCount(): number {
    const held = this.inFlight;
    return held === null ? 0 : held instanceof Map ? held.size : 1;
  }

  /** The request in flight on this link with this id, if any (never one of another link). */
  pendingRequest(id: string): Pending | undefined {
    const held = this.inFlight;
    if (held === null) return undefined;
    if (held instanceof Map) return held.get(id);
    return held.id === id ? held : undefined;
  }

  /** Every request in flight on this link (a copy: settling them changes what the link holds). */
  pendingRequests(): Pending[] {
    const held = this.inFlight;
    return held === null ? [] : held instanceof Map ? [...held.values()] : [held];
  }
}

/** Adds `pending` to the requests in flight on `link` (its id is its key). */
export function track(link: Link, pending: Pending): void {
  const held = link.inFlight;
  if (held === null) link.inFlight = pending;
  else if (held instanceof Map) held.set(pending.id, pending);
  else {
    const map = new Map<string, Pending>();
    map.set(held.id, held).set(pending.id, pending);
    link.inFlight = map;
  }
}

/**
 * Forgets `pending` on `link`; false when it was not in flight there. A link whose last request ended
 * holds null again: an emptied Map keeps its table (~180 B), and most links are idle most of the time.
 */
export function untrack(link: Link, pending: Pending): boolean {
  const held = link.inFlight;
  if (held === pending) {
    link.inFlight = null;
    return true;
  }
  if (!(held instanceof Map) || held.get(pending.id) !== pending) return false;
  held.delete(pending.id);
  if (held.size === 0) link.inFlight = null;
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
