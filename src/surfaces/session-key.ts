// MCP_SESSION_KEY_FILE: the key that signs the Mcp-Session-Id values of the 2025 revisions, kept across
// restarts so that ids issued before a restart still verify after it (a client reconnecting its GET
// /mcp stream with its old id gets the stream, not a 404). The file holds 64 lowercase hex digits (32
// random bytes) and a newline. Read once at start; when the file does not exist it is made: a
// temporary file beside it (mode 0600, created exclusively under a random name), synced, then
// hard-linked to the path, which fails when the path exists: of bridges started together on one
// missing file exactly one key wins and the others read it (a rename would replace: the last one
// won, and the others signed with keys no file held); then the directory is synced. A file system
// without hard links gets the rename, and that race, as before (tested through the `link` seam of
// loadSessionKey: no file system without hard links can be had unprivileged in CI). A file that is not exactly that,
// cannot be read, or that group or others may read or write stops the start: a bad key never
// becomes a fresh one silently, and the key is never printed.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, lstatSync, openSync, readlinkSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export class SessionKeyFileError extends Error {
  readonly code = 'ERR_SESSION_KEY_FILE';
  constructor(readonly path: string, reason: string) {
    super(`MCP_SESSION_KEY_FILE ${path}: ${reason}`);
    this.name = 'SessionKeyFileError';
  }
}

const KEY_BYTES = 32;
const KEY_TEXT = /^[0-9a-f]{64}\n?$/;

export interface LoadedSessionKey {
  key: Buffer;
  /** True when the file did not exist and was made now. */
  made: boolean;
}

const reasonOf = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/** How the made key file is put under its name: fs.linkSync, which fails with EEXIST when the path exists. */
export type LinkFile = (existing: string, path: string) => void;

/**
 * The signing key kept in `path`, made there if the file does not exist; throws SessionKeyFileError.
 * `link` is a seam for tests only: the bridge always uses fs.linkSync. A test passes one that throws
 * EPERM (as link() does on FAT, exFAT and some network and FUSE mounts) to reach the rename fallback
 * on a real file system; none without hard links can be mounted unprivileged (FAT needs root, FUSE a
 * setuid helper or a user namespace with a FUSE server; tmpfs, ramfs and overlayfs, which a user
 * namespace may mount, all have hard links).
 */
export function loadSessionKey(path: string, link: LinkFile = linkSync): LoadedSessionKey {
  return load(path, link, false);
}

function load(path: string, link: LinkFile, again: boolean): LoadedSessionKey {
  let stat;
  try {
    stat = statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new SessionKeyFileError(path, `cannot read the file (${reasonOf(err)})`);
    // a symlink to a missing file: the path exists, so the key could never be linked in (before: a
    // new key made and dropped until the stack overflowed)
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new SessionKeyFileError(path, `is a symbolic link to ${readlinkSync(path)}, which does not exist: make that file (or let the bridge make it by naming it in MCP_SESSION_KEY_FILE), or remove the link`);
    }
    const key = makeKeyFile(path, link);
    if (key !== null) return { key, made: true };
    // another process made it first: its key, read and checked as any existing file
    if (again) throw new SessionKeyFileError(path, 'was made by another process and is gone again');
    return load(path, link, true);
  }
  if (!stat.isFile()) throw new SessionKeyFileError(path, 'is not a file');
  const loose = stat.mode & 0o077;
  if (loose !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    throw new SessionKeyFileError(path, `its mode ${mode} lets group or others at the key (anyone holding it can make session ids this bridge accepts): chmod 600 it`);
  }
  // read only a file of the right size (a wrong path could name a large file)
  if (stat.size !== 2 * KEY_BYTES && stat.size !== 2 * KEY_BYTES + 1) {
    throw new SessionKeyFileError(path, `is ${stat.size} bytes; expected ${2 * KEY_BYTES} lowercase hex digits and a newline (delete it to have the bridge make a new one)`);
  }
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch (err) {
    throw new SessionKeyFileError(path, `cannot read the file (${reasonOf(err)})`);
  }
  // never echo what is in it: it may be a secret put there by mistake
  if (!KEY_TEXT.test(text)) throw new SessionKeyFileError(path, `does not hold ${2 * KEY_BYTES} lowercase hex digits (delete it to have the bridge make a new one)`);
  return { key: Buffer.from(text.slice(0, 2 * KEY_BYTES), 'hex'), made: false };
}

// link() errors meaning "this file system has no hard links" (FAT, some network and FUSE mounts)
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** Makes the key file with a new key; null when another process made `path` first. */
function makeKeyFile(path: string, link: LinkFile): Buffer | null {
  const key = randomBytes(KEY_BYTES);
  // random, not the pid alone: bridges in containers sharing the directory are all PID 1, and a
  // crash's leftover under a reused pid would stop every later start (EEXIST)
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  let fd: number | null = null;
  let lost = false;
  try {
    fd = openSync(temp, 'wx', 0o600);
    writeSync(fd, `${key.toString('hex')}\n`);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    try {
      // whole and synced before it appears under the path: a loser never reads a half-written key
      link(temp, path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (code === 'EEXIST') lost = true;
      else if (NO_HARD_LINKS.has(code)) renameSync(temp, path);
      else throw err;
    }
  } catch (err) {
    if (fd !== null) closeSync(fd);
    removeTemp(temp);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new SessionKeyFileError(path, `cannot make the file: its directory ${dirname(path)} does not exist`);
    throw new SessionKeyFileError(path, `cannot make the file (${reasonOf(err)})`);
  }
  removeTemp(temp);
  if (lost) return null;
  syncDirectory(dirname(path));
  return key;
}

/**
 * The new name is on disk once its directory is synced: without it a crash soon after the first
 * start could lose the file, and the next start would make another key (every session ended). A
 * file system that cannot open or sync a directory still has the synced file under its name.
 */
function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // EINVAL, EISDIR ...: see above
  } finally {
    closeSync(fd);
  }
}

function removeTemp(temp: string): void {
  try {
    unlinkSync(temp);
  } catch {
    // never made, or renamed
  }
}
