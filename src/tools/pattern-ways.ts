// How many ways a text can split among a pattern's repetitions, for the rules of pattern-safety.ts:
// the ways bounded repetitions (nested: multiplied; alternatives that can start alike: summed) can
// match a stretch, and stretches of them with unbounded ones (each a factor of the text's length) read
// through optional items and groups matched at most once (stretchSplits). Chains of unbounded
// repetitions alone are pattern-chains.ts's. Pure; results are cached per parsed term.

import { ANY, covers, intersect, overlaps, type Ranges } from './char-ranges.js';
import type { Alt, Seq, Term } from './regex-structure.js';
import { charsAtom, firstAtom, inlined, nullableTerm, unbounded } from './pattern-terms.js';
import { firstAlike } from './pattern-alike.js';
import { NOTHING_AFTER, afterTerm, separated, type After } from './pattern-chains.js';

/**
 * Most ways a failing match may try, counted as (ways the bounded repetitions of a stretch can split
 * its text) x MAX_CHARS_COUNTED^(unbounded repetitions + an unanchored start): about a few
 * milliseconds of backtracking. Bounded repetitions multiply too: `^a{0,10}a{0,10}...a{0,10}$` (eight)
 * or `^((a|a){1,10}){1,10}$` are each well within MAX_FINITE and together took seconds on 40 characters.
 */
export const MAX_WAYS = 1_000_000;
/** The string length the count assumes for an unbounded repetition (MCP_PATTERN_MAX_CHARS's default). */
export const MAX_CHARS_COUNTED = 1000;
export const CAP = 1e18;

const waysCache = new WeakMap<Term, number>();

/**
 * How many ways one bounded term can match text: (max - min + 1) for a repeated character set; for a
 * group, the ways of its body (summed over alternatives that can start alike, else the most of any
 * one) to the power of each repetition count, summed. 1 for a term that matches one way, and for an
 * unbounded one (its splits count in the degree). Capped.
 */
export function ways(t: Term): number {
  let w = waysCache.get(t);
  if (w !== undefined) return w;
  // an unbounded repetition's splits are the degree's business (runProblem, repeatedGroupProblem)
  if (unbounded(t)) return 1;
  const body = t.atom.kind === 'group' ? bodyWays(t.atom.body) : 1;
  const max = t.max;
  w = 0;
  for (let k = t.min; k <= max && w < CAP; k++) w += body ** k;
  w = Math.min(Math.max(w, 1), CAP);
  waysCache.set(t, w);
  return w;
}
function bodyWays(alt: Alt): number {
  const each = alt.map((seq) => seq.reduce((acc, t) => Math.min(acc * ways(t), CAP), 1));
  return firstAlike(alt) !== null ? Math.min(each.reduce((a, b) => a + b, 0), CAP) : Math.max(...each);
}

/**
 * A stretch of repetitions (see stretchSplits): its last member and the stretch before it (its members
 * are theirs), the product of its bounded members' ways (`split`), how many unbounded ones it has
 * (`degree`), and the characters its last unbounded member and every item after it can take (`common`).
 */
export interface Stretch {
  last: Term;
  before: Stretch | null;
  split: number;
  degree: number;
  common: Ranges;
  /** The last merge (undominated) that met it. */
  mark: number;
  /** When its first member was met (stretchSplits counts them). */
  origin: number;
  /** The groups matched at most once it went on through in several ways (their alternatives). */
  via: Term[];
  /** When `separators` and its last member is a group repeated without bound: what came after it (pattern-chains.ts's separated). */
  after?: After;
}

/** The members of a stretch, in order. */
export function members(s: Stretch): Term[] {
  const out: Term[] = [];
  for (let m: Stretch | null = s; m !== null; m = m.before) out.push(m.last);
  return out.reverse();
}

/** split x MAX_CHARS_COUNTED^degree, capped: how many ways a stretch splits its text. */
export const stretchCost = (s: Stretch): number => Math.min(s.split * MAX_CHARS_COUNTED ** s.degree, CAP);

/** A term that can fail: one that cannot match empty text, or an assertion, lookaround or backreference. */
function canFail(t: Term): boolean {
  return t.min > 0 && (t.atom.kind !== 'group' || t.atom.body.every((seq) => seq.some(canFail)));
}

/**
 * The first stretch of `seq` that `over` says splits its text in too many ways before an item that
 * can fail there, or null. A stretch is a chain of repetitions (bounded or not), each able to take
 * what the next starts with, with only optional items of other characters between them, and each
 * unbounded member, the items after it up to the next unbounded one and that one able to take one same
 * character (on such a text each member's length can vary while the others make up for it: the ways
 * multiply; `^x*\w{1,10}[a-c]+$` splits in about 10 x length ways, as the \w{1,10} cannot reach from
 * the x's far into the a's). It is counted where a match can fail with it in place: at a required item
 * that cannot start with one of its common characters (on a text of that one the item fails), an
 * assertion or lookaround, or the end of a sequence that does not end the pattern. Unlike runProblem's single stretch it is read through:
 * - an optional item of other characters (`\w{2,}-*\w{3,10}$`: with the -* empty the two \w runs
 *   meet; each of the open stretches goes on, as scanChains's chains do, pattern-chains.ts);
 * - a group matched at most once, read as each of its alternatives and (when optional) as nothing: its
 *   repetitions are members of the stretch around it (`x{3,10}(?:[^a]*?\w+?)?x{3,10}$`: the two runs
 *   inside the group split what the x{3,10} leave them), where runProblem counts the group as one item.
 * `atEnd`: `seq` ends the whole pattern: items at its end that cannot fail are not read, and a stretch
 * still open at its end is not counted (nothing after it can fail: `(\d+)(\.\d+)?`, `b+?[ab]{0,3}b`).
 */
export function stretchSplits(seq: Seq, base: number, atEnd: boolean, over: (s: Stretch) => boolean, separators = false): Stretch | null {
  let found: Stretch | null = null;
  /** Stretches begun so far (each one's `origin` is its number). */
  let births = 0;
  const count = (s: Stretch): void => {
    if (found === null && over(s)) found = s;
  };
  const walk = (start: Stretch[], terms: Seq): Stretch[] => {
    let open = start;
    /** Whether `open` is this walk's own array (`start` is shared with the other paths). */
    let own = false;
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i] as Term;
      if (found !== null) break;
      if (t.max === 0) continue;
      if (t.atom.kind === 'group' && t.max === 1) {
        const body = t.atom.body;
        const began = births;
        const paths = t.min === 0 ? [open] : [];
        for (const seq of body) paths.push(walk(open, inlined(seq)));
        open = undominated(paths);
        own = open !== paths[0];
        // a stretch begun before the group goes on after each of the ways the group can match: the
        // ways of its paths add up, where the most of any one was kept (`(?:a)?.{2,}b` twice
        // length^2; `^(?:一?|丁?)(?:丂?|七?)...!` two empty ways a group, 2^n)
        const factors = pathFactors(paths, began);
        if (factors.size > 0) {
          open = open.map((c) => {
            const k = factors.get(c.origin) ?? 1;
            // the message names a few of the groups (a long list is cut there anyway)
            return k > 1 ? copy(c, Math.min(c.split * k, CAP), c.common, c.via.length < 8 ? [...c.via, t] : c.via) : c;
          });
          own = true;
        }
        continue;
      }
      if (t.atom.kind !== 'set' && t.atom.kind !== 'group') {
        // an assertion, lookaround or backreference can fail whatever the text
        open.forEach(count);
        continue;
      }
      const first = firstAtom(t.atom);
      const chars = charsAtom(t.atom);
      const goesOn = (c: Stretch) => overlaps(charsAtom(c.last.atom), first) && overlaps(c.common, chars);
      const w = ways(t);
      // as everywhere here, more than MAX_FINITE times counts as unbounded, x{11} too: each try costs its length
      const degree = unbounded(t) ? 1 : 0;
      let next: Stretch | null = null;
      if (degree > 0 || w > 1) {
        let before: Stretch | null = null;
        let added = degree;
        // read precisely (`separators`), an unbounded member after a group repeated without bound that a
        // separator ends adds no degree (pattern-chains.ts's separated)
        const adds = (c: Stretch) => (degree > 0 && c.after !== undefined && separated(c.last, c.after, t) ? 0 : degree);
        for (const c of open) {
          if (!goesOn(c)) continue;
          const d = adds(c);
          if (before === null || Math.min(c.split * MAX_CHARS_COUNTED ** (c.degree + d), CAP) > Math.min(before.split * MAX_CHARS_COUNTED ** (before.degree + added), CAP)) {
            before = c;
            added = d;
          }
        }
        // after an unbounded member only its characters must be shared: it reaches from where the
        // one before it varies to where the one after it does (`[ab]+[bc]+[cd]+!`: three boundaries,
        // in the b's, the c's and the d's); a bounded one reaches no further than its few characters
        const common = degree > 0 ? chars : before === null ? chars : intersect(before.common, chars);
        next =
          before === null
            ? { last: t, before: null, split: w, degree, common, mark: 0, origin: ++births, via: [] }
            : { last: t, before, split: Math.min(before.split * w, CAP), degree: before.degree + added, common, mark: 0, origin: before.origin, via: before.via };
        if (separators && degree > 0 && t.atom.kind === 'group') next.after = NOTHING_AFTER;
      }
      if (!nullableTerm(t)) {
        // a required item ends a stretch whose last cannot take it, or that shares no character with
        // it: on a text of the stretch's common characters it fails there, after every split; one it
        // does not end goes on with the characters both can take
        const going: Stretch[] = [];
        for (const c of open) {
          // on a text of a common character the item cannot start with, it fails here (`\w*-*\w+x` on a's)
          if (!covers(first, c.common)) count(c);
          if (goesOn(c)) going.push(copy(c, c.split, intersect(c.common, chars), c.via, c.after && afterTerm(c.after, t)));
        }
        open = going;
        own = true;
      } else if (open.some((c) => c.after !== undefined)) {
        open = open.map((c) => (c.after === undefined ? c : copy(c, c.split, c.common, c.via, afterTerm(c.after, t))));
        own = true;
      }
      if (next !== null) {
        if (!own) open = open.slice();
        own = true;
        add(open, next);
      }
    }
    return open;
  };
  const terms = inlined(seq);
  let end = terms.length;
  if (atEnd) while (end > 0 && !canFail(terms[end - 1] as Term)) end--;
  // the positions the sequence is tried at: a member on any text, `base` factors of the length
  const start: Stretch[] = base > 0 ? [{ last: START, before: null, split: 1, degree: base, common: ANY, mark: 0, origin: 0, via: [] }] : [];
  const open = walk(start, end === terms.length ? terms : terms.slice(0, end));
  if (!atEnd) open.forEach(count);
  return found;
}

/** `s` with another split, common characters, groups gone through and what came after its last member. */
const copy = (s: Stretch, split: number, common: Ranges, via: Term[], after = s.after): Stretch => {
  const out: Stretch = { last: s.last, before: s.before, split, degree: s.degree, common, mark: 0, origin: s.origin, via };
  if (after !== undefined) out.after = after;
  return out;
};

/** Whether what came after `a` lets no later member add less than after `b` (a longer gap, a lead that covers b's). */
function afterNoBetter(a: After | undefined, b: After | undefined): boolean {
  if (a === b || b === undefined) return true;
  if (a === undefined) return false;
  return a.gap >= b.gap && (a.lead === b.lead || (a.lead !== null && b.lead !== null && covers(a.lead, b.lead)));
}

/**
 * For the stretches begun before a group (`origin` at most `began`), by origin: the sum over the paths
 * through the group of the most ways a stretch of that origin splits in on that path, counting only
 * paths that can match the same text as the path of the most (their common characters meet), over
 * that most, rounded (a path of lower degree adds nothing); only those above 1.
 */
function pathFactors(paths: Stretch[][], began: number): Map<number, number> {
  /** By origin, the stretch of the most ways on each path (in path order; a path without one has none). */
  const most = new Map<number, Stretch[]>();
  for (const path of paths) {
    const mark = ++merges;
    for (const c of path) {
      if (c.origin > began) continue;
      const each = most.get(c.origin);
      if (each === undefined) most.set(c.origin, [c]);
      else if (each[0]?.mark !== mark) each.unshift(c);
      else if (stretchCost(c) > stretchCost(each[0])) each[0] = c;
      c.mark = mark;
    }
  }
  const factors = new Map<number, number>();
  for (const [origin, each] of most) {
    if (each.length < 2) continue;
    let top = each[0] as Stretch;
    for (const c of each) if (stretchCost(c) > stretchCost(top)) top = c;
    let sum = 0;
    for (const c of each) if (overlaps(c.common, top.common)) sum += stretchCost(c);
    const k = Math.round(sum / stretchCost(top));
    if (k > 1) factors.set(origin, k);
  }
  return factors;
}

/** Where a sequence tried at many positions starts: a member of the stretch it begins (said apart by its empty source). */
export const START: Term = { atom: { kind: 'set', set: ANY }, min: 0, max: Infinity, src: '' };

let merges = 0;

/**
 * The stretches of several paths (each the first one's, some ended, some changed, a few more), without
 * those another one outdoes (see add).
 */
function undominated(paths: Stretch[][]): Stretch[] {
  if (paths.length === 1) return paths[0] as Stretch[];
  const mark = ++merges;
  const out = (paths[0] as Stretch[]).slice();
  for (const s of out) s.mark = mark;
  for (let k = 1; k < paths.length; k++) {
    for (const s of paths[k] as Stretch[]) {
      if (s.mark === mark) continue;
      s.mark = mark;
      add(out, s);
    }
  }
  return out;
}

/**
 * Adds `s` to `open` (in place) unless one there outdoes it, and drops those it outdoes: one outdoes
 * another with the same last member when it splits in at least as many ways and has every common
 * character (it goes on wherever the other would, and splits more).
 */
function add(open: Stretch[], s: Stretch): void {
  const cost = stretchCost(s);
  let kept = 0;
  for (const o of open) {
    if (o.last === s.last) {
      if (stretchCost(o) >= cost && covers(o.common, s.common) && afterNoBetter(o.after, s.after)) return;
      if (cost >= stretchCost(o) && covers(s.common, o.common) && afterNoBetter(s.after, o.after)) continue;
    }
    open[kept++] = o;
  }
  open.length = kept;
  open.push(s);
}

