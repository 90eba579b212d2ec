// CC_LINK_PINS_FILE: the pinned computer ids kept across restarts. Read once at start (a bad file
// stops the start, naming the file and the line), written whole after each change (pins-writer.ts);
// its lines are pins-text.ts's. This module reads it at start and removes the temporary files a
// crash during a write left behind; it is loaded only when the file is configured.
import { readFileSync, statSync } from 'node:fs';
import { lstat, readdir, realpath, unlink } from 'node:fs/promises';
import { MAX_LABEL } from './frames.js';
import { HEADER, PinsFileError, parseDistrusted, parseLabels, parseOpenings, parsePins, parseUnconfirmed } from './pins-text.js';
import { dirOf } from './pins-writer.js';

export { PinsFileError, formatPins, parseDistrusted, parseLabels, parseOpenings, parsePins, parseUnconfirmed } from './pins-text.js';
export { PinsWriter } from './pins-writer.js';

/**
 * The most a pin's lines take: about 80 bytes for the pin (and each of its comment lines), and its label
 * line, `# label <id> ` and the label as JSON (at most 6 bytes a character, \u escapes); a file this
 * far past `max` pins is refused unread.
 */
export const BYTES_PER_PIN = 256 + 32 + 6 * MAX_LABEL + 2;

export interface LoadedPins {
  pins: Map<number, string>;
  /** Strict's openings written by the bridge: id -> until (ms), expired ones included. */
  openings: Map<number, number>;
  /** Keys pin resets distrust: id -> hex digest. */
  distrusted: Map<number, string>;
  /** Pins not confirmed yet (CC_LINK_PIN_CONFIRM_MS), oldest first. */
  unconfirmed: number[];
  /** The labels pinned computers last said: id -> label. */
  labels: Map<number, string>;
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
      return { pins: new Map(), openings: new Map(), distrusted: new Map(), unconfirmed: [], labels: new Map(), existed: false, loose: false };
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
  return { pins: parsePins(text, path, max), openings: parseOpenings(text), distrusted: parseDistrusted(text, path, max), unconfirmed: parseUnconfirmed(text), labels: parseLabels(text, path, max), existed: true, loose: (mode & 0o077) !== 0 };
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
