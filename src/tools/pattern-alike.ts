// Which alternatives of an alternation can start alike, for the rules of pattern-safety.ts: in a group
// repeated without bound two such alternatives split the same text in many ways (`(a|ab)*`), and the
// ways bounded repetitions split a text add up over them instead of the most of any one. Pure.

import { overlaps } from './char-ranges.js';
import type { Alt, Seq, Term } from './regex-structure.js';
import { firstSeq, nullableSeq } from './pattern-terms.js';

/** A term that matches one character of a set, once: compared character by character. */
const plain = (t: Term | undefined): t is Term & { atom: { kind: 'set' } } => t !== undefined && t.min === 1 && t.max === 1 && t.atom.kind === 'set';

/** Whether two alternatives can start the same way: their leading single characters are compared while both have one. */
export function startAlike(a: Seq, b: Seq): boolean {
  for (let i = 0; ; i++) {
    const x = a[i];
    const y = b[i];
    if (!plain(x) || !plain(y)) return overlaps(x ? firstSeq(a.slice(i)) : [], y ? firstSeq(b.slice(i)) : []) || nullableSeq(a.slice(i)) || nullableSeq(b.slice(i));
    if (!overlaps(x.atom.set, y.atom.set)) return false;
  }
}

/**
 * Alternatives (indices) that share a single character at each place before `depth`: `stoppers` have
 * no single character at `depth` (another kind of term there, or none); the others go on, in groups
 * of those whose characters there overlap.
 */
interface Group {
  members: number[];
  stoppers: number[];
}

/**
 * `members` (all with a single character at `depth`) in groups that overlap there, through chains of
 * overlapping ones: alternatives in different groups share no character at `depth`. In order.
 */
function overlapping(alt: Alt, members: number[], depth: number): number[][] {
  const ranges: Array<[number, number, number]> = [];
  for (const x of members) for (const [lo, hi] of ((alt[x] as Seq)[depth] as Term & { atom: { kind: 'set' } }).atom.set) ranges.push([lo, hi, x]);
  ranges.sort((a, b) => a[0] - b[0]);
  const parent = new Map<number, number>(members.map((x) => [x, x]));
  const root = (x: number): number => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r) as number;
    parent.set(x, r);
    return r;
  };
  let reach = -1;
  let last = -1;
  for (const [lo, hi, x] of ranges) {
    if (lo <= reach) parent.set(root(x), root(last));
    if (lo > reach || hi > reach) {
      reach = Math.max(reach, hi);
      last = x;
    }
  }
  const groups = new Map<number, number[]>();
  for (const x of members) {
    const r = root(x);
    const group = groups.get(r);
    if (group) group.push(x);
    else groups.set(r, [x]);
  }
  return [...groups.values()];
}

const alikeCache = new WeakMap<Alt, [number, number] | null>();

/**
 * The first pair (i < j, by i then j) of alternatives of `alt` that can start alike (startAlike), or
 * null: what comparing every pair in that order finds, without comparing them all. startAlike walks
 * two alternatives' leading single characters and says no at the first place both have one and the
 * two share none; so the alternatives are grouped place by place by overlapping characters, and only
 * pairs still together where one of them stops are compared (`^(north|south|east|west)$` compares
 * none; 1,296 two-letter words, a few). Cached.
 */
export function firstAlike(alt: Alt): [number, number] | null {
  let pair = alikeCache.get(alt);
  if (pair !== undefined) return pair;
  pair = null;
  /** Each alternative's groups, one a place, the last the one where it stops or is alone. */
  const paths: Group[][] = alt.map(() => []);
  const stops: boolean[] = alt.map(() => false);
  const work: Array<[number[], number]> = [[alt.map((_, i) => i), 0]];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    const [members, depth] = item;
    const group: Group = { members, stoppers: [] };
    const going: number[] = [];
    for (const x of members) {
      (paths[x] as Group[]).push(group);
      if (plain((alt[x] as Seq)[depth])) going.push(x);
      else {
        group.stoppers.push(x);
        stops[x] = true;
      }
    }
    if (going.length > 1) for (const next of overlapping(alt, going, depth)) if (next.length > 1) work.push([next, depth + 1]);
  }
  for (let i = 0; i < alt.length && pair === null; i++) {
    // the others still together with this one where either stops
    const path = paths[i] as Group[];
    const others: number[] = [];
    path.forEach((g, k) => others.push(...(k === path.length - 1 && stops[i] ? g.members : g.stoppers)));
    others.sort((a, b) => a - b);
    for (const j of others) {
      if (j > i && startAlike(alt[i] as Seq, alt[j] as Seq)) {
        pair = [i, j];
        break;
      }
    }
  }
  alikeCache.set(alt, pair);
  return pair;
}
