// Checks of a parsed JSON value's shape for the config file parser: each failure is reported through
// a Check with the JSON path of the offending value (`$.servers[1].env.PATH`) and what is wrong.
import { isRecord } from '../jsonrpc/message.js';

/** Reports one problem at a JSON path; `count` is how many it has taken so far. */
export interface Check {
  (problem: string, path: string): void;
  readonly count: number;
}

/** A Check that collects into `problems` (its own count, so no parse shares state with another). */
export function collector(problems: Array<{ path: string; message: string }>): Check {
  return Object.defineProperty((message: string, path: string) => void problems.push({ path, message }), 'count', {
    get: () => problems.length,
  }) as Check;
}

/** `path.k`, or `path["k"]` for a key that is not an identifier. */
export const key = (path: string, k: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);

/** What a value is, for messages that never echo it: 'nothing', 'null', 'an array', 'a number' ... */
export function kind(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function unknownKeys(value: Record<string, unknown>, known: string[], path: string, fail: Check): void {
  for (const k of Object.keys(value)) {
    if (!known.includes(k)) fail(`unknown key; expected one of ${known.map((n) => `"${n}"`).join(', ')}`, key(path, k));
  }
}

export function string(value: unknown, path: string, fail: Check, opts: { empty?: boolean } = {}): string | undefined {
  if (typeof value !== 'string') fail(`must be a string, got ${kind(value)}`, path);
  else if (!opts.empty && value.trim() === '') fail('must not be empty', path);
  else return value;
  return undefined;
}

export function stringMap(value: unknown, path: string, fail: Check): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) {
    fail(`must be an object of strings, got ${kind(value)}`, path);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') fail(`must be a string, got ${kind(v)}`, key(path, k));
    else out[k] = v;
  }
  return out;
}

export function list<T>(value: unknown, path: string, fail: Check, item: (v: unknown, p: string, f: Check) => T | undefined): Array<{ item: T; path: string }> {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    fail(`must be an array, got ${kind(value)}`, path);
    return [];
  }
  const out: Array<{ item: T; path: string }> = [];
  value.forEach((v, i) => {
    const parsed = item(v, `${path}[${i}]`, fail);
    if (parsed !== undefined) out.push({ item: parsed, path: `${path}[${i}]` });
  });
  return out;
}

export function duplicates(items: Array<{ value: string; path: string }>, what: string, fail: Check): void {
  const seen = new Map<string, string>();
  for (const { value, path } of items) {
    const first = seen.get(value);
    if (first !== undefined) fail(`${what} ${JSON.stringify(value)} is already used at ${first}`, path);
    else seen.set(value, path);
  }
}
