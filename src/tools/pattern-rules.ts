// The rules of pattern-safety.ts, one construct at a time: a repeated group (repeatedGroupProblem)
// and a sequence's runs of repetitions (runProblem). Each says why a construct can backtrack badly,
// which part is at fault and how to write it instead, or null. The counting they rest on is in
// pattern-ways.ts and pattern-chains.ts, what a structure can match in pattern-terms.ts. Pure.

import { cutText as cut } from '../jsonrpc/quote.js';
import { plural } from '../plural.js';
import { overlaps, union, type Ranges } from './char-ranges.js';
import type { Alt, Seq, Term } from './regex-structure.js';
import { MAX_FINITE, charsAtom, firstAlt, firstAtom, firstSeq, headAlt, inlined, lastAlt, nullableAlt, nullableTerm, tailAlt, unbounded, varies } from './pattern-terms.js';
import { firstAlike } from './pattern-alike.js';
import { CAP, MAX_CHARS_COUNTED, MAX_WAYS, START, members, stretchCost, stretchSplits, ways } from './pattern-ways.js';
import { NOTHING_AFTER, afterTerm, joinsPrecisely, scanChains, separated, type After, type Chain, type Steps } from './pattern-chains.js';

const srcOf = (seq: Seq) => cut(seq.map((t) => t.src).join(''));

/** Every alternation inside `alt` (not inside a lookaround), with its alternatives. */
function* alternations(alt: Alt): Generator<Alt> {
  if (alt.length > 1) yield alt;
  for (const seq of alt) for (const t of seq) if (t.atom.kind === 'group') yield* alternations(t.atom.body);
}

export function repeatedGroupProblem(t: Term & { atom: { kind: 'group' } }): string | null {
  const body = t.atom.body;
  const first = firstAlt(body);
  if (unbounded(t)) {
    if (nullableAlt(body)) return `the repeated group ${cut(t.src)} can match empty text, so its repetitions can split the same text in many ways`;
    for (const alt of alternations(body)) {
      const pair = firstAlike(alt);
      if (pair !== null) {
        const [i, j] = pair;
        return `the repeated group ${cut(t.src)} holds alternatives that can match the same text (${`"${srcOf(alt[i] as Seq)}"`} and ${`"${srcOf(alt[j] as Seq)}"`}); make them start with different characters, or use a character class`;
      }
    }
    if (overlaps(tailAlt(body, false), first)) {
      return `in the repeated group ${cut(t.src)}, a repetition at its end takes characters the group can start with, so where one repetition ends and the next begins is ambiguous; start each repetition with a separator the item cannot contain (^\\w+(\\s\\w+)*$, not ^(\\w+\\s?)*$)`;
    }
    // one repetition's text split two ways inside it: the repetitions multiply those ways (exponential)
    for (const seq of body) {
      const split = longestSplit(inlined(seq));
      if (split !== null && split.value >= 2) {
        return `the repeated group ${cut(t.src)} can match the same text in more than one way (${split.members.map((r) => `"${cut(r.src)}"`).join(' and ')} can share its characters), so its repetitions multiply those ways; put a character the one before cannot match between them`;
      }
    }
    if (overlaps(headAlt(body, false), lastAlt(body))) {
      return `in the repeated group ${cut(t.src)}, a repetition at its start takes characters the group can end with, so where one repetition ends and the next begins is ambiguous; end each repetition with a separator the item cannot contain, or start it with one`;
    }
  } else if (t.max >= 3 && overlaps(tailAlt(body, true), first)) {
    return `in the group ${cut(t.src)}, repeated ${t.max} times, an unbounded repetition at its end takes characters the group can start with, so the repetitions can split the same text in many ways`;
  } else if (t.max >= 3 && overlaps(headAlt(body, true), lastAlt(body))) {
    return `in the group ${cut(t.src)}, repeated ${t.max} times, an unbounded repetition at its start takes characters the group can end with, so the repetitions can split the same text in many ways`;
  }
  return null;
}

/**
 * The longest chain of items that vary (scanChains's `varies`) in `terms`, read in pieces: a sequence is
 * cut before an item when nothing its rest can start with (firstSeq) is a character the items since the
 * last cut can take. Where the rest begins is then the same in every way the sequence matches one text
 * (two ways ending the part before at P1 < P2: the character at P1 starts the rest in one, and the part
 * before takes it in the other), so the ways of the pieces multiply and no chain runs across the cut:
 * `[a-z0-9]+(-[a-z0-9]+)*\.` (a hostname label: every copy of the group begins with the `-` the run
 * cannot take) splits its text one way.
 */
function longestSplit(terms: Seq): Chain | null {
  let longest: Chain | null = null;
  let from = 0;
  let since: Ranges = [];
  for (let i = 0; i <= terms.length; i++) {
    if (i === terms.length || (i > from && !overlaps(since, firstSeq(terms.slice(i))))) {
      const piece = scanChains(terms.slice(from, i), false, varies).longest;
      if (piece !== null && (longest === null || piece.value > longest.value)) longest = piece;
      from = i;
      since = [];
    }
    if (i < terms.length) since = union(since, charsAtom((terms[i] as Term).atom));
  }
  return longest;
}

/**
 * Three unbounded repetitions of overlapping characters in a row (two when unanchored), with between
 * them only optional items or items the repetition before can also take (`.*a.*a.*b`: the a's can be
 * any of the input's). The last item of the whole pattern is not counted when it is such a repetition:
 * nothing after it can fail (`.*foo.*`). Bounded repetitions of overlapping characters in such a
 * stretch multiply the ways it can split its text (`ways`), counted against MAX_WAYS.
 */
export function runProblem(seq: Seq, base: number, last: boolean, where: Where, reading: Reading = { precise: false, degree: 0, runs: false, steps: 0, chars: MAX_CHARS_COUNTED }, backward = false): string | null {
  const anchored = base === 0;
  const longest = scanChains(inlined(seq), last, unbounded, reading.precise ? reading : null, !backward).longest;
  reading.degree = Math.max(reading.degree, (longest?.value ?? 0) + base);
  if (longest !== null && longest.value + base >= 3) {
    reading.runs = true;
    const degree = longest.value + base;
    const which = longest.members.map((r) => `"${cut(r.src)}"`).join(' and ');
    if (longest.members.length === 1 && unbounded(longest.members[0] as Term)) return `${which} is repeated without bound${WHERE[where](base)}, so a failing match tries about length^${degree} steps; ${where === 'look' ? 'move the lookaround where it is tried at one position only (after ^, before any repetition), or ' : ''}bound the repetition (at most ${MAX_FINITE})`;
    return `${which} repeat the same characters with nothing between them that the one before cannot also take${WHERE[where](base)}, so a failing match tries about length^${degree} splits; ${where === 'top' && !anchored ? 'anchor it with ^, or put' : 'put'} a character the one before cannot match between them`;
  }
  let run: Term[] = [];
  /** Bounded repetitions of the stretch, and the ways they split it; the last repetition of either kind. */
  let bounded: Term[] = [];
  let split = 1;
  /** Unbounded repetitions chained with the bounded ones of the stretch. */
  let chained = 0;
  let prevAny: Term | undefined;
  /** Read precisely (forward), what came after the run's last member (see separated in pattern-chains.ts). */
  let after: After = NOTHING_AFTER;
  const separators = reading.precise && !backward;
  const terms = inlined(seq);
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i] as Term;
    const prev = run[run.length - 1];
    const since = after;
    after = afterTerm(after, t);
    // the repetition before can take what this one starts with: where one ends and the next begins is ambiguous
    const joins = prevAny !== undefined && overlaps(charsAtom(prevAny.atom), firstAtom(t.atom));
    if (unbounded(t)) {
      if (last && i === terms.length - 1) break;
      // read precisely, a group goes on from a run that can take what it starts with (as in scanChains)
      const joinsRun = prev !== undefined && (reading.precise ? joinsPrecisely(prev, t) : overlaps(charsAtom(prev.atom), charsAtom(t.atom)));
      // read precisely, a repetition after a group repeated without bound that a separator ends adds no
      // degree (see separated): it takes the group's place in the run, and no factor of the length
      const takesPlace = joinsRun && separators && separated(prev, since, t);
      run = joinsRun ? (takesPlace ? [...run.slice(0, -1), t] : [...run, t]) : [t];
      after = NOTHING_AFTER;
      if (joins) {
        if (!(takesPlace && prevAny === prev)) chained++;
      }
      else {
        bounded = [];
        split = 1;
        chained = 1;
      }
      prevAny = t;
      const degree = run.length + base;
      reading.degree = Math.max(reading.degree, degree);
      if (degree >= 3) {
        reading.runs = true;
        const which = run.map((r) => `"${cut(r.src)}"`).join(' and ');
        if (run.length === 1) return `${which} is repeated without bound${WHERE[where](base)}, so a failing match tries about length^${degree} steps; ${where === 'look' ? 'move the lookaround where it is tried at one position only (after ^, before any repetition), or ' : ''}bound the repetition (at most ${MAX_FINITE})`;
        return `${which} repeat the same characters with nothing between them that the one before cannot also take${WHERE[where](base)}, so a failing match tries about length^${degree} splits; ${where === 'top' && !anchored ? 'anchor it with ^, or put' : 'put'} a character the one before cannot match between them`;
      }
    } else if (ways(t) > 1) {
      if (joins) {
        bounded.push(t);
        split = Math.min(split * ways(t), CAP);
      } else {
        bounded = [t];
        split = ways(t);
        chained = 0;
        if (!nullableTerm(t) && !(prev && overlaps(charsAtom(prev.atom), charsAtom(t.atom)))) run = [];
      }
      prevAny = t;
    } else if (!nullableTerm(t) && !(prev && overlaps(charsAtom(prev.atom), charsAtom(t.atom)))) {
      run = [];
      if (!joins) {
        bounded = [];
        split = 1;
        chained = 0;
        prevAny = undefined;
      }
    }
    if (bounded.length > 0 && split * reading.chars ** (chained + base) > MAX_WAYS) {
      reading.ways = true;
      return waysMessage(bounded, split, chained, base, where);
    }
  }
  return null;
}

/**
 * runProblem's count of the ways bounded repetitions split a stretch, over stretches read through
 * optional items and groups matched at most once (stretchSplits): `\w{2,}-*\w{3,10}$` (unanchored:
 * 8 x length^2 ways, as `\w{2,}\w{3,10}$`) and `^.{1,10}x{3,10}([^a]*?\w+?)?x{3,10}$` (640 x length^2:
 * 2 s on 1,000 x's and a '!'). Checked after every other rule, so a pattern refused by one keeps its message.
 */
export function stretchProblem(seq: Seq, base: number, ends: boolean, where: Where, chars = MAX_CHARS_COUNTED, separators = false): string | null {
  const stretch = stretchSplits(seq, base, ends, (s) => s.split > 1 && (chars === MAX_CHARS_COUNTED ? stretchCost(s) : s.split * chars ** s.degree) > MAX_WAYS, separators);
  if (stretch === null) return null;
  // the start positions tried (a member of the stretch when it begins where the sequence does) are said apart
  const all = members(stretch);
  const start = all[0] === START ? base : 0;
  const bounded = [...all.filter((t) => t !== START && !unbounded(t)), ...stretch.via];
  return waysMessage(bounded.length > 0 ? bounded : all.filter((t) => t !== START), stretch.split, stretch.degree - start, start, where);
}

/** Why bounded repetitions (`bounded`, splitting a text `split` ways) with `chained` unbounded ones beside them are refused. */
function waysMessage(bounded: Term[], split: number, chained: number, base: number, where: Where): string {
  const power = chained + base;
  const which = bounded.map((r) => `"${cut(r.src)}"`).join(' and ');
  const more = chained > 0 ? ` with ${plural(chained, 'unbounded repetition')} beside ${bounded.length === 1 ? 'it' : 'them'}` : '';
  return `${which}${more} can split the same text in ${split >= CAP ? 'more than 10^18' : `about ${split.toPrecision(2)}`} ways${power > 0 ? ` times length^${power}` : ''}${where === 'top' ? (base === 0 ? '' : ' (an unanchored pattern tries every start position)') : WHERE[where](base)}, and a failing match tries every one; write fewer nested or adjacent repetitions of the same characters, or put a character the one before cannot match between them`;
}

/**
 * How runProblem reads the runs of a pattern, and what it found: `precise` (see scanChains) or not;
 * the highest degree of a run it counted (`degree`: its chain and the start positions), and whether it
 * refused one (`runs`); the steps its precise reading has taken (pattern-chains.ts's MAX_PRECISE_STEPS);
 * the string length the ways of bounded repetitions beside unbounded ones are counted for (`chars`:
 * MAX_CHARS_COUNTED, or PRECISE_CHARS_COUNTED for a pattern the precise reading is to take).
 */
export interface Reading extends Steps {
  precise: boolean;
  chars: number;
  degree: number;
  runs: boolean;
  /** Whether it refused the ways of bounded repetitions beside unbounded ones (runProblem, stretchProblem). */
  ways?: boolean;
}

/**
 * Where a sequence is checked: the pattern itself, or the body of a lookaround (`(?=...)`, `(?!...)`,
 * `(?<=...)`, `(?<!...)`), which is matched again at every position it is reached at.
 */
export type Where = 'top' | 'look';
const WHERE: Record<Where, (base: number) => string> = {
  top: (base) => (base === 0 ? '' : ', in an unanchored pattern (every start position is tried)'),
  look: (base) => (base === 0 ? ', in a lookaround' : `, in a lookaround tried again at each of about length${base > 1 ? `^${base}` : ''} positions`),
};
