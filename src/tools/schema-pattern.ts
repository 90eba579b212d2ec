// A schema `pattern` as the validator (schema.ts) runs it: compiled once (ECMA-262, u flag) and cached,
// not run when pattern-safety.ts refuses it, and for an upstream tool's schema run only where regex
// dialects agree.
import { MAX_PATTERN_LENGTH, patternProblem } from './pattern-safety.js';

const regexps = new Map<string, RegExp | null>();

/** `pattern` compiled as JSON Schema reads it (ECMA-262, Unicode); null when it is not a valid one. Cached. */
export function compilePattern(pattern: string): RegExp | null {
  let compiled = regexps.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, 'u');
    } catch {
      compiled = null;
    }
    // patterns come from the config file and upstream listings; a bound keeps re-listings from growing
    // it, and one longer than the check reads is never kept (1,000 of 4 MB each would be 4 GB)
    if (pattern.length > MAX_PATTERN_LENGTH) return compiled;
    if (regexps.size >= 1000) regexps.clear();
    regexps.set(pattern, compiled);
  }
  return compiled;
}

const runnable = new Map<string, RegExp | string | null>();

/**
 * `pattern` as the validator runs it: the compiled RegExp; or why the bridge does not run it (a
 * string: it could backtrack exponentially, see pattern-safety.ts); or null when it is not valid.
 * Cached, so a call costs one lookup.
 */
export function runnablePattern(pattern: string): RegExp | string | null {
  // never run, so neither compiled nor kept (patternProblem says why)
  if (pattern.length > MAX_PATTERN_LENGTH) return patternProblem(pattern);
  let entry = runnable.get(pattern);
  if (entry === undefined) {
    const compiled = compilePattern(pattern);
    entry = compiled === null ? null : patternProblem(pattern) ?? compiled;
    if (runnable.size >= 1000) runnable.clear();
    runnable.set(pattern, entry);
  }
  return entry;
}

/**
 * Default of MCP_PATTERN_MAX_CHARS: the longest string a `pattern` is run on. JSON Schema patterns are
 * unanchored, and a plausible one such as `[a-z0-9]+\.lua$` backtracks quadratically: measured on
 * this machine, 1,000 characters take ~1 ms, 10,000 ~90 ms, 100,000 ~8.7 s of a blocked event loop.
 */
export const PATTERN_MAX_CHARS = 1000;

/** Printable ASCII only: where the regex dialects upstreams use agree with ECMA-262 on \w, \d, \s, \b, `.` and `$`. */
const PLAIN_TEXT = /^[\x20-\x7e]*$/;

/**
 * An upstream tool's `pattern` on a string argument: run when pattern-safety.ts accepts it (a refused
 * one is warned about once at listing) on a string of at most maxChars characters of printable ASCII;
 * anything else is passed on, the upstream checks it: a longer string, a pattern that is not valid
 * ECMA-262, and other characters, where dialects disagree (\w takes "é" in Python's re and Rust's regex).
 */
export function upstreamPattern(value: string, pattern: string, path: string, maxChars: number): string | null {
  if (!upstreamRuns(value, maxChars)) return null;
  const regexp = upstreamRegexp(pattern);
  return regexp !== null && !regexp.test(value) ? `${path} must match the pattern ${JSON.stringify(pattern)}` : null;
}

/** Whether an upstream's pattern is run on `value` at all: printable ASCII of at most maxChars characters. */
export function upstreamRuns(value: string, maxChars: number): boolean {
  return value.length <= maxChars && PLAIN_TEXT.test(value);
}

/**
 * ECMA-262's own class forms: `[]` matches nothing and `[^]` any character, where Python, Rust, Go
 * and Java read a `]` first in a class as a literal one (`[]x[y]` is one of "]x[y" there).
 */
const ECMA_ONLY_CLASS = /\[\^?\]/;

const upstreamRegexps = new Map<string, RegExp | null>();

/**
 * Most characters of upstream patterns not checked yet that upstreamRegexp checks in one turn of the
 * event loop (one call's arguments). Checking a 4,000-character pattern takes a few milliseconds once
 * the check's code is warm (a 1,300-word alternation about 4 ms, bounded groups written out about 7 ms,
 * best of 15 here) and more on a first check in a process, and an upstream tool's schema can hold a
 * thousand of them (one 4 MB listing): one call naming them all blocked every link and call for
 * seconds (up to 40 s measured when this bound was set; a thousand such alternations 13 s on this
 * machine under load), and again whenever the caches had let them go. Past it a pattern is not run
 * this time (the upstream checks it) and not kept, so a later call checks it.
 */
export const MAX_TURN_PATTERN_CHARS = 16_384;
let turnChars = 0;
let turnEnds = false;

function takeTurnChars(n: number): boolean {
  if (!turnEnds) {
    turnEnds = true;
    setImmediate(() => {
      turnChars = 0;
      turnEnds = false;
    });
  }
  if (turnChars + n > MAX_TURN_PATTERN_CHARS) return false;
  turnChars += n;
  return true;
}

/**
 * An upstream's `pattern` as the bridge runs it: the RegExp when pattern-safety.ts accepts it and the
 * dialects read it alike; null when it is not run (the upstream checks). Cached: one lookup a call.
 */
export function upstreamRegexp(pattern: string): RegExp | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return null;
  let entry = upstreamRegexps.get(pattern);
  if (entry === undefined) {
    if (!runnable.has(pattern) && !takeTurnChars(pattern.length)) return null;
    const regexp = runnablePattern(pattern);
    entry = regexp instanceof RegExp && !ECMA_ONLY_CLASS.test(pattern) ? regexp : null;
    if (upstreamRegexps.size >= 1000) upstreamRegexps.clear();
    upstreamRegexps.set(pattern, entry);
  }
  return entry;
}
