// What the structure of a pattern (regex-structure.ts) can match, read without running it, for the
// rules of pattern-safety.ts: whether a term can match empty text, the characters a match can start
// with, end with or consume, which repetitions can take characters at either end of a match, and
// whether two alternatives can start alike. Pure.

import { ANY, overlaps, union, type Ranges } from './char-ranges.js';
import type { Alt, Atom, Seq, Term } from './regex-structure.js';

/** A bounded repetition above this many times counts as unbounded. */
export const MAX_FINITE = 10;

export const repeats = (t: Term) => t.max > 1;
export const unbounded = (t: Term) => t.max > MAX_FINITE;
/** A term that can match more or fewer times: a repetition, or an optional item (`(a|b)?`). */
export const varies = (t: Term) => t.max > t.min;

export function nullableAlt(alt: Alt): boolean {
  return alt.some(nullableSeq);
}
export function nullableSeq(seq: Seq): boolean {
  return seq.every(nullableTerm);
}
export function nullableTerm(t: Term): boolean {
  if (t.min === 0) return true;
  const a = t.atom;
  return a.kind === 'group' ? nullableAlt(a.body) : a.kind !== 'set';
}

/** Characters a match can start with. */
export function firstAlt(alt: Alt): Ranges {
  return alt.reduce<Ranges>((acc, seq) => union(acc, firstSeq(seq)), []);
}
export function firstSeq(seq: Seq): Ranges {
  let acc: Ranges = [];
  for (const t of seq) {
    if (t.max > 0) acc = union(acc, firstAtom(t.atom));
    if (!nullableTerm(t)) break;
  }
  return acc;
}
export function firstAtom(a: Atom): Ranges {
  return a.kind === 'set' ? a.set : a.kind === 'group' ? firstAlt(a.body) : a.kind === 'backref' ? ANY : [];
}

/** Every character a match can consume. */
export function charsAtom(a: Atom): Ranges {
  if (a.kind === 'set') return a.set;
  if (a.kind === 'group') {
    // cached: the rules ask for a group's characters again at every level around it
    let chars = charsCache.get(a);
    if (chars === undefined) {
      chars = a.body.reduce<Ranges>((acc, seq) => seq.reduce<Ranges>((s, t) => union(s, charsAtom(t.atom)), acc), []);
      charsCache.set(a, chars);
    }
    return chars;
  }
  return a.kind === 'backref' ? ANY : [];
}
const charsCache = new WeakMap<Atom, Ranges>();

/**
 * Characters a repetition can consume at the end of a match (one repeating more than MAX_FINITE times
 * when `onlyUnbounded`): where a following repetition could take over. Items after the repetition
 * that it can also take do not hide it (`[a-z]+.`: where the `.` falls is ambiguous too).
 */
export function tailAlt(alt: Alt, onlyUnbounded: boolean): Ranges {
  return edgeAlt(alt, onlyUnbounded, true);
}

/** Characters a match can end with (firstAlt read from the end). */
export function lastAlt(alt: Alt): Ranges {
  return alt.reduce<Ranges>((acc, seq) => union(acc, lastSeq(seq)), []);
}
function lastSeq(seq: Seq): Ranges {
  let acc: Ranges = [];
  for (let i = seq.length - 1; i >= 0; i--) {
    const t = seq[i] as Term;
    if (t.max > 0) acc = union(acc, t.atom.kind === 'set' ? t.atom.set : t.atom.kind === 'group' ? lastAlt(t.atom.body) : t.atom.kind === 'backref' ? ANY : []);
    if (!nullableTerm(t)) break;
  }
  return acc;
}

/**
 * Characters a repetition can consume at the start of a match (tailAlt read from the start): where it
 * could take over the end of the repetition before (`(?:[ab]+[^b]b)+`: the [ab]+ of one repetition can
 * take the "ab" the one before ended with; exponential).
 */
export function headAlt(alt: Alt, onlyUnbounded: boolean): Ranges {
  return edgeAlt(alt, onlyUnbounded, false);
}

/** tailAlt (`fromEnd`) and headAlt: one walk, read from the end or from the start. */
function edgeAlt(alt: Alt, onlyUnbounded: boolean, fromEnd: boolean): Ranges {
  return alt.reduce<Ranges>((acc, seq) => union(acc, edgeSeq(seq, onlyUnbounded, fromEnd)), []);
}
function edgeSeq(raw: Seq, onlyUnbounded: boolean, fromEnd: boolean): Ranges {
  // a group matched exactly once is read as its items: `(?:a+\w)[ab]` ends with what a+ can take too
  const seq = inlined(raw);
  let acc: Ranges = [];
  /** The characters of each item met so far (nearer the edge) that cannot match empty text. */
  const nearer: Ranges[] = [];
  for (let k = 0; k < seq.length; k++) {
    const t = seq[fromEnd ? seq.length - 1 - k : k] as Term;
    const chars = charsAtom(t.atom);
    const absorbs = nearer.every((c) => overlaps(c, chars));
    if (absorbs && (onlyUnbounded ? unbounded(t) : varies(t))) acc = union(acc, chars);
    if (nearer.length === 0 && t.atom.kind === 'group') acc = union(acc, edgeAlt(t.atom.body, onlyUnbounded, fromEnd));
    if (nullableTerm(t)) continue;
    if (!absorbs) break;
    nearer.push(chars);
  }
  return acc;
}

/** `seq` with every group that matches exactly once and has no alternatives written out in place: `(?:a+)(b+)` reads as `a+b+`. */
export function inlined(seq: Seq): Seq {
  const out: Seq = [];
  for (const t of seq) {
    if (t.atom.kind === 'group' && t.min === 1 && t.max === 1 && t.atom.body.length === 1) out.push(...inlined(t.atom.body[0] as Seq));
    else out.push(t);
  }
  return out;
}
