// Chains of unbounded repetitions, for the run rules of pattern-safety.ts (pattern-rules.ts): the
// longest run of repetitions of overlapping characters with nothing between them that the one before
// cannot take, each a factor of the text's length a failing match tries, read two ways: coarsely, a
// group matched at most once counted as its longest inner chain, and precisely, walked through
// (scanChains). Pure; weights are cached per parsed term.

import { ANY, overlaps, union, type Ranges } from './char-ranges.js';
import type { Alt, Atom, Seq, Term } from './regex-structure.js';
import { charsAtom, firstAlt, firstAtom, inlined, lastAlt, nullableTerm, unbounded } from './pattern-terms.js';

/**
 * A chain of unbounded repetitions (see scanChains): its last member (`last`, whose characters decide
 * what it goes on with), its degree, and its members as the sequence names them (a group matched at
 * most once that the chain went into, once, for the repetitions inside it).
 */
export interface Chain {
  last: Term;
  value: number;
  members: Term[];
  /** Read precisely, when `last` is a group repeated without bound: what the chain met after it (see separated). */
  after?: After;
  /** For the body rule (`varies`): the characters of `last` and of the required items met since (see scanChains's shifts). */
  reach?: Ranges;
}

/**
 * What a sequence holds between a group repeated without bound and a later item: at most `gap`
 * characters, the first of them one of `lead` (null: nothing met yet; ANY: unknown, or it can be empty).
 */
export interface After {
  gap: number;
  lead: Ranges | null;
}
export const NOTHING_AFTER: After = { gap: 0, lead: null };

/** `after` with `t` met too (an assertion or lookaround takes no characters). */
export function afterTerm(after: After, t: Term): After {
  const len = maxLength(t);
  if (len === 0) return after;
  return { gap: after.gap + len, lead: after.lead ?? (nullableTerm(t) ? ANY : firstAtom(t.atom)) };
}

/** The most characters `t` can match (Infinity when unbounded). */
export function maxLength(t: Term): number {
  if (t.max === 0) return 0;
  const a = maxLengthAtom(t.atom);
  return a === 0 ? 0 : t.max * a;
}
function maxLengthAtom(a: Atom): number {
  if (a.kind === 'set') return 1;
  if (a.kind === 'backref') return Infinity;
  if (a.kind !== 'group') return 0;
  let len = lengthCache.get(a);
  if (len === undefined) {
    len = a.body.reduce((most, seq) => Math.max(most, seq.reduce((sum, t) => sum + maxLength(t), 0)), 0);
    lengthCache.set(a, len);
  }
  return len;
}
const lengthCache = new WeakMap<Atom, number>();

/**
 * Whether repetition `t`, joining the chain of a group repeated without bound (`last`) with `after`
 * between them, leaves the chain's degree as it is (read precisely, forward). Let S be the characters `t`
 * cannot take. For one end of `t`, the group can have ended at few places only when every place it can
 * end that the match goes on from sits next to a character of S, and the text from there to `t`'s end
 * holds few of them: `after` is at most `gap` characters (bounded) and `t` takes none, so at most `gap`
 * of S lie between; and the group's end is next to one when either
 * - every copy of the group ends with a character of S (`^([\w-]+\.)+[\w-]+`: each copy ends with the
 *   `.` the [\w-]+ cannot take, so the [\w-]+ after it lies in the text after the group's last `.`), or
 * - what follows the group starts with a character of S (`(\.[a-z0-9-]+)*\.[a-z]{2,}$`: the group can
 *   stop anywhere in its last copy's run, but only where a `.` follows does the match go on, and the
 *   [a-z]{2,} takes no `.`).
 * So the pairs of ends are about length x (gap + 2), not length^2. Not so when a copy can end with what
 * `t` takes and the next character can be one too (`(\W+?c)*(\W+?c)*`: the second group takes whole
 * copies of the first), or when `t` can follow the group directly (`^(\.x*)+x+`: the x's after a `.` split
 * between the copy's x* and the x+).
 */
export function separated(last: Term, after: After, t: Term): boolean {
  if (last.atom.kind !== 'group' || !unbounded(last) || after.gap === Infinity) return false;
  const takes = charsAtom(t.atom);
  if (!overlaps(lastAlt(last.atom.body), takes)) return true;
  return after.lead !== null && !overlaps(after.lead, takes);
}

/**
 * How much of a chain a term is: 1 for a term counted; for a group matched at most once, the longest
 * chain in any of its alternatives (`(?:\w*b*)?` between two `\w` runs carries one on; an alternative's
 * runs count as the group's: `(?:x|\w*a*)`); else 0.
 */
function weight(t: Term, counts: (t: Term) => boolean): number {
  const counted = counts(t) ? 1 : 0;
  if (t.max > 1 || t.atom.kind !== 'group') return counted;
  // a group matched at most once that is counted itself (an optional one, read for `varies`) weighs its
  // inner chain too: `(?:a(?:b*b*)?)*` splits the b's of each copy in many ways
  const cache = counts === unbounded ? weightCache : variesCache;
  let w = cache.get(t);
  if (w === undefined) {
    w = t.atom.body.reduce((most, seq) => Math.max(most, scanChains(inlined(seq), false, counts).longest?.value ?? 0), counted);
    cache.set(t, w);
  }
  return w;
}
const weightCache = new WeakMap<Term, number>();
const variesCache = new WeakMap<Term, number>();

/**
 * Walks `terms` keeping, for each unbounded repetition (or group holding some, by its weight), the
 * longest chain of them ending with it: each able to take characters of the one before, with only
 * optional items or ones the chain's last can take between them (`.*a.*a.*b`). An optional repetition
 * of other characters does not end a chain (`^\w*?b*[^b]+(?:a|b)+$`: the \w, [^b] and (a|b) runs share
 * the a's across the b*), a required item the chain's last cannot take does. A failing match tries about
 * length^value splits of the longest. `prefix[i]`: the longest value before term i, how many
 * length-fold ways the text before it can be split (a lookaround there is matched again for each).
 *
 * `skipLast`: the last term ends the whole pattern, and what cannot fail after a run is not counted: a
 * repetition of a character set there, or an optional group (nothing after it can fail: `.*foo.*`); a
 * required group there can fail inside, so it is walked into as its alternatives, their last terms not
 * counted alike (a group repeated without bound as its first copy: `\w*(?:(?:\d+b[ab])?\w\s)+` is
 * length^3 on digits, unanchored).
 *
 * `precise`: every group matched at most once is walked into, as each of its alternatives (and as
 * nothing when optional), instead of counted as its longest inner chain joined on any of its
 * characters: a chain goes on through its repetitions, and a required item in it the chain's last
 * cannot take ends it, a separator at the group's start or end (`^-?\d+(\.\d+)?([eE][+-]?\d+)?$`:
 * the `.` and the e end the runs); a group repeated without bound goes on from a chain only when its
 * first characters can be the chain's last's (`^[a-z]+(_[a-z]+)*$`: the `_` starts each copy), and a
 * repetition after such a group adds nothing to its chain when a separator bounds where the group ends
 * (separated: `^([\w-]+\.)+[\w-]+$`; not in a lookbehind, read from its end: `forward` false). The
 * chains it finds are never longer than the other reading's; its members are named as the sequence
 * names them (a group walked into, once). `counts` other than `unbounded` (`varies`: repetitions and
 * optional items) is always read the other way.
 */
export function scanChains(terms: Seq, skipLast: boolean, counts: (t: Term) => boolean = unbounded, precise: Steps | null = null, forward = true): { prefix: number[]; longest: Chain | null } {
  const separators = precise !== null && forward;
  // for the body rule (`varies`), a required item a chain's last can take carries the chain on with its
  // characters too: it can shift by what the items on either side give and take (`[ab]+[bc]c+`: "abcc"
  // is a|b|cc or ab|c|c)
  const shifts = counts !== unbounded && precise === null;
  const reachOf = (c: Chain): Ranges => (shifts ? (c.reach ?? charsAtom(c.last.atom)) : charsAtom(c.last.atom));
  const prefix: number[] = [];
  let longest = null as Chain | null;
  /** `t` met by the chains still open (no required item their last cannot take since): the chains open after it. */
  const meet = (chains: Chain[], t: Term, shown: Term, last: boolean): Chain[] => {
    if (precise !== null) spend(precise, chains.length + 1);
    if (t.atom.kind === 'group' && counts === unbounded && (last ? t.min > 0 && (t.max <= 1 || unbounded(t)) : precise !== null && t.max <= 1)) {
      if (t.max === 0) return chains;
      // at the end, a group repeated without bound can fail only in the copies it must match: walked as
      // its first (its last term not counted when it is the only one); one repeated 2 to 10 times is
      // read written out (pattern-written-out.ts)
      return through(chains, t.atom.body, t.min === 0, shown, last && t.min === 1);
    }
    const w = last ? 0 : weight(t, counts);
    const chars = charsAtom(t.atom);
    let before: Chain | null = null;
    let value = w;
    if (w > 0) {
      for (const c of chains) {
        if (!(precise !== null ? joinsPrecisely(c.last, t) : overlaps(reachOf(c), chars))) continue;
        // read precisely, a repetition after a group repeated without bound that a separator ends adds nothing
        const v = c.value + (separators && c.after !== undefined && separated(c.last, c.after, t) ? 0 : w);
        if (before === null || v > value) {
          before = c;
          value = v;
        }
      }
    }
    // a closed chain is dropped: a long pattern of runs between separators costs its length, not its square
    const closes = !nullableTerm(t);
    let open = 0;
    for (const c of chains) {
      if (closes && !overlaps(reachOf(c), chars)) continue;
      chains[open++] = c.after !== undefined ? { ...c, after: afterTerm(c.after, t) } : shifts && closes ? { ...c, reach: union(reachOf(c), chars) } : c;
    }
    chains.length = open;
    if (w > 0) {
      const named = before?.members ?? [];
      const chain: Chain = { last: t, value, members: shown !== t && named[named.length - 1] === shown ? named : [...named, shown] };
      if (separators && t.atom.kind === 'group' && unbounded(t)) chain.after = NOTHING_AFTER;
      if (precise !== null) {
        // read precisely, a chain outdoes one of less value over the same characters (they go on alike)
        const key = preciseKeyOf(chain);
        let open = 0;
        for (const c of chains) if (preciseKeyOf(c) !== key || c.value > chain.value) chains[open++] = c;
        chains.length = open;
      }
      chains.push(chain);
      if (longest === null || chain.value > longest.value) longest = chain;
    }
    return chains;
  };
  /** A group's body met once: each alternative walked (`last`: its last term ends the pattern), and nothing when `optional`. */
  const through = (chains: Chain[], body: Alt, optional: boolean, shown: Term, last: boolean): Chain[] => {
    const paths: Chain[][] = optional ? [chains] : [];
    if (precise !== null) spend(precise, chains.length * (body.length + 1));
    for (const raw of body) {
      const seq = inlined(raw);
      let open = chains.slice();
      for (let k = 0; k < seq.length; k++) open = meet(open, seq[k] as Term, shown, last && k === seq.length - 1);
      paths.push(open);
    }
    return mergeChains(paths, precise !== null);
  };
  let chains: Chain[] = [];
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i] as Term;
    prefix.push(longest?.value ?? 0);
    chains = meet(chains, t, t, skipLast && i === terms.length - 1);
  }
  return { prefix, longest };
}

/**
 * Whether repetition `t` goes on from repetition `last` (scanChains's precise reading): a text they split
 * two ways has a character `last` can end with that `t` can start with. A set's characters are both;
 * a group repeated without bound can end where a copy does, or where a copy could have begun (one copy
 * fewer: `(\W+?c)*(\W+?c)*` splits its copies between the two), so its first and last characters
 * (`^[a-z]+(_[a-z]+)*$`: a `_` begins each copy, which the `[a-z]+` cannot take).
 */
export function joinsPrecisely(last: Term, t: Term): boolean {
  const first = firstAtom(t.atom);
  if (last.atom.kind !== 'group') return overlaps(charsAtom(last.atom), first);
  return overlaps(lastAlt(last.atom.body), first) || overlaps(firstAlt(last.atom.body), first);
}

/**
 * Most steps (a chain met by an item, copied into a way through a group or merged after it) the
 * precise reading of one pattern may take. It walks a group once for every sequence around it that
 * the rules read, so deeply nested groups full of runs cost about depth^2 x runs: past the bound it
 * gives up and the pattern keeps the first reading's answer (the check's own cost stays a few
 * milliseconds). Real patterns take a few hundred steps.
 */
export const MAX_PRECISE_STEPS = 50_000;
/** The steps a precise reading has taken (see MAX_PRECISE_STEPS). */
export interface Steps {
  steps: number;
}
/** Thrown by a precise reading past MAX_PRECISE_STEPS. */
export class PreciseGaveUp extends Error {}
function spend(precise: Steps, n: number): void {
  precise.steps += n;
  if (precise.steps > MAX_PRECISE_STEPS) throw new PreciseGaveUp(`more than ${MAX_PRECISE_STEPS} steps`);
}

/**
 * What a chain goes on like: its last member (keyOf), or read precisely, a set's characters
 * (preciseKeyOf: two runs of `\d` join and end alike, whichever came last).
 */
const keyOf = (c: Chain): object => c.last;
const preciseKeyOf = (c: Chain): object => (c.last.atom.kind === 'set' ? c.last.atom.set : c.last);

/** What holds after either of two paths: the longer gap, and either lead (unknown when one path met nothing yet). */
function worse(a: After, b: After): After {
  if (a === b) return a;
  return { gap: Math.max(a.gap, b.gap), lead: a.lead === null || b.lead === null ? (a.lead === b.lead ? null : ANY) : union(a.lead, b.lead) };
}

/**
 * The chains open after any of several paths through a group: for each last member (`precise`: each
 * key, see keyOf), the one of the most value (the first met of equal ones).
 */
function mergeChains(paths: Chain[][], precise: boolean): Chain[] {
  if (paths.length === 1) return paths[0] as Chain[];
  const key = precise ? preciseKeyOf : keyOf;
  const out: Chain[] = [];
  let at: Map<object, number> | null = null;
  for (const path of paths) {
    for (const c of path) {
      const k = key(c);
      let i = -1;
      if (at === null && out.length > 16) {
        at = new Map();
        for (let j = out.length - 1; j >= 0; j--) at.set(key(out[j] as Chain), j);
      }
      if (at !== null) i = at.get(k) ?? -1;
      else for (let j = 0; j < out.length && i === -1; j++) if (key(out[j] as Chain) === k) i = j;
      if (i === -1) {
        at?.set(k, out.length);
        out.push(c);
      } else if (c.value > (out[i] as Chain).value) out[i] = c;
      else if (c.value === (out[i] as Chain).value && c.after !== undefined) out[i] = { ...(out[i] as Chain), after: worse(c.after, (out[i] as Chain).after ?? c.after) };
    }
  }
  return out;
}
