// A fast "yes" for tool arguments (issue 16): a schema made only of the keywords validate() checks in
// both of its modes (type, properties, required, additionalProperties, items, enum of plain values,
// minimum, maximum, minLength, maxLength; annotations are ignored as validate ignores them) is turned
// once into closures that only say whether a value passes. validate() walks the schema object for
// every keyword at every level (generic property loads on schemas of many shapes, a name string per
// argument): exec-lua's {computerId, code} cost ~2,500 instructions there against ~300 for a probe.
// validate() stays the one authority for refusals: a value the closures refuse is validated again,
// and its answer (the message, or null) is what the caller gets. A schema with any other keyword,
// or a keyword with an odd value, is not compiled: validate() does all the work for it, as before.
import { ENFORCED, codePoints, validate, type Schema } from './schema.js';

type Check = (value: unknown) => boolean;

/**
 * Every schema seen, compiled or `null` (not compilable). Schemas are the tools' own objects, never
 * changed once a tool exists (a reloaded config makes new tools, and so new schemas).
 */
const compiled = new WeakMap<object, Check | null>();

/** The keywords compiled here; any other keyword validate() enforces (ENFORCED) leaves a schema to validate(). */
const COMPILED = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'minimum', 'maximum', 'minLength', 'maxLength']);
const NOT_COMPILED = new Set<string>(ENFORCED.filter((k) => !COMPILED.has(k)));
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean', 'null']);

/** validate(value, schema, path, full, patternMaxChars), answered without validate when the compiled schema accepts. */
export function validateArgs(value: unknown, schema: Schema, path: string, full: boolean, patternMaxChars?: number): string | null {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = compile(schema, 0);
    compiled.set(schema, check);
  }
  if (check !== null && check(value)) return null;
  return validate(value, schema, path, full, patternMaxChars);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The schema as closures, or null when it uses anything not compiled (or nests past 16 levels). */
export function compile(schema: Schema, depth: number): Check | null {
  if (!isPlainObject(schema) || depth > 16) return null;
  for (const key of Object.keys(schema)) if (NOT_COMPILED.has(key)) return null;
  const checks: Check[] = [];

  const type = schema.type;
  if (type !== undefined) {
    if (typeof type === 'string') {
      // a name validate() does not know matches nothing, as there
      checks.push(typeCheck(type));
    } else if (Array.isArray(type)) {
      if (!type.every((t) => typeof t === 'string' && TYPES.has(t))) return null;
      const each = type.map((t) => typeCheck(t as string));
      checks.push((v) => each.some((c) => c(v)));
    }
  }

  const enumList = schema.enum;
  if (Array.isArray(enumList)) {
    // sameJson(e, v) is e === v when e is not an object
    if (enumList.some((e) => typeof e === 'object' && e !== null)) return null;
    checks.push((v) => enumList.includes(v) && !(typeof v === 'number' && Number.isNaN(v)));
  }

  const { minimum, maximum, minLength, maxLength } = schema;
  const min = typeof minimum === 'number' ? minimum : null;
  const max = typeof maximum === 'number' ? maximum : null;
  const minLen = typeof minLength === 'number' ? minLength : null;
  const maxLen = typeof maxLength === 'number' ? maxLength : null;

  const items = schema.items;
  let item: Check | null = null;
  if (isPlainObject(items)) {
    item = compile(items as Schema, depth + 1);
    if (!item) return null;
  }

  const object = objectCheck(schema, depth);
  if (object === null) return null;

  // one type and nothing but that type's own keywords (every bridge tool's argument): one closure, no
  // list of checks to walk (each call of a list's closures costs more than its test)
  if (typeof type === 'string' && !Array.isArray(enumList)) {
    const alone = single(type, min, max, minLen, maxLen, item, object);
    if (alone !== undefined) return alone;
  }

  if (min !== null) checks.push((v) => typeof v !== 'number' || !(v < min));
  if (max !== null) checks.push((v) => typeof v !== 'number' || !(v > max));
  if (minLen !== null) checks.push((v) => typeof v !== 'string' || !tooShort(v, minLen));
  if (maxLen !== null) checks.push((v) => typeof v !== 'string' || !tooLong(v, maxLen));
  if (item !== null) {
    const each = item;
    checks.push((v) => !Array.isArray(v) || v.every((x) => each(x)));
  }
  if (object !== undefined) checks.push((v) => !isPlainObject(v) || object(v));

  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0] as Check;
  return (v) => {
    for (let i = 0; i < checks.length; i++) if (!(checks[i] as Check)(v)) return false;
    return true;
  };
}

/** What minLength refuses (JSON Schema counts code points; most strings are settled by their length). */
const tooShort = (v: string, minLength: number): boolean => v.length < minLength || (v.length < 2 * minLength && codePoints(v) < minLength);
const tooLong = (v: string, maxLength: number): boolean => v.length > maxLength && codePoints(v) > maxLength;

/**
 * The check of a schema with one type and only keywords that apply to that type, as one closure; undefined
 * when another keyword would apply (e.g. minLength on an integer, which passes any integer: the list handles it).
 */
function single(type: string, min: number | null, max: number | null, minLen: number | null, maxLen: number | null, item: Check | null, object: ObjectCheck | undefined): Check | undefined {
  const numeric = min !== null || max !== null;
  const stringy = minLen !== null || maxLen !== null;
  switch (type) {
    case 'string':
      if (numeric || item !== null || object !== undefined) return undefined;
      return (v) => typeof v === 'string' && !(minLen !== null && tooShort(v, minLen)) && !(maxLen !== null && tooLong(v, maxLen));
    case 'integer':
    case 'number': {
      if (stringy || item !== null || object !== undefined) return undefined;
      const integer = type === 'integer';
      return (v) => typeof v === 'number' && (!integer || Number.isInteger(v)) && !(min !== null && v < min) && !(max !== null && v > max);
    }
    case 'object':
      if (numeric || stringy || item !== null) return undefined;
      return object === undefined ? isPlainObject : (v) => isPlainObject(v) && object(v);
    default:
      return undefined;
  }
}

function typeCheck(type: string): Check {
  switch (type) {
    case 'object':
      return isPlainObject;
    case 'array':
      return Array.isArray;
    case 'string':
      return (v) => typeof v === 'string';
    case 'integer':
      return (v) => typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return (v) => typeof v === 'number';
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'null':
      return (v) => v === null;
    default:
      return () => false;
  }
}

/** What a schema asks of an object value, given one (a plain object): required, properties, additionalProperties. */
type ObjectCheck = (v: Record<string, unknown>) => boolean;

/** The ObjectCheck of a schema; undefined: it asks nothing; null: not compiled. */
function objectCheck(schema: Schema, depth: number): ObjectCheck | null | undefined {
  const { required, properties, additionalProperties } = schema;
  const needed = [...new Set(Array.isArray(required) ? required.filter((k): k is string => typeof k === 'string') : [])];
  if (properties !== undefined && !isPlainObject(properties)) {
    // validate() looks keys up in any object (an array too); only plain maps are compiled
    if (typeof properties === 'object' && properties !== null) return null;
  }
  // per key: a check, or true (anything goes: a property schema that is not an object, e.g. `true`)
  const known = new Map<string, Check | true>();
  if (isPlainObject(properties)) {
    for (const key of Object.keys(properties)) {
      const sub = properties[key];
      // a falsy one (null, false, 0, '') is passed over by validate(): the key counts as unknown there
      if (!sub) continue;
      if (typeof sub !== 'object') {
        known.set(key, true);
        continue;
      }
      const check = compile(sub as Schema, depth + 1);
      if (!check) return null;
      known.set(key, check);
    }
  }
  let other: Check | true | false = true;
  if (additionalProperties === false) other = false;
  else if (typeof additionalProperties === 'object' && additionalProperties !== null) {
    const check = compile(additionalProperties as Schema, depth + 1);
    if (!check) return null;
    other = check;
  }
  if (needed.length === 0 && known.size === 0 && other === true) return undefined;
  // the named keys in one list, each with its check and whether it is required: a tool has a handful,
  // and an argument's key (internalised by JSON.parse, as the schema's are) is found by comparing
  // them in turn, cheaper than a Map lookup
  const names = [...known.keys(), ...needed.filter((k) => !known.has(k))];
  const checks = names.map((k) => known.get(k) ?? other);
  const isNeeded = names.map((k) => needed.includes(k));
  const count = names.length;
  const neededCount = needed.length;
  return (v) => {
    let found = 0;
    // own enumerable keys, in order, as validate()'s for-in with Object.hasOwn walks them
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      let j = 0;
      while (j < count && names[j] !== key) j++;
      const check = j < count ? (checks[j] as Check | boolean) : other;
      if (j < count && isNeeded[j]) found++;
      if (check === true) continue;
      if (check === false || !check(v[key])) return false;
    }
    // a required key that is own but not enumerable (never from JSON) still counts, as in validate()
    return found === neededCount || needed.every((k) => Object.hasOwn(v, k));
  };
}
