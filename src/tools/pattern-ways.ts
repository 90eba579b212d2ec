// How many ways a text can split among a pattern's repetitions, for the rules of pattern-safety.ts:
// the ways bounded repetitions (nested: multiplied; alternatives that can start alike: summed) can
// match a stretch, and the longest chain of unbounded repetitions of overlapping characters, each a
// factor of the text's length. Pure; results are cached per parsed term.

import { overlaps, type Alt, type Seq, type Term } from './regex-structure.js';
import { charsAtom, inlined, nullableTerm, unbounded } from './pattern-terms.js';
import { firstAlike } from './pattern-alike.js';

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

/** A chain of unbounded repetitions (see scanChains): its last member, its degree, its members. */
export interface Chain {
  last: Term;
  value: number;
  members: Term[];
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
export function scanChains(terms: Seq, skipLast: boolean, counts: (t: Term) => boolean = unbounded): { prefix: number[]; longest: Chain | null } {
  /** The chains still open (no required item their last cannot take since), in the order they began. */
  const chains: Chain[] = [];
  const prefix: number[] = [];
  let longest: Chain | null = null;
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i] as Term;
    prefix.push(longest?.value ?? 0);
    const w = skipLast && i === terms.length - 1 ? 0 : weight(t, counts);
    const chars = charsAtom(t.atom);
    let before: Chain | null = null;
    if (w > 0) for (const c of chains) if ((before === null || c.value > before.value) && overlaps(charsAtom(c.last.atom), chars)) before = c;
    if (!nullableTerm(t)) {
      // a closed chain is dropped: a long pattern of runs between separators costs its length, not its square
      let open = 0;
      for (const c of chains) if (overlaps(charsAtom(c.last.atom), chars)) chains[open++] = c;
      chains.length = open;
    }
    if (w > 0) {
      const chain: Chain = { last: t, value: (before?.value ?? 0) + w, members: [...(before?.members ?? []), t] };
      chains.push(chain);
      if (longest === null || chain.value > longest.value) longest = chain;
    }
  }
  return { prefix, longest };
}
