// Character sets as exact code point ranges (sorted, disjoint, merged lists of [lo, hi]) and the few
// operations the pattern check needs on them: union, complement, overlap, intersection, cover; and
// the sets of the pattern syntax's classes (\d, \w, \s, `.`). Pure.

export type Ranges = Array<[number, number]>;

const MAX_CODE_POINT = 0x10ffff;

/** `ranges` (any order, overlapping, empty ones) sorted, merged and without empty ones. */
export function normalize(ranges: Ranges): Ranges {
  const sorted = ranges.filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export const union = (a: Ranges, b: Ranges): Ranges => (a.length === 0 ? b : b.length === 0 ? a : merge(a, b));

/**
 * normalize([...a, ...b]) for two lists sorted by their start (every list here is: normalized, a
 * complement, a constant or one character), in one pass instead of a sort: a union built up one
 * alternative at a time costs n, not n log n, per step.
 */
function merge(a: Ranges, b: Ranges): Ranges {
  const out: Ranges = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && (a[i] as [number, number])[0] <= (b[j] as [number, number])[0]) ? (a[i++] as [number, number]) : (b[j++] as [number, number]);
    const [lo, hi] = next;
    if (!(lo <= hi)) continue;
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** Every code point not in `ranges`. */
export function complement(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** Whether two normalized (sorted, disjoint) range lists share a code point: one merge pass. */
export function overlaps(a: Ranges, b: Ranges): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [alo, ahi] = a[i] as [number, number];
    const [blo, bhi] = b[j] as [number, number];
    if (alo <= bhi && blo <= ahi) return true;
    if (ahi < bhi) i++;
    else j++;
  }
  return false;
}

/** The code points two normalized range lists share, normalized: one merge pass. */
export function intersect(a: Ranges, b: Ranges): Ranges {
  const out: Ranges = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [alo, ahi] = a[i] as [number, number];
    const [blo, bhi] = b[j] as [number, number];
    const lo = Math.max(alo, blo);
    const hi = Math.min(ahi, bhi);
    if (lo <= hi) out.push([lo, hi]);
    if (ahi < bhi) i++;
    else j++;
  }
  return out;
}

/** Whether every code point of `b` is in `a` (both normalized). */
export const covers = (a: Ranges, b: Ranges): boolean => {
  const both = intersect(a, b);
  return both.length === b.length && both.every(([lo, hi], k) => lo === (b[k] as [number, number])[0] && hi === (b[k] as [number, number])[1]);
};

export const ANY: Ranges = [[0, MAX_CODE_POINT]];
export const DIGIT: Ranges = [[0x30, 0x39]];
export const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
export const SPACE: Ranges = normalize([[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]]);
const LINE_END: Ranges = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
export const DOT = complement(LINE_END);
