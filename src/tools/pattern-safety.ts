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
//   ends the pattern (nothing after it can fail: `.*foo.*`); a pattern refused for its runs is read
//   again precisely (pattern-chains.ts: groups matched at most once walked through, so a separator in
//   them ends a run; a run after a repeated group whose end a separator bounds adds nothing) and taken
//   when no two runs are left chained (`^-?\d+(\.\d+)?([eE][+-]?\d+)?$`, `^([\w-]+\.)+[\w-]+$`);
// - bounded repetitions in such a stretch multiply the ways it splits its text (at most MAX_WAYS); a
//   second walk reads stretches through optional items of other characters and into groups matched at
//   most once (`^.{1,10}x{3,10}([^a]*?\w+?)?x{3,10}$`, `\w{2,}(?:-)*\w{3,10}$`);
// - a lookaround's body is matched again at every position it is reached at: after an unbounded
//   repetition or inside an unboundedly repeated group, those positions count as one more repetition
//   for its body's runs (`^(?:(?!a*a*b)a)*$` is length^3);
// - no backreferences (`\1`, `\k<name>`).
// Character sets are exact code point ranges, except `\p{...}` / `\P{...}`, taken as any character.
// A pattern this parser cannot read (it reads every valid `u`-flag RegExp) is refused as well.
// Parts: pattern-terms.ts (what a structure can match), pattern-ways.ts and pattern-chains.ts (how
// many ways a text can split), pattern-rules.ts (the rules above, one construct at a time); this file walks the pattern.

import { cutText as cut } from '../jsonrpc/quote.js';
import { MAX_GROUP_DEPTH, Parser, type Alt, type Term } from './regex-structure.js';
import { MAX_FINITE, repeats, unbounded } from './pattern-terms.js';
import { MAX_CHARS_COUNTED, MAX_WAYS } from './pattern-ways.js';
import { PreciseGaveUp, scanChains } from './pattern-chains.js';
import { repeatedGroupProblem, runProblem, stretchProblem, type Reading, type Where } from './pattern-rules.js';
import { writtenOut } from './pattern-written-out.js';

export { MAX_FINITE, MAX_GROUP_DEPTH, MAX_WAYS };

/**
 * Bounds of the check itself, so that no pattern (an upstream's listing is not trusted) makes it slow:
 * a longer pattern, or one whose groups nest deeper (MAX_GROUP_DEPTH), is not run (checking one of
 * 4,096 characters takes a few milliseconds once the code is warm, more on a first check in a process,
 * once: answers are cached). Real schema patterns are far smaller.
 */
export const MAX_PATTERN_LENGTH = 4096;
/**
 * The string length the precise reading counts the ways of bounded repetitions beside a run for
 * (MAX_CHARS_COUNTED in the first reading): a pattern it takes splits a string of 100,000 characters
 * in at most MAX_WAYS ways, so `^(?:\W{1,10}\w*|.{0,3}){2}-+$` (about 200 x length: 115 ms on
 * 100,000 '-'s and a ',') keeps its refusal, as `^(?:\W{1,10}|.{0,3}){2}-+$` is taken.
 */
export const PRECISE_CHARS_COUNTED = 100_000;
/** Most items (terms, each copy counted) of a pattern with its bounded repeated groups written out (pattern-written-out.ts). */
export const MAX_WRITTEN_OUT_TERMS = MAX_PATTERN_LENGTH;

/**
 * `base`: the degree the text's length already has where `alt` is matched: 1 for an unanchored pattern
 * (every start position), and one more for a lookaround's body at each level where the lookaround can be
 * reached at many positions: after an unbounded repetition (`^a*(?!a*a*b)$`, the a* gives back one
 * character at a time) or inside an unboundedly repeated group (`^(?:(?!a*a*b)a)*$`). A lookaround's
 * body is matched whole at each of them, so its own repetitions multiply: `^(?:(?!(?:(?!a*b)a)*b)a)*$`
 * is length^4 (a minute on 1,000 characters) though every part of it alone is at most length^2.
 * `moved`: an unbounded repetition before this point (or around it) moves where it is matched.
 * `pass`: null for the first walk (runProblem and the group rules); in the second, where stretchProblem
 * is: whether nothing after `alt` can fail (the pattern's or a lookahead's alternatives), and whether
 * `alt` is a group matched at most once, which the sequence around it reads through (not read alone).
 */
function problemIn(alt: Alt, base: number, top: boolean, where: Where, moved: number, reading: Reading, backward = false, pass: StretchPass | null = null): string | null {
  for (const seq of alt) {
    // in the second walk, an alternative of the pattern that starts with ^ is tried at one position
    const at = pass !== null && top && seq[0]?.atom.kind === 'assert' && seq[0].atom.start ? 0 : base;
    const run = pass === null ? runProblem(seq, base, top, where, reading, backward) : pass.inline ? null : stretchProblem(seq, at, pass.ends, where, reading.chars, reading.precise && !backward);
    if (run) {
      if (pass !== null) reading.ways = true;
      return run;
    }
    // a lookbehind is matched from its end: what comes after a term in it is matched first
    const order = backward ? [...seq].reverse() : seq;
    const { prefix } = scanChains(order, false);
    for (let i = 0; i < order.length; i++) {
      const t = order[i] as Term;
      if (t.atom.kind === 'backref') return `${cut(t.src)} is a backreference: matching one can take exponential time, so the bridge runs no pattern with one`;
      if (pass === null && t.atom.kind === 'group' && repeats(t)) {
        const problem = repeatedGroupProblem(t as Term & { atom: { kind: 'group' } });
        if (problem) return problem;
      }
      // how many length-fold ways there are to reach this term: around it, and split before it
      const reached = moved + (prefix[i] as number);
      if (t.atom.kind === 'group') {
        const problem = problemIn(t.atom.body, at, false, where, reached + (unbounded(t) ? 1 : 0), reading, backward, pass && { ends: false, inline: t.max <= 1 });
        if (problem) return problem;
      } else if (t.atom.kind === 'look') {
        const problem = problemIn(t.atom.body, at + reached, false, 'look', 0, reading, t.atom.behind, pass && { ends: !t.atom.behind, inline: false });
        if (problem) return problem;
      }
    }
  }
  return null;
}

/** Every rule over a parsed pattern (`written`: it written out, null when that changes nothing), in `reading`. */
function read(alt: Alt, written: { alt: Alt; terms: number } | null, base: number, reading: Reading): string | null {
  let problem = problemIn(alt, base, true, 'top', 0, reading);
  if (problem === null && written !== null) {
    problem =
      written.terms > MAX_WRITTEN_OUT_TERMS
        ? `written out, its groups repeated a bounded number of times make more than ${MAX_WRITTEN_OUT_TERMS} items, more than the bridge checks`
        : problemIn(written.alt, base, true, 'top', 0, reading);
  }
  // then the ways of stretches read through optional items and groups matched at most once, both readings
  const pass = { ends: true, inline: false };
  if (problem === null) problem = problemIn(alt, base, true, 'top', 0, reading, false, pass) ?? (written === null ? null : problemIn(written.alt, base, true, 'top', 0, reading, false, pass));
  return problem;
}

/** Whether `read` takes the pattern precisely; false too when that reading gives up (MAX_PRECISE_STEPS). */
function readPrecisely(alt: Alt, written: { alt: Alt; terms: number } | null, base: number, reading: Reading): boolean {
  try {
    return read(alt, written, base, reading) === null;
  } catch (err) {
    if (err instanceof PreciseGaveUp) return false;
    throw err;
  }
}

/** Where stretchProblem is, in problemIn's second walk. */
interface StretchPass {
  ends: boolean;
  inline: boolean;
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
    const base = anchored ? 0 : 1;
    // read again with its bounded repeated groups written out: the rules then count the runs inside them
    const written = writtenOut(alt);
    const coarse: Reading = { precise: false, degree: 0, runs: false, steps: 0, chars: MAX_CHARS_COUNTED };
    problem = read(alt, written, base, coarse);
    // refused for its runs, or for the ways of bounded repetitions beside them: taken when the precise
    // reading finds none chained (at most length^1 anywhere) and the ways beside them stay few on strings
    // of PRECISE_CHARS_COUNTED characters
    if (problem !== null && (coarse.runs || coarse.ways === true)) {
      const precise: Reading = { precise: true, degree: 0, runs: false, steps: 0, chars: PRECISE_CHARS_COUNTED };
      if (readPrecisely(alt, written, base, precise) && precise.degree <= 1) problem = null;
    }
  } catch (err) {
    // Unreadable, or anything else (never thrown out of here: a listing or a call would fail with it)
    problem = `the bridge could not read it to check that it cannot backtrack exponentially (${(err as Error).message})`;
  }
  // patterns come from the config file and upstream listings; a bound keeps re-listings from growing it
  if (problems.size >= 1000) problems.clear();
  problems.set(pattern, problem);
  return problem;
}