// A pattern's groups repeated a bounded number of times written out as their copies, for a second
// reading by pattern-safety.ts. Its rules count the repetitions of a sequence, where a group repeated
// 2 to MAX_FINITE times is one term: the runs inside it were not counted, so `(?:[^a]+?){2}ab` was
// taken though `[^a]+?[^a]+?ab`, the same pattern, is length^3 and refused, and `^(c{1,10}c*?){2}\W$`
// though written out it splits a text in 100 x length^2 ways. Written out, the same rules see them. Pure.

import { MAX_FINITE } from './pattern-terms.js';
import type { Alt, Atom, Seq, Term } from './regex-structure.js';

/** The quantifier at the end of a term as written, which a copy does not have. */
const QUANTIFIER = /(?:[*+?]|\{\d+(?:,\d*)?\})\??$/;

/** Whether a term inside `alt` can match a varying number of times (what writing out can change). */
function holdsVarying(alt: Alt): boolean {
  return alt.some((seq) => seq.some((t) => t.max > t.min || ((t.atom.kind === 'group' || t.atom.kind === 'look') && holdsVarying(t.atom.body))));
}

/**
 * `alt` with every group repeated 2 to MAX_FINITE times that holds a varying term written out as its
 * `max` copies, each required: a copy of a group with one alternative as its terms (as if written
 * without the group), of one with several as the group matched once. A failing match of X{min,max}
 * tries every split of X written out `max` times first, so what makes those slow makes it slow too
 * (fewer copies are tried after, on top). Null when there is no such group. `terms`: how many terms
 * the written-out pattern has, each copy counted.
 */
export function writtenOut(alt: Alt): { alt: Alt; terms: number } | null {
  const done = new Map<Atom, Atom>();
  const atomOf = (a: Atom): Atom => {
    if (a.kind !== 'group' && a.kind !== 'look') return a;
    let out = done.get(a);
    if (out === undefined) {
      const body = altOf(a.body);
      out = body === a.body ? a : { ...a, body };
      done.set(a, out);
    }
    return out;
  };
  const altOf = (x: Alt): Alt => {
    const out = x.map(seqOf);
    return out.every((seq, i) => seq === x[i]) ? x : out;
  };
  const seqOf = (seq: Seq): Seq => {
    let changed = false;
    const out: Seq = [];
    for (const t of seq) {
      const atom = atomOf(t.atom);
      if (atom.kind === 'group' && t.max >= 2 && t.max <= MAX_FINITE && holdsVarying(atom.body)) {
        changed = true;
        const src = t.src.replace(QUANTIFIER, '');
        for (let i = 0; i < t.max; i++) out.push(...(atom.body.length === 1 ? (atom.body[0] as Seq) : [{ atom, min: 1, max: 1, src } satisfies Term]));
      } else if (atom !== t.atom) {
        changed = true;
        out.push({ ...t, atom });
      } else out.push(t);
    }
    return changed ? out : seq;
  };
  const written = altOf(alt);
  if (written === alt) return null;
  // copies share their atom: counted once per atom, in time linear in the pattern
  const sizes = new Map<Atom, number>();
  const sizeOf = (a: Atom): number => {
    if (a.kind !== 'group' && a.kind !== 'look') return 0;
    let n = sizes.get(a);
    if (n === undefined) {
      n = 0;
      for (const seq of a.body) for (const t of seq) n += 1 + sizeOf(t.atom);
      sizes.set(a, n);
    }
    return n;
  };
  return { alt: written, terms: sizeOf({ kind: 'group', body: written }) };
}
