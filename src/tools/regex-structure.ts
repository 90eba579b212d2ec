// A JSON Schema `pattern` read into its structure, for pattern-safety.ts: alternatives, sequences of
// quantified terms, and each term's characters as exact code point ranges (char-ranges.ts; `\p{...}` /
// `\P{...}` are taken as any character). Pure; it never runs the pattern. A pattern it cannot read throws.

import { ANY, DIGIT, DOT, SPACE, WORD, complement, normalize, type Ranges } from './char-ranges.js';

/** Deepest group nesting read; deeper is unreadable (pattern-safety.ts's bound on its own cost). */
export const MAX_GROUP_DEPTH = 64;

export interface Term {
  atom: Atom;
  min: number;
  max: number;
  /** The term as written (atom and quantifier), for messages. */
  src: string;
}
export type Seq = Term[];
/** Alternatives. */
export type Alt = Seq[];
export type Atom =
  | { kind: 'set'; set: Ranges }
  | { kind: 'group'; body: Alt }
  | { kind: 'look'; body: Alt; behind: boolean }
  | { kind: 'assert'; start: boolean }
  | { kind: 'backref' };

class Unreadable extends Error {}

/** Reads a pattern that `new RegExp(pattern, 'u')` took. */
export class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly s: string) {}

  parse(): Alt {
    const alt = this.alternatives();
    if (this.i !== this.s.length) throw new Unreadable(`unexpected ${this.s[this.i]}`);
    return alt;
  }

  private peek(): string | undefined {
    return this.s[this.i];
  }

  private alternatives(): Alt {
    const alt: Alt = [this.sequence()];
    while (this.peek() === '|') {
      this.i++;
      alt.push(this.sequence());
    }
    return alt;
  }

  private sequence(): Seq {
    const seq: Seq = [];
    while (this.i < this.s.length && this.peek() !== '|' && this.peek() !== ')') {
      const start = this.i;
      const atom = this.atom();
      let min = 1;
      let max = 1;
      const q = this.quantifier();
      if (q) [min, max] = q;
      seq.push({ atom, min, max, src: this.s.slice(start, this.i) });
    }
    return seq;
  }

  private quantifier(): [number, number] | null {
    const c = this.peek();
    let q: [number, number] | null = null;
    if (c === '*') q = [0, Infinity];
    else if (c === '+') q = [1, Infinity];
    else if (c === '?') q = [0, 1];
    if (q) this.i++;
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      if (!m) return null;
      this.i += m[0].length;
      const min = Number(m[1]);
      q = [min, m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])];
    } else return null;
    if (this.peek() === '?') this.i++; // lazy: the same backtracking when the match fails
    return q;
  }

  private atom(): Atom {
    const c = this.s[this.i++] as string;
    switch (c) {
      case '^':
        return { kind: 'assert', start: true };
      case '$':
        return { kind: 'assert', start: false };
      case '.':
        return { kind: 'set', set: DOT };
      case '[':
        return { kind: 'set', set: this.classBody() };
      case '(':
        return this.group();
      case '\\':
        return this.escape();
      default: {
        const cp = this.s.codePointAt(this.i - 1) as number;
        if (cp > 0xffff) this.i++;
        return { kind: 'set', set: [[cp, cp]] };
      }
    }
  }

  private group(): Atom {
    let look = false;
    let behind = false;
    if (this.s.startsWith('?:', this.i)) this.i += 2;
    else if (this.s.startsWith('?=', this.i) || this.s.startsWith('?!', this.i)) {
      this.i += 2;
      look = true;
    } else if (this.s.startsWith('?<=', this.i) || this.s.startsWith('?<!', this.i)) {
      this.i += 3;
      look = true;
      behind = true;
    } else if (this.s.startsWith('?<', this.i)) {
      const end = this.s.indexOf('>', this.i);
      if (end < 0) throw new Unreadable('group name');
      this.i = end + 1;
    } else if (this.peek() === '?') throw new Unreadable('group');
    if (++this.depth > MAX_GROUP_DEPTH) throw new Unreadable(`its groups nest deeper than ${MAX_GROUP_DEPTH}`);
    const body = this.alternatives();
    this.depth--;
    if (this.s[this.i++] !== ')') throw new Unreadable('unclosed group');
    return look ? { kind: 'look', body, behind } : { kind: 'group', body };
  }

  private escape(): Atom {
    const c = this.s[this.i] as string;
    const backref = /^(?:[1-9]\d*|k<[^>]*>)/.exec(this.s.slice(this.i));
    if (backref) {
      this.i += backref[0].length;
      return { kind: 'backref' };
    }
    if (c === 'b' || c === 'B') {
      this.i++;
      return { kind: 'assert', start: false };
    }
    return { kind: 'set', set: this.escapeSet(false) };
  }

  /** The characters of an escape after its backslash (in a class, `\b` is a backspace and `\-` a hyphen). */
  private escapeSet(inClass: boolean): Ranges {
    const c = this.s[this.i++] as string;
    switch (c) {
      case 'd':
        return DIGIT;
      case 'D':
        return complement(DIGIT);
      case 'w':
        return WORD;
      case 'W':
        return complement(WORD);
      case 's':
        return SPACE;
      case 'S':
        return complement(SPACE);
      case 'p':
      case 'P': {
        const end = this.s.indexOf('}', this.i);
        if (this.peek() !== '{' || end < 0) throw new Unreadable('property escape');
        this.i = end + 1;
        return ANY;
      }
      case 't':
        return [[9, 9]];
      case 'n':
        return [[10, 10]];
      case 'v':
        return [[11, 11]];
      case 'f':
        return [[12, 12]];
      case 'r':
        return [[13, 13]];
      case '0':
        return [[0, 0]];
      case 'b':
        if (inClass) return [[8, 8]];
        throw new Unreadable('\\b');
      case 'c': {
        const letter = this.s.charCodeAt(this.i++);
        return [[letter % 32, letter % 32]];
      }
      case 'x': {
        const cp = parseInt(this.s.slice(this.i, this.i + 2), 16);
        this.i += 2;
        return [[cp, cp]];
      }
      case 'u': {
        let cp: number;
        if (this.peek() === '{') {
          const end = this.s.indexOf('}', this.i);
          cp = parseInt(this.s.slice(this.i + 1, end), 16);
          this.i = end + 1;
        } else {
          cp = parseInt(this.s.slice(this.i, this.i + 4), 16);
          this.i += 4;
          // a surrogate pair written as two escapes is one character
          if (cp >= 0xd800 && cp <= 0xdbff && this.s.startsWith('\\u', this.i)) {
            const low = parseInt(this.s.slice(this.i + 2, this.i + 6), 16);
            if (low >= 0xdc00 && low <= 0xdfff) {
              this.i += 6;
              cp = (cp - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
            }
          }
        }
        if (Number.isNaN(cp)) throw new Unreadable('\\u');
        return [[cp, cp]];
      }
      default: {
        // a syntax character (or `-` in a class), itself
        const cp = c.codePointAt(0) as number;
        return [[cp, cp]];
      }
    }
  }

  private classBody(): Ranges {
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.i++;
    }
    // normalized once at the end: a class of n characters costs n log n, not n squared
    const set: Ranges = [];
    while (this.peek() !== ']') {
      if (this.i >= this.s.length) throw new Unreadable('unclosed class');
      const lo = this.classAtom();
      if (this.peek() === '-' && this.s[this.i + 1] !== ']' && lo.length === 1 && lo[0]![0] === lo[0]![1]) {
        this.i++;
        const hi = this.classAtom();
        // with the u flag a range's ends are single characters (`[\d-z]` is a syntax error)
        if (hi.length !== 1 || hi[0]![0] !== hi[0]![1]) throw new Unreadable('class range');
        set.push([lo[0]![0], hi[0]![0]]);
        continue;
      }
      set.push(...lo);
    }
    this.i++;
    return negated ? complement(set) : normalize(set);
  }

  private classAtom(): Ranges {
    if (this.peek() === '\\') {
      this.i++;
      return this.escapeSet(true);
    }
    const cp = this.s.codePointAt(this.i) as number;
    this.i += cp > 0xffff ? 2 : 1;
    return [[cp, cp]];
  }
}
