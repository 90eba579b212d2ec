// The CC_LINK_PINS_FILE format (pure): one line per pin, `<computer id> <SHA-256 of its key, 64 hex
// digits>` (what `printf %s "$key" | sha256sum` prints), `#` comments and blank lines ignored; never
// a key. Comment lines carry what an older bridge may ignore: strict's openings, the keys pin resets
// distrust, the pins not confirmed yet, the labels pinned computers last said. Reading a line at fault
// throws PinsFileError naming it.
import { parseComputerId } from './computer-id.js';
import { MAX_LABEL } from './frames.js';
import { DIGEST_PATTERN } from './key-digest.js';

export class PinsFileError extends Error {
  readonly code = 'ERR_PINS_FILE';
  constructor(readonly path: string, readonly where: string, reason: string) {
    super(`CC_LINK_PINS_FILE ${path}${where === '' ? '' : ` ${where}`}: ${reason}`);
    this.name = 'PinsFileError';
  }
}

/**
 * A copy of `field` that does not hold the file's text. A field cut out of the text (split, trim, a
 * regex capture) is, in V8, a slice of the whole text: a pin's digest kept in the table held all of it
 * for as long as that pin lived (measured, Node 20: one digest held 1.2 MB of a 10,000-pin file with
 * labels). JSON.stringify writes a new string and JSON.parse reads a new one out of it, for any text;
 * of the idioms measured, `(' ' + s).slice(1)` kept a slice of its copy (about half as much again per
 * digest) and a Buffer round trip loses lone surrogates. Labels need none: JSON.parse gives a new string.
 */
function detached(field: string): string {
  return JSON.parse(JSON.stringify(field)) as string;
}

/** The file's first line, written by the bridge (a comment). */
export const HEADER = '# cc-mcp-bridge pins (CC_LINK_PINS_FILE): <computer id> <SHA-256 of its mcp.key, hex>. Written by the bridge; edit it only while the bridge is stopped.\n';

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
    pins.set(computerId, detached(digest as string));
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
    distrusted.set(id, detached(m[2] as string));
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

/**
 * The label a pinned computer last said (held while it is away, see KeyPins): `# label <id> <the label as
 * a JSON string>`, a comment line so that an older bridge reads the file as before. JSON keeps any
 * label on one line (quotes, spaces, control characters escaped).
 */
const LABEL = /^#\s*label(?:\s|$)/;
const LABEL_LINE = /^#\s*label\s+(\d{1,16})\s+(".*")$/;

/** The JSON string text of a label's line: a label (not empty, at most MAX_LABEL characters), or null. */
function labelFrom(json: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  return typeof value === 'string' && value !== '' && value.length <= MAX_LABEL ? value : null;
}

/**
 * The labels in `text` (`# label <id> <JSON string>` lines): id -> label. A line that starts `# label`
 * but is not one (its label not a JSON string of 1 to MAX_LABEL characters), a repeated id or more than
 * `max` throw PinsFileError, as for distrusted keys: a label lost to a typo would let another computer
 * take it while its pinned computer is away.
 */
export function parseLabels(text: string, path: string, max: number): Map<number, string> {
  const labels = new Map<number, string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (!LABEL.test(line)) continue;
    const where = `line ${i + 1}`;
    const m = LABEL_LINE.exec(line);
    const id = m ? parseComputerId(m[1] as string) : null;
    const label = m ? labelFrom(m[2] as string) : null;
    if (!m || id === null || label === null) {
      throw new PinsFileError(path, where, `expected "# label <computer id> <the label as a JSON string of 1 to ${MAX_LABEL} characters>"`);
    }
    if (labels.has(id)) throw new PinsFileError(path, where, `computer id ${id} is labelled twice`);
    if (labels.size >= max) throw new PinsFileError(path, where, `more than CC_LINK_MAX_PINS (${max}) labels`);
    labels.set(id, label);
  }
  return labels;
}

/**
 * The file's text for these pins (and strict's openings: id, until in ms; the keys resets distrust; the
 * pins not confirmed yet; the labels pinned computers last said).
 */
export function formatPins(
  entries: Iterable<readonly [number, string]>,
  openings: Iterable<readonly [number, number]> = [],
  distrusted: Iterable<readonly [number, string]> = [],
  unconfirmed: Iterable<number> = [],
  labels: Iterable<readonly [number, string]> = [],
): string {
  let text = HEADER;
  for (const [id, digest] of entries) text += `${id} ${digest}\n`;
  for (const [id, until] of openings) text += `# open ${id} until ${new Date(until).toISOString()}\n`;
  for (const [id, digest] of distrusted) text += `# distrusted ${id} ${digest}\n`;
  for (const id of unconfirmed) text += `# unconfirmed ${id}\n`;
  for (const [id, label] of labels) text += `# label ${id} ${JSON.stringify(label)}\n`;
  return text;
}

