// Which JSON Schema `pattern`s the bridge will run. V8's regex engine backtracks, so a pattern whose
// repetitions can split the same text in many ways takes exponential time on a crafted argument
// (`^(a+)+$` with 30 a's and a '!' blocks the event loop for seconds, every link and call waiting),
// and one with several repetitions of the same characters next to each other takes polynomial time
// (`\w+\w+\w+!` on 1,000 characters: minutes). MCP_PATTERN_MAX_CHARS bounds the string length;
// this bounds the pattern. Pure: a pattern in, the reason it is refused (or null) out.
//
// The check is a conservative reading of the pattern's structure (it never runs it):
// - a group repeated without bound (`*`, `+`, `{n,}`, or more than MAX_FINITE times) may not be able
//   to match empty text, may not hold alternatives that can start alike (`(a|ab)*`), and may not
//   end with a repetition of characters it can also start with (`(\w+\s?)*`: where one repetition
//   ends and the next begins is ambiguous); `^\w+(\s\w+)*$` and `^(/[^/]+)+$` pass;
// - a group repeated a bounded number of times (3 to MAX_FINITE) may not end with an unbounded
//   repetition of characters it can start with (`(a+){10}`: polynomial of degree 9);
// - no more than two unbounded repetitions of overlapping characters may follow each other (only
//   optional items between, or ones the repetition before can take too: `.*a.*a.*b`), counting an
//   unanchored start as one (`\w+\w+!` is refused, `^\w+\w+!` is not) and not counting one that
//   ends the pattern (nothing after it can fail: `.*foo.*`);
// - a lookaround's body is matched again at every position it is reached at: after an unbounded
//   repetition or inside an unboundedly repeated group, those positions count as one more repetition
//   for its body's runs (`^(?:(?!a*a*b)a)*$` is length^3);
// - no backreferences (`\1`, `\k<name>`).
// Character sets are exact code point ranges, except `\p{...}` / `\P{...}`, taken as any character.
// A pattern this parser cannot read (it reads every valid `u`-flag RegExp) is refused as well.

import { cutText as cut } from '../jsonrpc/quote.js';
import { plural } from '../plural.js';
import { ANY, MAX_GROUP_DEPTH, Parser, overlaps, union, type Alt, type Atom, type Ranges, type Seq, type Term } from './regex-structure.js';

/** A bounded repetition above this many times counts as unbounded. */
export const MAX_FINITE = 10;
/**
 * Bounds of the check itself, so that no pattern (an upstream's listing is not trusted) makes it slow:
 * a longer pattern, or one whose groups nest deeper (MAX_GROUP_DEPTH), is not run (checking one of
 * 4,096 characters takes at most tens of milliseconds, once). Real schema patterns are far smaller.
 */
export const MAX_PATTERN_LENGTH = 4096;
export { MAX_GROUP_DEPTH };

const repeats = (t: Term) => t.max > 1;
const unbounded = (t: Term) => t.max > MAX_FINITE;
/** A term that can match more or fewer times: a repetition, or an optional item (`(a|b)?`). */
const varies = (t: Term) => t.max > t.min;

function nullableAlt(alt: Alt): boolean {
  return alt.some(nullableSeq);
}
function nullableSeq(seq: Seq): boolean {
  return seq.every(nullableTerm);
}
function nullableTerm(t: Term): boolean {
  if (t.min === 0) return true;
  const a = t.atom;
  return a.kind === 'group' ? nullableAlt(a.body) : a.kind !== 'set';
}

/** Characters a match can start with. */
function firstAlt(alt: Alt): Ranges {
  return alt.reduce<Ranges>((acc, seq) => union(acc, firstSeq(seq)), []);
}
function firstSeq(seq: Seq): Ranges {
  let acc: Ranges = [];
  for (const t of seq) {
    if (t.max > 0) acc = union(acc, firstAtom(t.atom));
    if (!nullableTerm(t)) break;
  }
  return acc;
}
function firstAtom(a: Atom): Ranges {
  return a.kind === 'set' ? a.set : a.kind === 'group' ? firstAlt(a.body) : a.kind === 'backref' ? ANY : [];
}

/** Every character a match can consume. */
function charsAtom(a: Atom): Ranges {
  if (a.kind === 'set') return a.set;
  if (a.kind === 'group') return a.body.reduce<Ranges>((acc, seq) => seq.reduce<Ranges>((s, t) => union(s, charsAtom(t.atom)), acc), []);
  return a.kind === 'backref' ? ANY : [];
}

/**
 * Characters a repetition can consume at the end of a match (one repeating more than MAX_FINITE times
 * when `onlyUnbounded`): where a following repetition could take over. Items after the repetition
 * that it can also take do not hide it (`[a-z]+.`: where the `.` falls is ambiguous too).
 */
function tailAlt(alt: Alt, onlyUnbounded: boolean): Ranges {
  return alt.reduce<Ranges>((acc, seq) => union(acc, tailSeq(seq, onlyUnbounded)), []);
}
function tailSeq(raw: Seq, onlyUnbounded: boolean): Ranges {
  // a group matched exactly once is read as its items: `(?:a+\w)[ab]` ends with what a+ can take too
  const seq = inlined(raw);
  let acc: Ranges = [];
  /** The characters of each item after this one that cannot match empty text. */
  const after: Ranges[] = [];
  for (let i = seq.length - 1; i >= 0; i--) {
    const t = seq[i] as Term;
    const chars = charsAtom(t.atom);
    const absorbs = after.every((c) => overlaps(c, chars));
    if (absorbs && (onlyUnbounded ? unbounded(t) : varies(t))) acc = union(acc, chars);
    if (after.length === 0 && t.atom.kind === 'group') acc = union(acc, tailAlt(t.atom.body, onlyUnbounded));
    if (nullableTerm(t)) continue;
    if (!absorbs) break;
    after.push(chars);
  }
  return acc;
}

/** Characters a match can end with (firstAlt read from the end). */
function lastAlt(alt: Alt): Ranges {
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
function headAlt(alt: Alt, onlyUnbounded: boolean): Ranges {
  return alt.reduce<Ranges>((acc, seq) => union(acc, headSeq(seq, onlyUnbounded)), []);
}
function headSeq(raw: Seq, onlyUnbounded: boolean): Ranges {
  const seq = inlined(raw);
  let acc: Ranges = [];
  /** The characters of each item before this one that cannot match empty text. */
  const before: Ranges[] = [];
  for (const t of seq) {
    const chars = charsAtom(t.atom);
    const absorbs = before.every((c) => overlaps(c, chars));
    if (absorbs && (onlyUnbounded ? unbounded(t) : varies(t))) acc = union(acc, chars);
    if (before.length === 0 && t.atom.kind === 'group') acc = union(acc, headAlt(t.atom.body, onlyUnbounded));
    if (nullableTerm(t)) continue;
    if (!absorbs) break;
    before.push(chars);
  }
  return acc;
}

/** Whether two alternatives can start the same way: their leading single characters are compared while both have one. */
function startAlike(a: Seq, b: Seq): boolean {
  for (let i = 0; ; i++) {
    const x = a[i];
    const y = b[i];
    const plain = (t: Term | undefined): t is Term & { atom: { kind: 'set' } } => t !== undefined && t.min === 1 && t.max === 1 && t.atom.kind === 'set';
    if (!plain(x) || !plain(y)) return overlaps(x ? firstSeq(a.slice(i)) : [], y ? firstSeq(b.slice(i)) : []) || nullableSeq(a.slice(i)) || nullableSeq(b.slice(i));
    if (!overlaps(x.atom.set, y.atom.set)) return false;
  }
}

const srcOf = (seq: Seq) => cut(seq.map((t) => t.src).join(''));

/** Every alternation inside `alt` (not inside a lookaround), with its alternatives. */
function* alternations(alt: Alt): Generator<Alt> {
  if (alt.length > 1) yield alt;
  for (const seq of alt) for (const t of seq) if (t.atom.kind === 'group') yield* alternations(t.atom.body);
}

function repeatedGroupProblem(t: Term & { atom: { kind: 'group' } }): string | null {
  const body = t.atom.body;
  const first = firstAlt(body);
  if (unbounded(t)) {
    if (nullableAlt(body)) return `the repeated group ${cut(t.src)} can match empty text, so its repetitions can split the same text in many ways`;
    for (const alt of alternations(body)) {
      for (let i = 0; i < alt.length; i++) {
        for (let j = i + 1; j < alt.length; j++) {
          if (startAlike(alt[i] as Seq, alt[j] as Seq)) {
            return `the repeated group ${cut(t.src)} holds alternatives that can match the same text (${`"${srcOf(alt[i] as Seq)}"`} and ${`"${srcOf(alt[j] as Seq)}"`}); make them start with different characters, or use a character class`;
          }
        }
      }
    }
    if (overlaps(tailAlt(body, false), first)) {
      return `in the repeated group ${cut(t.src)}, a repetition at its end takes characters the group can start with, so where one repetition ends and the next begins is ambiguous; start each repetition with a separator the item cannot contain (^\\w+(\\s\\w+)*$, not ^(\\w+\\s?)*$)`;
    }
    // one repetition's text split two ways inside it: the repetitions multiply those ways (exponential)
    for (const seq of body) {
      const split = scanChains(inlined(seq), false, varies).longest;
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

/** `seq` with every group that matches exactly once and has no alternatives written out in place: `(?:a+)(b+)` reads as `a+b+`. */
function inlined(seq: Seq): Seq {
  const out: Seq = [];
  for (const t of seq) {
    if (t.atom.kind === 'group' && t.min === 1 && t.max === 1 && t.atom.body.length === 1) out.push(...inlined(t.atom.body[0] as Seq));
    else out.push(t);
  }
  return out;
}

/**
 * Most ways a failing match may try, counted as (ways the bounded repetitions of a stretch can split
 * its text) x MAX_CHARS_COUNTED^(unbounded repetitions + an unanchored start): about a few
 * milliseconds of backtracking. Bounded repetitions multiply too: `^a{0,10}a{0,10}...a{0,10}$` (eight)
 * or `^((a|a){1,10}){1,10}$` are each well within MAX_FINITE and together took seconds on 40 characters.
 */
export const MAX_WAYS = 1_000_000;
/** The string length the count assumes for an unbounded repetition (MCP_PATTERN_MAX_CHARS's default). */
const MAX_CHARS_COUNTED = 1000;
const CAP = 1e18;

const waysCache = new WeakMap<Term, number>();

/**
 * How many ways one bounded term can match text: (max - min + 1) for a repeated character set; for a
 * group, the ways of its body (summed over alternatives that can start alike, else the most of any
 * one) to the power of each repetition count, summed. 1 for a term that matches one way, and for an
 * unbounded one (its splits count in the degree). Capped.
 */
function ways(t: Term): number {
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
  let alike = false;
  for (let i = 0; i < alt.length && !alike; i++) for (let j = i + 1; j < alt.length && !alike; j++) alike = startAlike(alt[i] as Seq, alt[j] as Seq);
  return alike ? Math.min(each.reduce((a, b) => a + b, 0), CAP) : Math.max(...each);
}

/** A chain of unbounded repetitions (see scanChains): its last member, its degree, its members. */
interface Chain {
  last: Term;
  value: number;
  members: Term[];
  open: boolean;
}

/**
 * How much of a chain a term is: 1 for an unbounded repetition; for a group matched at most once, the
 * longest chain in any of its alternatives (`(?:\w*b*)?` between two `\w` runs carries one on; an
 * alternative's runs count as the group's: `(?:x|\w*a*)`); else 0.
 */
function weight(t: Term, counts: (t: Term) => boolean = unbounded): number {
  if (counts(t)) return 1;
  if (t.max > 1 || t.atom.kind !== 'group') return 0;
  const cache = counts === unbounded ? weightCache : variesCache;
  let w = cache.get(t);
  if (w === undefined) {
    w = t.atom.body.reduce((most, seq) => Math.max(most, scanChains(inlined(seq), false, counts).longest?.value ?? 0), 0);
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
 * length-fold ways the text before it can be split (a lookaround there is matched again for each);
 * `skipLast`: the last term ends the whole pattern (nothing after it can fail) and is not counted.
 */
function scanChains(terms: Seq, skipLast: boolean, counts: (t: Term) => boolean = unbounded): { prefix: number[]; longest: Chain | null } {
  const chains: Chain[] = [];
  const prefix: number[] = [];
  let longest: Chain | null = null;
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i] as Term;
    prefix.push(longest?.value ?? 0);
    const w = skipLast && i === terms.length - 1 ? 0 : weight(t, counts);
    const chars = charsAtom(t.atom);
    let before: Chain | null = null;
    if (w > 0) for (const c of chains) if (c.open && (before === null || c.value > before.value) && overlaps(charsAtom(c.last.atom), chars)) before = c;
    if (!nullableTerm(t)) for (const c of chains) if (c.open && !overlaps(charsAtom(c.last.atom), chars)) c.open = false;
    if (w > 0) {
      const chain: Chain = { last: t, value: (before?.value ?? 0) + w, members: [...(before?.members ?? []), t], open: true };
      chains.push(chain);
      if (longest === null || chain.value > longest.value) longest = chain;
    }
  }
  return { prefix, longest };
}

/**
 * Three unbounded repetitions of overlapping characters in a row (two when unanchored), with between
 * them only optional items or items the repetition before can also take (`.*a.*a.*b`: the a's can be
 * any of the input's). The last item of the whole pattern is not counted when it is such a repetition:
 * nothing after it can fail (`.*foo.*`). Bounded repetitions of overlapping characters in such a
 * stretch multiply the ways it can split its text (`ways`), counted against MAX_WAYS.
 */
function runProblem(seq: Seq, base: number, last: boolean, where: Where): string | null {
  const anchored = base === 0;
  const longest = scanChains(inlined(seq), last).longest;
  if (longest !== null && longest.value + base >= 3) {
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
  const terms = inlined(seq);
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i] as Term;
    const prev = run[run.length - 1];
    // the repetition before can take what this one starts with: where one ends and the next begins is ambiguous
    const joins = prevAny !== undefined && overlaps(charsAtom(prevAny.atom), firstAtom(t.atom));
    if (unbounded(t)) {
      if (last && i === terms.length - 1) break;
      run = prev && overlaps(charsAtom(prev.atom), charsAtom(t.atom)) ? [...run, t] : [t];
      if (joins) chained++;
      else {
        bounded = [];
        split = 1;
        chained = 1;
      }
      prevAny = t;
      const degree = run.length + base;
      if (degree >= 3) {
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
    const power = chained + base;
    if (bounded.length > 0 && split * MAX_CHARS_COUNTED ** power > MAX_WAYS) {
      const which = bounded.map((r) => `"${cut(r.src)}"`).join(' and ');
      const more = chained > 0 ? ` with ${plural(chained, 'unbounded repetition')} beside ${bounded.length === 1 ? 'it' : 'them'}` : '';
      return `${which}${more} can split the same text in ${split >= CAP ? 'more than 10^18' : `about ${split.toPrecision(2)}`} ways${power > 0 ? ` times length^${power}` : ''}${where === 'top' ? (anchored ? '' : ' (an unanchored pattern tries every start position)') : WHERE[where](base)}, and a failing match tries every one; write fewer nested or adjacent repetitions of the same characters, or put a character the one before cannot match between them`;
    }
  }
  return null;
}

/**
 * Where a sequence is checked: the pattern itself, or the body of a lookaround (`(?=...)`, `(?!...)`,
 * `(?<=...)`, `(?<!...)`), which is matched again at every position it is reached at.
 */
type Where = 'top' | 'look';
const WHERE: Record<Where, (base: number) => string> = {
  top: (base) => (base === 0 ? '' : ', in an unanchored pattern (every start position is tried)'),
  look: (base) => (base === 0 ? ', in a lookaround' : `, in a lookaround tried again at each of about length${base > 1 ? `^${base}` : ''} positions`),
};

/**
 * `base`: the degree the text's length already has where `alt` is matched: 1 for an unanchored pattern
 * (every start position), and one more for a lookaround's body at each level where the lookaround can be
 * reached at many positions: after an unbounded repetition (`^a*(?!a*a*b)$`, the a* gives back one
 * character at a time) or inside an unboundedly repeated group (`^(?:(?!a*a*b)a)*$`). A lookaround's
 * body is matched whole at each of them, so its own repetitions multiply: `^(?:(?!(?:(?!a*b)a)*b)a)*$`
 * is length^4 (a minute on 1,000 characters) though every part of it alone is at most length^2.
 * `moved`: an unbounded repetition before this point (or around it) moves where it is matched.
 */
function problemIn(alt: Alt, base: number, top: boolean, where: Where, moved: number, backward = false): string | null {
  for (const seq of alt) {
    const run = runProblem(seq, base, top, where);
    if (run) return run;
    // a lookbehind is matched from its end: what comes after a term in it is matched first
    const order = backward ? [...seq].reverse() : seq;
    const { prefix } = scanChains(order, false);
    for (let i = 0; i < order.length; i++) {
      const t = order[i] as Term;
      if (t.atom.kind === 'backref') return `${cut(t.src)} is a backreference: matching one can take exponential time, so the bridge runs no pattern with one`;
      if (t.atom.kind === 'group' && repeats(t)) {
        const problem = repeatedGroupProblem(t as Term & { atom: { kind: 'group' } });
        if (problem) return problem;
      }
      // how many length-fold ways there are to reach this term: around it, and split before it
      const reached = moved + (prefix[i] as number);
      if (t.atom.kind === 'group') {
        const problem = problemIn(t.atom.body, base, false, where, reached + (unbounded(t) ? 1 : 0), backward);
        if (problem) return problem;
      } else if (t.atom.kind === 'look') {
        const problem = problemIn(t.atom.body, base + reached, false, 'look', 0, t.atom.behind);
        if (problem) return problem;
      }
    }
  }
  return null;
}

const problems = new Map<string, string | null>();

/**
 * Why the bridge will not run `pattern` (a valid `u`-flag RegExp source) on an argument: it can take
 * exponential or high polynomial time on a crafted string. Null when it may run. Cached.
 */
export function patternProblem(pattern: string): string | null {
  let problem = problems.get(pattern);
  if (problem !== undefined) return problem;
  if (pattern.length > MAX_PATTERN_LENGTH) return `it is ${pattern.length} characters long, more than the ${MAX_PATTERN_LENGTH} the bridge checks`;
  try {
    const alt = new Parser(pattern).parse();
    const anchored = alt.every((seq) => seq[0]?.atom.kind === 'assert' && seq[0].atom.start);
    problem = problemIn(alt, anchored ? 0 : 1, true, 'top', 0);
  } catch (err) {
    // Unreadable, or anything else (never thrown out of here: a listing or a call would fail with it)
    problem = `the bridge could not read it to check that it cannot backtrack exponentially (${(err as Error).message})`;
  }
  // patterns come from the config file and upstream listings; a bound keeps re-listings from growing it
  if (problems.size >= 1000) problems.clear();
  problems.set(pattern, problem);
  return problem;
}
