// Trust on first use for computer ids (CC_LINK_PIN): the first hello for an id that carries a key
// (mcp-computer's `mcp.key` setting) pins that id to the key's SHA-256. A later hello for the id with
// another key, or with none, is refused, so a peer that can reach the link port cannot take over a
// computer that has linked with a key. With CC_LINK_PIN=strict only pinned ids link at all, and an
// id the operator reset (POST /pins/<id>/reset, cc-mcp pin-reset) is open to its next keyed hello for
// CC_LINK_ENROLL_MS. A reset distrusts the key it forgot: that key cannot pin the id again until
// another key has (or the operator lifts it, cc-mcp pin-reset <id> --allow-old-key). The table lives
// in memory; CC_LINK_PINS_FILE keeps it across restarts (pins-file.ts). Only hashes are kept, never a
// key (key-digest.ts). Strict's openings, the pins not confirmed yet and the labels of pinned computers
// are kept by classes of their own (pin-openings.ts, pin-unconfirmed.ts, pin-labels.ts).
import { keyDigest, sameDigest } from './key-digest.js';
import { PinLabels } from './pin-labels.js';
import { EnrollOpenings } from './pin-openings.js';
import { UnconfirmedPins } from './pin-unconfirmed.js';

/** What a hello's key means for its computer id. */
export type PinCheck =
  /** The id is pinned to this key, or it is not pinned and the hello has no key (not strict): link as before. */
  | 'ok'
  /** The id is not pinned and the hello has a key: link, then `pin`. */
  | 'new'
  /** The id is pinned to another key: refuse. */
  | 'mismatch'
  /** The id is pinned and the hello has no key: refuse. */
  | 'missing'
  /** The id is not pinned, and the hello's key is the one the id's last reset stopped trusting: refuse. */
  | 'distrusted'
  /**
   * Strict: the id is not pinned and not open for enrollment, or the hello has no key (whatever the
   * id's state: a keyless hello never links under strict, and its one answer must not tell an open
   * enrollment window or a pin from their absence): refuse.
   */
  | 'not_enrolled';

export interface PinOptions {
  /** CC_LINK_PIN=strict: ids that are not pinned (or open for enrollment) never link. */
  strict?: boolean;
  /** CC_LINK_ENROLL_MS: how long an id reset in strict mode waits for its computer's keyed hello. */
  enrollMs?: number;
  /**
   * CC_LINK_PIN_CONFIRM_MS (not strict): how long the links of a newly pinned id must have stayed up in
   * all before its pin is confirmed. Until then it is the first a full table evicts (when its id is not
   * linked), so hellos that pin ids and go cannot fill CC_LINK_MAX_PINS for good.
   */
  confirmMs?: number;
  /** The clock (ms); Date.now by default. */
  now?: () => number;
}

/** What a reset did. */
export interface PinReset {
  /** The id was pinned (its pin is gone now). */
  wasPinned: boolean;
  /** A key is distrusted for the id now (the pin just forgotten's, or one an earlier reset forgot): it cannot pin the id. */
  distrusting: boolean;
  /** --allow-old-key lifted a distrust the id held (a key an earlier reset forgot may pin it again). */
  lifted: boolean;
  /** Strict: when the id stops waiting for its computer's keyed hello (ms since the epoch); null when not strict. */
  openUntil: number | null;
  /** The pins file write that holds the reset, while it is under way (with a pins file and a change); else null. */
  saved: Promise<void> | null;
}


export class KeyPins {
  /** computer id -> SHA-256 (hex) of the key it first linked with. */
  private readonly pins = new Map<number, string>();
  /** Strict: ids reset by the operator, open to their next keyed hello until a time. */
  private readonly open: EnrollOpenings;
  /** Ids reset by the operator -> SHA-256 (hex) of the key the reset forgot: it may not pin the id again. */
  private readonly distrust = new Map<number, string>();
  /** Keyed hellos for a new id that found the table full (linked unpinned). */
  full = 0;
  /** Unconfirmed pins evicted for a new id's pin (the table full). */
  evicted = 0;
  /** The id whose unconfirmed pin the last `pin` evicted; null when it evicted none. */
  lastEvicted: number | null = null;
  /** Not strict: ids pinned whose pin is not confirmed yet, the oldest first: a full table evicts from the front. */
  private readonly unconfirmed: UnconfirmedPins;
  /** When the id's live link came up (ms), or null when it is not linked (set by the link listener). */
  linkedSince: (computerId: number) => number | null = () => null;
  /**
   * Called after the table changed (a pin added, one reset): the pins file is saved then. Its promise
   * (with a pins file) resolves once the write that holds the change has ended.
   */
  onChange: (() => Promise<void> | void) | null = null;
  /**
   * Called after only a pinned computer's label changed (noteLabel): the pins file is saved at most once
   * per CC_LINK_PIN_LABEL_WRITE_MS then (PinsWriter.labelChanged). Without it, onChange is called.
   */
  onLabelChange: (() => void) | null = null;
  /**
   * Called after a computer's hello changed the table (a new pin, an unconfirmed one evicted for it, a pin
   * confirmed): as onChange, but the pins file's write may wait CC_LINK_PIN_WRITE_MS to hold more such
   * changes (PinsWriter.pinned). Without it, onChange is called.
   */
  onPin: (() => Promise<void> | void) | null = null;
  /** Ids pinned whose pin is not on disk yet: the write that holds it (with a pins file). */
  private readonly unsaved = new Map<number, Promise<void>>();
  /**
   * Pinned id -> the label its computer last linked with or set (noteLabel), kept while it is offline,
   * and each label's ids: a label lookup (computer-target.ts) counts a pinned computer that is away as
   * still holding its label, so another computer saying that label is not taken for it. Kept in the
   * pins file (a restart must not free the label of a computer that is away); gone with the pin.
   */
  private readonly labels = new PinLabels();
  readonly strict: boolean;
  readonly enrollMs: number;
  readonly confirmMs: number;
  private readonly now: () => number;

  /** @param max most ids pinned (and, strict, open for enrollment) at once (CC_LINK_MAX_PINS). */
  constructor(readonly max: number, options: PinOptions = {}) {
    this.strict = options.strict === true;
    this.enrollMs = options.enrollMs ?? 600_000;
    this.confirmMs = options.confirmMs ?? 600_000;
    this.now = options.now ?? Date.now;
    this.open = new EnrollOpenings(this.now);
    this.unconfirmed = new UnconfirmedPins(this.confirmMs);
  }

  get size(): number {
    return this.pins.size;
  }

  /** Ids open for enrollment now (strict). */
  get opened(): number {
    return this.open.current;
  }

  /** Takes pins read from the pins file (ids and hex digests, checked by the reader). */
  load(entries: Iterable<readonly [number, string]>): void {
    for (const [id, digest] of entries) this.pins.set(id, digest);
  }

  /**
   * Takes the keys resets distrust, read from the pins file (id -> hex digest); one for an id pinned
   * since is left out. Returns how many were taken.
   */
  loadDistrusted(entries: Iterable<readonly [number, string]>): number {
    let taken = 0;
    for (const [id, digest] of entries) {
      if (this.pins.has(id) || this.distrust.size >= this.max) continue;
      this.distrust.set(id, digest);
      taken++;
    }
    return taken;
  }

  /**
   * Replaces every pin, distrusted key and unconfirmed mark with these (the pins file read again); openings
   * stay. The file's labels replace this bridge's; a pinned id the file has no label for keeps its own.
   */
  replace(
    entries: Iterable<readonly [number, string]>,
    distrusted: Iterable<readonly [number, string]> = [],
    unconfirmed: Iterable<number> = [],
    labels: Iterable<readonly [number, string]> = [],
  ): void {
    this.pins.clear();
    this.distrust.clear();
    this.unconfirmed.clear();
    this.load(entries);
    this.loadDistrusted(distrusted);
    this.loadUnconfirmed(unconfirmed);
    // a label stays with its id's pin only while the id is still pinned
    for (const id of this.labels.ids()) if (!this.pins.has(id)) this.labels.forget(id);
    this.loadLabels(labels);
  }

  /**
   * Takes the labels of pinned computers read from the pins file (id -> label, checked by the reader);
   * one for an id not pinned is left out. Returns how many were taken.
   */
  loadLabels(entries: Iterable<readonly [number, string]>): number {
    let taken = 0;
    for (const [id, label] of entries) {
      if (!this.pins.has(id)) continue;
      this.labels.set(id, label);
      taken++;
    }
    return taken;
  }

  /** The labels pinned computers last said, for the pins file: [id, label], ids ascending. */
  labelled(): Array<[number, string]> {
    return this.labels.entries();
  }

  /** Takes the pins the file marks unconfirmed (oldest first); ids not pinned are left out (and so is everything under strict). */
  loadUnconfirmed(ids: Iterable<number>): number {
    if (this.strict) return 0;
    let taken = 0;
    for (const id of ids) {
      if (!this.pins.has(id) || this.unconfirmed.has(id)) continue;
      this.unconfirmed.add(id);
      taken++;
    }
    return taken;
  }

  /** The pins not confirmed yet, oldest first: kept in the pins file. */
  unconfirmedIds(): number[] {
    return this.unconfirmed.ids();
  }

  /** How many pins are not confirmed yet. */
  get unconfirmedCount(): number {
    return this.unconfirmed.size;
  }

  /**
   * The id's link that came up at `since` has ended (the link listener): its time counts toward its
   * pin's confirmation, which happens (and is written) once the times add up to `confirmMs`.
   */
  linkEnded(computerId: number, since: number): void {
    if (!this.unconfirmed.has(computerId)) return;
    if (this.unconfirmed.addUp(computerId, Math.max(0, this.now() - since))) void this.save(true);
  }

  /** Whether the id's links (the live one included) have been up `confirmMs` in all; confirms it then. */
  private confirmedBy(computerId: number, up: number, now: number): boolean {
    const since = this.linkedSince(computerId);
    if (up + (since === null ? 0 : Math.max(0, now - since)) < this.confirmMs) return false;
    this.confirm(computerId);
    return true;
  }

  private confirm(computerId: number): void {
    if (this.unconfirmed.delete(computerId)) void this.save(true);
  }

  /**
   * The table is full: drops the oldest unconfirmed pin whose id is not linked now (confirming, on
   * the way, the ones whose links have been up long enough). The id evicted, or null when none can be.
   */
  private evict(): number | null {
    const now = this.now();
    for (const [id, up] of this.unconfirmed.entries()) {
      if (this.confirmedBy(id, up, now)) continue;
      // linked, or its hello waits for the write that holds its pin: in use, not evicted
      if (this.linkedSince(id) !== null || this.unsaved.has(id)) continue;
      this.unconfirmed.delete(id);
      this.pins.delete(id);
      this.labels.forget(id);
      this.evicted++;
      return id;
    }
    return null;
  }

  /** The keys resets distrust, for the pins file: [id, hex digest], ids ascending. */
  distrusted(): Array<[number, string]> {
    return [...this.distrust].sort((a, b) => a[0] - b[0]);
  }

  /** Whether a reset distrusts a key for this id. */
  distrusts(computerId: number): boolean {
    return this.distrust.has(computerId);
  }

  /** How many ids a reset distrusts a key for. */
  get distrustedCount(): number {
    return this.distrust.size;
  }

  /**
   * Strict: takes the openings the pins file kept across a restart (id -> until, ms). Expired ones, ids
   * pinned since, and ones past CC_LINK_MAX_PINS are left out; an end further away than `enrollMs`
   * (a clock set back) is brought in to now + `enrollMs`. Returns how many were taken.
   */
  loadOpenings(openings: Iterable<readonly [number, number]>): number {
    if (!this.strict) return 0;
    const now = this.now();
    let taken = 0;
    for (const [id, until] of openings) {
      if (until <= now || this.pins.has(id) || this.open.has(id) || this.pins.size + this.open.size >= this.max) continue;
      this.open.set(id, Math.min(until, now + this.enrollMs));
      taken++;
    }
    return taken;
  }

  /** Strict: the ids open for enrollment now and until when (ms), ids ascending: kept in the pins file. */
  openings(): Array<[number, number]> {
    return this.open.entries();
  }

  /** Every pin, for the pins file: [id, hex digest], ids ascending. */
  entries(): Array<[number, string]> {
    return [...this.pins].sort((a, b) => a[0] - b[0]);
  }

  has(computerId: number): boolean {
    return this.pins.has(computerId);
  }

  /**
   * The label a pinned id's computer says now (its hello, an info frame); null: none. Ignored for an id
   * not pinned. Held here at once; a change is written to the pins file (with one), at most once per
   * CC_LINK_PIN_LABEL_WRITE_MS for all labels, so a restart keeps it.
   */
  noteLabel(computerId: number, label: string | null): void {
    if (!this.pins.has(computerId) || !this.labels.set(computerId, label)) return;
    if (this.onLabelChange !== null) this.onLabelChange();
    else void this.save();
  }

  /** The pinned ids whose computer last said `label` (linked or not). */
  idsLabelled(label: string): Iterable<number> {
    return this.labels.idsOf(label);
  }

  /** The label a pinned id's computer last said, or null. */
  labelOf(computerId: number): string | null {
    return this.labels.labelOf(computerId);
  }

  check(computerId: number, key: string | null): PinCheck {
    if (this.strict && key === null) return 'not_enrolled';
    // hashed whatever the id's state: the same work for a pinned id as for one that is not
    const digest = key === null ? null : keyDigest(key);
    const pinned = this.pins.get(computerId);
    if (pinned === undefined) {
      const distrusted = this.distrust.get(computerId);
      if (digest !== null && distrusted !== undefined && sameDigest(digest, distrusted)) return 'distrusted';
      if (this.strict) return this.isOpen(computerId) ? 'new' : 'not_enrolled';
      return key === null ? 'ok' : 'new';
    }
    if (digest === null) return 'missing';
    return sameDigest(digest, pinned) ? 'ok' : 'mismatch';
  }

  /** Whether a strict bridge waits for this id's keyed hello (reset, not yet linked, not expired). */
  isOpen(computerId: number): boolean {
    return this.open.isOpen(computerId);
  }

  /** Pins `computerId` to `key` (after check said 'new'); false when the table is full. */
  pin(computerId: number, key: string): boolean {
    this.lastEvicted = null;
    // an open id holds its place already
    if (!this.open.delete(computerId) && this.pins.size + this.opened >= this.max) {
      this.lastEvicted = this.strict ? null : this.evict();
      if (this.lastEvicted === null) {
        this.full++;
        return false;
      }
    }
    this.pins.set(computerId, keyDigest(key));
    // strict's pins come through the operator's openings: confirmed as made
    if (!this.strict) this.unconfirmed.add(computerId);
    // another key holds the id now (check said 'new', so not the distrusted one): the distrust has done its work
    this.distrust.delete(computerId);
    const saved = this.save(true);
    if (saved !== null) {
      this.unsaved.set(computerId, saved);
      void saved.then(() => {
        if (this.unsaved.get(computerId) === saved) this.unsaved.delete(computerId);
      });
    }
    return true;
  }

  /**
   * The write that puts the id's new pin on disk, while it is under way (with a pins file), else
   * null: a hello that links with that pin is answered once it has ended, so a crash after hello-ok
   * cannot lose the pin.
   */
  saving(computerId: number): Promise<void> | null {
    return this.unsaved.get(computerId) ?? null;
  }

  /**
   * Forgets the id's pin (the operator's reset, for a reinstalled computer) and distrusts the key it was
   * pinned to: that key cannot pin the id again until another key has, so a holder of the old key cannot
   * relink first and be pinned again. `allowOldKey` (the operator's --allow-old-key) distrusts nothing
   * and lifts a distrust the id holds. Not strict: the next keyed hello (with another key) pins the id.
   * Strict: the id is open to its next keyed hello for `enrollMs` (this is also how an operator lets a
   * new computer in). Refused (nothing changed) when strict and the table is full ('full'), or when
   * `max` ids distrust a key already ('distrust_full').
   */
  reset(computerId: number, options: { allowOldKey?: boolean } = {}): PinReset | 'full' | 'distrust_full' {
    const old = this.pins.get(computerId);
    const wasPinned = old !== undefined;
    if (this.strict && !wasPinned && !this.open.has(computerId) && this.pins.size + this.opened >= this.max) return 'full';
    const distrustNew = old !== undefined && options.allowOldKey !== true;
    if (distrustNew && !this.distrust.has(computerId) && this.distrust.size >= this.max) return 'distrust_full';
    let lifted = false;
    this.unconfirmed.delete(computerId);
    if (options.allowOldKey === true) lifted = this.distrust.delete(computerId);
    else if (old !== undefined) this.distrust.set(computerId, old);
    const distrusting = this.distrust.has(computerId);
    if (!this.strict) {
      let saved: Promise<void> | null = null;
      if (wasPinned || lifted) {
        this.pins.delete(computerId);
        this.labels.forget(computerId);
        saved = this.save();
      }
      return { wasPinned, distrusting, lifted, openUntil: null, saved };
    }
    const openUntil = this.now() + this.enrollMs;
    this.open.set(computerId, openUntil);
    this.pins.delete(computerId);
    this.labels.forget(computerId);
    // the pins file keeps the opening too, so a restart inside it keeps it
    const saved = this.save();
    return { wasPinned, distrusting, lifted, openUntil, saved };
  }

  /**
   * Tells onChange (onPin for a change a computer's hello made: `byHello`); the pins file's write that
   * holds the change, when there is one.
   */
  private save(byHello = false): Promise<void> | null {
    const saved = byHello && this.onPin !== null ? this.onPin() : this.onChange?.();
    return saved instanceof Promise ? saved : null;
  }
}
