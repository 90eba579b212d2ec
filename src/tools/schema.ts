// The JSON Schema keywords the bridge enforces on tool arguments, and a validator that names the
// offending argument. Declared schemas stay plain JSON Schema so every client understands them.
// Config-defined Lua tools may use only the keywords listed in ENFORCED (plus annotations); the
// config file parser refuses any other (src/config/schema-check.ts), so none is declared unenforced.
import { canonical } from '../jsonrpc/canonical.js';
import { plural } from '../plural.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { PATTERN_MAX_CHARS, runnablePattern, upstreamPattern, upstreamRegexp, upstreamRuns } from './schema-pattern.js';

export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null' | Array<string>;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  [keyword: string]: unknown;
}

/** Every keyword validate() enforces (with `full`: the whole list; without: the first eleven). */
export const ENFORCED = [
  'type', 'properties', 'required', 'additionalProperties', 'patternProperties', 'items', 'enum',
  'minimum', 'maximum', 'minLength', 'maxLength',
  'const', 'pattern', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
] as const;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: unknown): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** JSON equality (an upstream tool's enum may list objects or arrays): same value, keys in any order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => k in b && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Whether `text` is longer than `max` characters (code points), without counting when it need not. */
const longerThan = (text: string, max: number) => text.length > max && codePoints(text) > max;

/**
 * The schema of the first `patternProperties` entry whose pattern matches `key` (an upstream tool
 * may declare them): such a key is not an unknown one. A pattern that is not a valid RegExp matches
 * nothing, and none is run on a key longer than `maxChars` (it matches nothing either). A pattern the
 * bridge does not run (it could backtrack exponentially; a config tool cannot have one, so it is an
 * upstream's) may match any key: one no other entry matches is taken, unchecked, so the bridge never
 * refuses what the upstream would take.
 */
function patternSchema(schema: Schema, key: string, maxChars: number, full: boolean): Schema | undefined {
  const patterns = schema.patternProperties;
  if (typeof patterns !== 'object' || patterns === null) return undefined;
  if (!full) return upstreamPatternSchema(patterns as Record<string, Schema>, key, maxChars);
  if (longerThan(key, maxChars)) return undefined;
  let unrun = false;
  for (const [pattern, sub] of Object.entries(patterns as Record<string, Schema>)) {
    const regexp = runnablePattern(pattern);
    if (typeof regexp === 'string') unrun = true;
    else if (regexp?.test(key)) return typeof sub === 'object' && sub !== null ? sub : {};
  }
  return unrun ? {} : undefined;
}

/**
 * patternSchema for an upstream's schema: a key its dialect may read otherwise (longer than maxChars,
 * not printable ASCII) or a pattern the bridge does not run (upstreamRegexp: refused, not ECMA-262,
 * read apart by dialects) may match, so such a key is taken unchecked, never refused as unknown.
 */
function upstreamPatternSchema(patterns: Record<string, Schema>, key: string, maxChars: number): Schema | undefined {
  const runs = upstreamRuns(key, maxChars);
  let unrun = false;
  for (const [pattern, sub] of Object.entries(patterns)) {
    const regexp = runs ? upstreamRegexp(pattern) : null;
    if (regexp === null) unrun = true;
    else if (regexp.test(key)) return typeof sub === 'object' && sub !== null ? sub : {};
  }
  return unrun ? {} : undefined;
}

/** Characters (code points) in a string: a surrogate pair is one, a lone surrogate is one too. */
export function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

/**
 * Whether `value` is a whole multiple of `step`. Exact for integers; for fractions (0.1 is not exact
 * in binary) the quotient may be off by rounding, so it counts as whole within 1e-9 of it.
 */
export function isMultipleOf(value: number, step: number): boolean {
  if (Number.isInteger(value) && Number.isInteger(step)) return value % step === 0;
  const quotient = value / step;
  if (!Number.isFinite(quotient)) return false;
  return Math.abs(quotient - Math.round(quotient)) <= 1e-9 * Math.max(1, Math.abs(quotient));
}

/** What the keywords past the first eleven find wrong with a number; null when nothing. */
function numberProblem(value: number, schema: Schema, path: string): string | null {
  const { exclusiveMinimum: low, exclusiveMaximum: high, multipleOf: step } = schema;
  if (typeof low === 'number' && !(value > low)) return `${path} must be greater than ${low}`;
  if (typeof high === 'number' && !(value < high)) return `${path} must be less than ${high}`;
  if (typeof step === 'number' && step > 0 && !isMultipleOf(value, step)) return `${path} must be a multiple of ${step}`;
  return null;
}

function arrayProblem(value: unknown[], schema: Schema, path: string): string | null {
  const { minItems, maxItems } = schema;
  if (isCount(minItems) && value.length < minItems) return `${path} must have at least ${plural(minItems, 'item')}, got ${value.length}`;
  if (isCount(maxItems) && value.length > maxItems) return `${path} must have at most ${plural(maxItems, 'item')}, got ${value.length}`;
  if (schema.uniqueItems === true && value.length > 1) {
    const seen = new Map<string, number>();
    for (let i = 0; i < value.length; i++) {
      const text = canonical(value[i]);
      const first = seen.get(text);
      if (first !== undefined) return `${path} must not repeat an item: ${path}[${i}] equals ${path}[${first}]`;
      seen.set(text, i);
    }
  }
  return null;
}

/** A key a message may show as it is: short, and nothing a reader could take for the message's own text. */
const PLAIN_KEY = /^[\w$@:.+-]{1,60}$/;

/**
 * How a message names `key` of the object at `path`: `argument "name"`, `argument "opts".depth`; a key
 * that is long or holds anything else (spaces, quotes, line breaks: the client chooses it) is quoted and
 * cut (quoteValue): `argument "a b"`, `argument "opts"["x\ny"]`.
 */
function nameOf(path: string, key: string): string {
  if (path === 'arguments') return PLAIN_KEY.test(key) ? `argument "${key}"` : `argument ${quoteValue(key)}`;
  return PLAIN_KEY.test(key) && !key.includes('.') ? `${path}.${key}` : `${path}[${quoteValue(key)}]`;
}

/** Most property names an "unknown argument" message lists. */
const MAX_KNOWN_LISTED = 20;

function objectProblem(record: Record<string, unknown>, schema: Schema, path: string): string | null {
  const { minProperties: min, maxProperties: max } = schema;
  if (!isCount(min) && !isCount(max)) return null;
  const count = Object.keys(record).length;
  const what = (n: number) => (path === 'arguments' ? plural(n, 'argument') : plural(n, 'property', 'properties'));
  if (isCount(min) && count < min) return `${path} must have at least ${what(min)}, got ${count}`;
  if (isCount(max) && count > max) return `${path} must have at most ${what(max)}, got ${count}`;
  return null;
}

/**
 * Returns null when valid, else a sentence naming the argument and what is wrong. `full` enforces
 * every ENFORCED keyword (the bridge's own and config Lua tools' schemas); without it the first
 * eleven and `pattern` where dialects agree (upstreamPattern), for an upstream tool's schema: the
 * upstream checks its own arguments, maybe with another regex dialect or number rounding
 * (`multipleOf`) than ours, so the bridge adds nothing that could refuse arguments it accepts. A
 * malformed keyword value (an upstream's) is skipped.
 * `patternMaxChars` (MCP_PATTERN_MAX_CHARS) bounds the strings a `pattern` is run on.
 */
export function validate(value: unknown, schema: Schema, path = 'arguments', full = true, patternMaxChars = PATTERN_MAX_CHARS): string | null {
  const type = schema.type;
  if (type !== undefined && (typeof type === 'string' || Array.isArray(type))) {
    // one type (the common case): no array
    if (typeof type === 'string' ? !matchesType(value, type) : !type.some((t) => matchesType(value, t))) {
      const types = (Array.isArray(type) ? type : [type]).map(String);
      return `${path} must be ${types.map(article).join(' or ')}, got ${article(typeOf(value))}`;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => sameJson(e, value))) {
    return `${path} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  }
  if (full && schema.const !== undefined && !sameJson(schema.const, value)) return `${path} must be ${JSON.stringify(schema.const)}`;
  if (typeof value === 'number') {
    const { minimum, maximum } = schema;
    if (typeof minimum === 'number' && value < minimum) return `${path} must be at least ${minimum}`;
    if (typeof maximum === 'number' && value > maximum) return `${path} must be at most ${maximum}`;
    const problem = full ? numberProblem(value, schema, path) : null;
    if (problem) return problem;
  }
  if (typeof value === 'string') {
    // JSON Schema counts characters (code points); value.length counts UTF-16 units, one or two per
    // character, so it settles most cases without counting
    const { minLength, maxLength } = schema;
    if (typeof minLength === 'number' && (value.length < minLength || (value.length < 2 * minLength && codePoints(value) < minLength))) {
      return minLength === 1 ? `${path} must not be empty` : `${path} must be at least ${plural(minLength, 'character')}`;
    }
    if (typeof maxLength === 'number' && value.length > maxLength && codePoints(value) > maxLength) {
      return `${path} must be at most ${plural(maxLength, 'character')}`;
    }
    if (!full && typeof schema.pattern === 'string') {
      const problem = upstreamPattern(value, schema.pattern, path, patternMaxChars);
      if (problem) return problem;
    } else if (full && typeof schema.pattern === 'string') {
      // a regex can backtrack for seconds on a long string; nothing longer than the cap is run
      if (longerThan(value, patternMaxChars)) {
        return `${path} is ${plural(codePoints(value), 'character')} long; a "pattern" is checked on at most ${patternMaxChars} (MCP_PATTERN_MAX_CHARS)`;
      }
      const regexp = runnablePattern(schema.pattern);
      // a config tool cannot have such a pattern (refused when the file is read): refused, not skipped
      if (typeof regexp === 'string') return `${path} cannot be checked: the bridge does not run the tool's pattern ${JSON.stringify(schema.pattern)} (${regexp})`;
      if (regexp?.test(value) === false) return `${path} must match the pattern ${JSON.stringify(schema.pattern)}`;
    }
  }
  if (Array.isArray(value)) {
    const problem = full ? arrayProblem(value, schema, path) : null;
    if (problem) return problem;
    const items = schema.items;
    if (typeof items === 'object' && items !== null && !Array.isArray(items)) {
      for (let i = 0; i < value.length; i++) {
        const error = validate(value[i], items, `${path}[${i}]`, full, patternMaxChars);
        if (error) return error;
      }
    }
  }
  if (typeOf(value) === 'object') {
    const record = value as Record<string, unknown>;
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) {
        // own keys only: "toString" is in every object, but only an argument named so is given
        if (typeof key === 'string' && !Object.hasOwn(record, key)) return `${nameOf(path, key)} is required`;
      }
    }
    const problem = full ? objectProblem(record, schema, path) : null;
    if (problem) return problem;
    // own keys in Object.keys' order, without its array (every tool call passes here)
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const item = record[key];
      const name = nameOf(path, key);
      // own keys only: properties.constructor would otherwise be Object, so an argument named
      // "constructor", "toString" or "__proto__" would pass additionalProperties: false
      const properties = schema.properties;
      const propertySchema = (typeof properties === 'object' && properties !== null && Object.hasOwn(properties, key) ? properties[key] : undefined) ?? patternSchema(schema, key, patternMaxChars, full);
      if (propertySchema) {
        if (typeof propertySchema !== 'object') continue;
        const error = validate(item, propertySchema, name, full, patternMaxChars);
        if (error) return error;
      } else if (schema.additionalProperties === false) {
        const known = Object.keys(schema.properties ?? {});
        const listed = known.slice(0, MAX_KNOWN_LISTED).map((k) => quoteValue(k)).join(', ');
        const more = known.length > MAX_KNOWN_LISTED ? ` and ${known.length - MAX_KNOWN_LISTED} more` : '';
        return `unknown ${name}${known.length ? `; expected ${listed}${more}` : '; this tool takes no arguments'}`;
      } else if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) {
        const error = validate(item, schema.additionalProperties, name, full, patternMaxChars);
        if (error) return error;
      }
    }
  }
  return null;
}
