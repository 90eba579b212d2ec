// Writing CC_LINK_PINS_FILE after each change: the whole file, to a temporary file beside it (mode
// 0600), synced, then renamed over it and the directory synced, so a crash leaves the old file or
// the new one. Changes that come while a write is under way are written together once it is done; a
// new pin's hello-ok waits for the write that holds it (hello.ts). The changes computers' hellos make
// (new pins; pinned): a write for them starts CC_LINK_PIN_WRITE_MS after the last write ended at the
// soonest, holding every change made meanwhile, so hellos for new ids at a steady pace (anyone who can
// reach the link port, CC_LINK_PIN=on) cannot keep the disk rewriting the whole file back to back. A
// change of a pinned computer's label alone is written at most once per CC_LINK_PIN_LABEL_WRITE_MS
// (labelChanged): any pinned computer can change its label in back-to-back info frames, and each
// would rewrite the whole file. The operator's changes (changed) are written at once.
import { randomBytes } from 'node:crypto';
import { open, realpath, rename, unlink } from 'node:fs/promises';
import { formatPins } from './pins-text.js';

/** The directory of `path` (`.` for a bare name, `/` at the root). */
export function dirOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut < 0 ? '.' : cut === 0 ? '/' : path.slice(0, cut);
}

/**
 * Writes the pins file after each change (`changed()`), one write at a time, the latest table each time:
 * changes made while a write is under way are written together by the next one (many changes, few
 * writes). `changed()` resolves once a write that holds the change has finished (or failed, logged).
 */
export class PinsWriter {
  private writing: Promise<void> | null = null;
  private dirty = false;
  /** Resolves when the next write to start (the one that holds the changes not yet written) ends. */
  private next: Promise<void> | null = null;
  private endNext: (() => void) | null = null;
  /** Writes that failed (logged); the pins stay in memory and the next change tries again. */
  failures = 0;
  /** Writes done. */
  writes = 0;
  /** The label-only write set for later (labelChanged), or null. */
  private labelTimer: NodeJS.Timeout | null = null;
  /** When the last label-only write was asked for (ms). */
  private lastLabelWrite = -Infinity;
  /** Most label-only writes: one per this many ms (CC_LINK_PIN_LABEL_WRITE_MS); 0: each change is written. */
  labelWriteMs = 0;
  /** A write for computers' changes alone (pinned) starts this many ms after the last write ended at the soonest (CC_LINK_PIN_WRITE_MS); 0: at once. */
  pinWriteMs = 0;
  /** When the last write ended (ms). */
  private lastEnd = -Infinity;
  /** A change not to wait for pinWriteMs is waiting to be written (changed, flush). */
  private urgent = false;
  /** flush() calls under way: no write waits out pinWriteMs meanwhile. */
  private flushing = 0;
  /** While the next write waits out pinWriteMs: ends the wait at once. */
  private hurry: (() => void) | null = null;

  constructor(
    readonly path: string,
    private readonly snapshot: () => Iterable<readonly [number, string]>,
    private readonly onError: (message: string) => void,
    /** Strict's openings to keep with the pins: [id, until (ms)]. */
    private readonly openings: () => Iterable<readonly [number, number]> = () => [],
    /** The keys pin resets distrust: [id, hex digest]. */
    private readonly distrusted: () => Iterable<readonly [number, string]> = () => [],
    /** The pins not confirmed yet, oldest first. */
    private readonly unconfirmed: () => Iterable<number> = () => [],
    /** The labels pinned computers last said: [id, label]. */
    private readonly labels: () => Iterable<readonly [number, string]> = () => [],
  ) {}

  /** The table changed: write it (now, or after the write under way); resolves once that write ended. */
  changed(): Promise<void> {
    this.urgent = true;
    this.hurry?.();
    return this.mark();
  }

  /**
   * A computer's hello changed the table (a new pin, one evicted for it, one confirmed): written as
   * changed() is, but not sooner than pinWriteMs after the last write ended; every change made until
   * then goes in the same write. Resolves once that write ended: a new pin's hello-ok waits for it, so
   * nothing relies on a pin before it is on disk.
   */
  pinned(): Promise<void> {
    return this.mark();
  }

  private mark(): Promise<void> {
    this.dirty = true;
    this.next ??= new Promise((resolve) => (this.endNext = resolve));
    const written = this.next;
    if (this.writing === null) this.writing = this.drain();
    return written;
  }

  /**
   * Only a pinned computer's label changed: written now when no label-only write was in the last
   * `labelWriteMs`, else once that much time has passed since it (the labels as they are then, so the
   * latest is written; changes in between are merged into that one write). A write for another change
   * holds the labels too and takes the place of one set for later. flush() writes a pending one at once.
   */
  labelChanged(): void {
    if (this.labelTimer !== null) return;
    const wait = this.lastLabelWrite + this.labelWriteMs - Date.now();
    if (wait <= 0) {
      this.lastLabelWrite = Date.now();
      void this.changed();
      return;
    }
    this.labelTimer = setTimeout(() => {
      this.labelTimer = null;
      this.lastLabelWrite = Date.now();
      void this.changed();
    }, wait);
    // close() flushes it; a process ending otherwise is not held up by it
    this.labelTimer.unref();
  }

  /** Resolves when every change so far is written (or its write failed), a label-only one set for later too. */
  async flush(): Promise<void> {
    if (this.labelTimer !== null) {
      clearTimeout(this.labelTimer);
      this.labelTimer = null;
      void this.changed();
    }
    // a write waiting out pinWriteMs is made now, and so is any the flush waits for
    this.flushing++;
    try {
      this.hurry?.();
      while (this.writing !== null) await this.writing;
    } finally {
      this.flushing--;
    }
  }

  private async drain(): Promise<void> {
    while (this.dirty) {
      const wait = this.urgent || this.flushing > 0 ? 0 : this.lastEnd + this.pinWriteMs - Date.now();
      if (wait > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.hurry = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.hurry = null;
      }
      this.urgent = false;
      this.dirty = false;
      // this write holds every change so far; later ones wait for the next
      const end = this.endNext;
      this.next = this.endNext = null;
      // the labels as they are now are in this write: a label-only write set for later has nothing left to do
      if (this.labelTimer !== null) {
        clearTimeout(this.labelTimer);
        this.labelTimer = null;
      }
      try {
        await this.write(formatPins(this.snapshot(), this.openings(), this.distrusted(), this.unconfirmed(), this.labels()));
        this.writes++;
      } catch (err) {
        this.failures++;
        this.onError(`cannot write the pins file ${this.path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the pins are kept in memory and written at the next change`);
      }
      this.lastEnd = Date.now();
      end?.();
    }
    this.writing = null;
  }

  private async write(text: string): Promise<void> {
    // a symlink's target is the file: renaming over the link itself left the target unwritten
    const path = await realpath(this.path).catch(() => this.path);
    // random, not the pid alone: bridges in containers sharing the file are all PID 1, and one removed
    // the other's temporary file in the middle of its write (as MCP_SESSION_KEY_FILE's were, 48de2ce)
    const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const file = await open(temp, 'wx', 0o600);
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await rename(temp, path);
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
    // the rename itself is on disk once the directory is synced; a file system that cannot sync a
    // directory (EINVAL, EISDIR ...) still has the synced file under its new name
    const dir = await open(dirOf(path), 'r').catch(() => null);
    if (dir !== null) {
      try {
        await dir.sync().catch(() => {});
      } finally {
        await dir.close();
      }
    }
  }
}
