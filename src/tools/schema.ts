// The small subset of JSON Schema our tools declare, and a validator for it that names the
// offending argument. Declared schemas stay plain JSON Schema so every client understands them.
import { plural } from '../plural.js';

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

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
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

/**
 * The schema of the first `patternProperties` entry whose pattern matches `key` (an upstream tool
 * may declare them): such a key is not an unknown one. A pattern that is not a valid RegExp matches nothing.
 */
function patternSchema(schema: Schema, key: string): Schema | undefined {
  const patterns = schema.patternProperties;
  if (typeof patterns !== 'object' || patterns === null) return undefined;
  for (const [pattern, sub] of Object.entries(patterns as Record<string, Schema>)) {
    try {
      if (new RegExp(pattern, 'u').test(key)) return typeof sub === 'object' && sub !== null ? sub : {};
    } catch {
      // not a pattern this engine understands
    }
  }
  return undefined;
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

/** Returns null when valid, else a sentence naming the argument and what is wrong. */
export function validate(value: unknown, schema: Schema, path = 'arguments'): string | null {
  if (schema.type !== undefined) {
    const type = schema.type;
    // one type (the common case): no array
    if (typeof type === 'string' ? !matchesType(value, type) : !type.some((t) => matchesType(value, t))) {
      const types = Array.isArray(type) ? type : [type];
      return `${path} must be ${types.map(article).join(' or ')}, got ${article(typeOf(value))}`;
    }
  }
  if (schema.enum && !schema.enum.some((e) => sameJson(e, value))) {
    return `${path} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${path} must be at least ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${path} must be at most ${schema.maximum}`;
  }
  if (typeof value === 'string') {
    // JSON Schema counts characters (code points); value.length counts UTF-16 units, one or two per
    // character, so it settles most cases without counting
    const { minLength, maxLength } = schema;
    if (minLength !== undefined && (value.length < minLength || (value.length < 2 * minLength && codePoints(value) < minLength))) {
      return minLength === 1 ? `${path} must not be empty` : `${path} must be at least ${plural(minLength, 'character')}`;
    }
    if (maxLength !== undefined && value.length > maxLength && codePoints(value) > maxLength) {
      return `${path} must be at most ${plural(maxLength, 'character')}`;
    }
  }
  if (Array.isArray(value) && schema.items) {
    for (let i = 0; i < value.length; i++) {
      const error = validate(value[i], schema.items, `${path}[${i}]`);
      if (error) return error;
    }
  }
  if (typeOf(value) === 'object') {
    const record = value as Record<string, unknown>;
    const nameOf = (key: string) => (path === 'arguments' ? `argument "${key}"` : `${path}.${key}`);
    for (const key of schema.required ?? []) {
      if (!(key in record)) return `${nameOf(key)} is required`;
    }
    for (const [key, item] of Object.entries(record)) {
      const name = nameOf(key);
      const propertySchema = schema.properties?.[key] ?? patternSchema(schema, key);
      if (propertySchema) {
        const error = validate(item, propertySchema, name);
        if (error) return error;
      } else if (schema.additionalProperties === false) {
        const known = Object.keys(schema.properties ?? {});
        return `unknown ${name}${known.length ? `; expected ${known.map((k) => `"${k}"`).join(', ')}` : '; this tool takes no arguments'}`;
      } else if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) {
        const error = validate(item, schema.additionalProperties, name);
        if (error) return error;
      }
    }
  }
  return null;
}
