// CC_LINK_PINS_FILE: the pinned computer ids kept across restarts. One line per pin, `<computer id>
// <SHA-256 of its key, 64 hex digits>` (what `printf %s "$key" | sha256sum` prints), `#` comments and
// blank lines ignored; never a key. Read once at start (a bad file stops the start, naming the file and
// the line), written whole after each change: a temporary file beside it (mode 0600), synced, then
// renamed over it and the directory synced, so a crash leaves the old file or the new one. Changes
// that come while a write is under way are written together once it is done; a new pin's hello-ok
// waits for the write that holds it (hello.ts).
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { lstat, open, readdir, realpath, rename, unlink } from 'node:fs/promises';
import { parseComputerId } from './computer-id.js';
import { DIGEST_PATTERN } from './pins.js';

export class PinsFileError extends Error {
  readonly code = 'ERR_PINS_FILE';
  constructor(readonly path: string, readonly where: string, reason: string) {
    super(`CC_LINK_PINS_FILE ${path}${where === '' ? '' : ` ${where}`}: ${reason}`);
    this.name = 'PinsFileError';
  }
}

/** The longest line the bridge writes is about 80 bytes; a file this far past `max` lines is refused unread. */
const BYTES_PER_PIN = 256;
const HEADER = '# cc-mcp-bridge pins (CC_LINK_PINS_FILE): <computer id> <SHA-256 of its mcp.key, hex>. Written by the bridge; edit it only while the bridge is stopped.\n';

/** The pins in `text`; throws PinsFileError naming the line at fault. */
export function parsePins(text: string, path: string, max: number): Map<number, string> {
  const pins = new Map<number, string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `line ${i + 1}`;
    const fields = line.split(/\s+/);
    const [id, digest] = fields;
    if (fields.length !== 2) throw new PinsFileError(path, where, `expected "<computer id> <SHA-256 hex>", found ${fields.length} field${fields.length === 1 ? '' : 's'}`);
    const computerId = parseComputerId(id as string);
    if (computerId === null) throw new PinsFileError(path, where, 'the computer id (field 1) is not a whole number >= 0');
    if (!DIGEST_PATTERN.test(digest as string)) throw new PinsFileError(path, where, 'field 2 is not a SHA-256 of 64 lowercase hex digits');
    if (pins.has(computerId)) throw new PinsFileError(path, where, `computer id ${computerId} is pinned twice`);
    if (pins.size >= max) throw new PinsFileError(path, where, `more than CC_LINK_MAX_PINS (${max}) pins`);
    pins.set(computerId, digest as string);
  }
  return pins;
}

/**
 * CC_LINK_PIN=strict: an id the operator let in (cc-mcp pin-reset) and until when, kept as a comment
 * line so that a bridge that does not know openings (or runs without strict) reads the file as before.
 */
const OPENING = /^#\s*open\s+(\d{1,16})\s+until\s+(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z)\s*$/;

/** The openings in `text` (`# open <id> until <ISO time>` lines): id -> until (ms). Other comments are comments. */
export function parseOpenings(text: string): Map<number, number> {
  const openings = new Map<number, number>();
  for (const raw of text.split('\n')) {
    const m = OPENING.exec(raw.trim());
    if (!m) continue;
    const id = parseComputerId(m[1] as string);
    const until = Date.parse(m[2] as string);
    if (id !== null && Number.isFinite(until)) openings.set(id, until);
  }
  return openings;
}

/**
 * A key a pin reset distrusts (cc-mcp pin-reset): `# distrusted <id> <SHA-256 hex>`, a comment line so
 * that an older bridge reads the file as before (and drops the line at its next write).
 */
const DISTRUSTED = /^#\s*distrusted(?:\s|$)/;
const DISTRUSTED_LINE = /^#\s*distrusted\s+(\d{1,16})\s+([0-9a-f]{64})\s*$/;

/**
 * The distrusted keys in `text` (`# distrusted <id> <hex>` lines): id -> hex digest. A line that starts
 * `# distrusted` but is not one, a repeated id or more than `max` throw PinsFileError: a distrust lost
 * to a typo would let the key a reset forgot pin the id again.
 */
export function parseDistrusted(text: string, path: string, max: number): Map<number, string> {
  const distrusted = new Map<number, string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (!DISTRUSTED.test(line)) continue;
    const where = `line ${i + 1}`;
    const m = DISTRUSTED_LINE.exec(line);
    const id = m ? parseComputerId(m[1] as string) : null;
    if (!m || id === null) throw new PinsFileError(path, where, 'expected "# distrusted <computer id> <SHA-256 of 64 lowercase hex digits>"');
    if (distrusted.has(id)) throw new PinsFileError(path, where, `computer id ${id} is distrusted twice`);
    if (distrusted.size >= max) throw new PinsFileError(path, where, `more than CC_LINK_MAX_PINS (${max}) distrusted keys`);
    distrusted.set(id, m[2] as string);
  }
  return distrusted;
}

/**
 * CC_LINK_PIN=on: a pin not confirmed yet (CC_LINK_PIN_CONFIRM_MS), `# unconfirmed <id>`, oldest first; a
 * comment line, so an older bridge reads the pin as confirmed. A line that is not quite one is a comment.
 */
const UNCONFIRMED = /^#\s*unconfirmed\s+(\d{1,16})\s*$/;

/** The ids `text` marks unconfirmed, in the file's order (the oldest pin first). */
export function parseUnconfirmed(text: string): number[] {
  const ids: number[] = [];
  for (const raw of text.split('\n')) {
    const m = UNCONFIRMED.exec(raw.trim());
    const id = m ? parseComputerId(m[1] as string) : null;
    if (id !== null) ids.push(id);
  }
  return ids;
}

/** The file's text for these pins (and strict's openings: id, until in ms; the keys resets distrust; the pins not confirmed yet). */
export function formatPins(
  entries: Iterable<readonly [number, string]>,
  openings: Iterable<readonly [number, number]> = [],
  distrusted: Iterable<readonly [number, string]> = [],
  unconfirmed: Iterable<number> = [],
): string {
  let text = HEADER;
  for (const [id, digest] of entries) text += `${id} ${digest}\n`;
  for (const [id, until] of openings) text += `# open ${id} until ${new Date(until).toISOString()}\n`;
  for (const [id, digest] of distrusted) text += `# distrusted ${id} ${digest}\n`;
  for (const id of unconfirmed) text += `# unconfirmed ${id}\n`;
  return text;
}

export interface LoadedPins {
  pins: Map<number, string>;
  /** Strict's openings written by the bridge: id -> until (ms), expired ones included. */
  openings: Map<number, number>;
  /** Keys pin resets distrust: id -> hex digest. */
  distrusted: Map<number, string>;
  /** Pins not confirmed yet (CC_LINK_PIN_CONFIRM_MS), oldest first. */
  unconfirmed: number[];
  /** False when the file did not exist (it is made at the first pin). */
  existed: boolean;
  /** Group or others may read or write it (the bridge writes 0600). */
  loose: boolean;
}

/** Reads the pins file at start; a missing file is an empty table, anything unreadable a PinsFileError. */
export function readPinsFile(path: string, max: number): LoadedPins {
  let size: number;
  let mode: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new PinsFileError(path, '', 'is not a file');
    size = stat.size;
    mode = stat.mode;
  } catch (err) {
    if (err instanceof PinsFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      // the directory must exist: the first pin is written there
      try {
        if (!statSync(dirOf(path)).isDirectory()) throw new Error('not a directory');
      } catch {
        throw new PinsFileError(path, '', `neither the file nor its directory ${dirOf(path)} exists`);
      }
      return { pins: new Map(), openings: new Map(), distrusted: new Map(), unconfirmed: [], existed: false, loose: false };
    }
    throw new PinsFileError(path, '', `cannot read the file (${code ?? (err as Error).message})`);
  }
  if (size > max * BYTES_PER_PIN + HEADER.length) throw new PinsFileError(path, '', `${size} bytes is more than CC_LINK_MAX_PINS (${max}) pins take`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new PinsFileError(path, '', `cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return { pins: parsePins(text, path, max), openings: parseOpenings(text), distrusted: parseDistrusted(text, path, max), unconfirmed: parseUnconfirmed(text), existed: true, loose: (mode & 0o077) !== 0 };
}

/**
 * A temporary file of ours is this old (not modified since) before the start removes it: a write
 * takes milliseconds, so one this old was left by a crash, not in progress at another bridge sharing
 * the file. Age, not the pid in the name, decides: bridges in containers all run as PID 1, so a pid
 * says nothing about whose file it is or whether its writer lives.
 */
export const STALE_TEMP_MS = 600_000;

/**
 * Removes the temporary files a write of the pins file left behind when the bridge crashed during
 * it: beside the file (beside its target, for a symlink), named as PinsWriter names them
 * (`<file>.<pid>.<12 hex digits>.tmp`, or `<file>.<pid>.tmp` from older builds), regular files not
 * modified for `olderThanMs`. Anything else is left alone. Returns the names removed; a file that
 * cannot be removed is left and named in `failed`.
 */
export async function removeStaleTemps(path: string, olderThanMs = STALE_TEMP_MS, now = Date.now()): Promise<{ removed: string[]; failed: string[] }> {
  const target = await realpath(path).catch(() => path);
  const dir = dirOf(target);
  const base = target.slice(target.lastIndexOf('/') + 1);
  const removed: string[] = [];
  const failed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return { removed, failed };
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`) || !/^\.\d{1,10}(?:\.[0-9a-f]{12})?\.tmp$/.test(name.slice(base.length))) continue;
    const file = dir === '/' ? `/${name}` : `${dir}/${name}`;
    const stat = await lstat(file).catch(() => null);
    if (stat === null || !stat.isFile() || now - stat.mtimeMs < olderThanMs) continue;
    try {
      await unlink(file);
      removed.push(name);
    } catch {
      failed.push(name);
    }
  }
  return { removed, failed };
}

function dirOf(path: string): string {
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
  ) {}

  /** The table changed: write it (now, or after the write under way); resolves once that write ended. */
  changed(): Promise<void> {
    this.dirty = true;
    this.next ??= new Promise((resolve) => (this.endNext = resolve));
    const written = this.next;
    if (this.writing === null) this.writing = this.drain();
    return written;
  }

  /** Resolves when every change so far is written (or its write failed). */
  async flush(): Promise<void> {
    while (this.writing !== null) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      // this write holds every change so far; later ones wait for the next
      const end = this.endNext;
      this.next = this.endNext = null;
      try {
        await this.write(formatPins(this.snapshot(), this.openings(), this.distrusted(), this.unconfirmed()));
        this.writes++;
      } catch (err) {
        this.failures++;
        this.onError(`cannot write the pins file ${this.path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the pins are kept in memory and written at the next change`);
      }
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
