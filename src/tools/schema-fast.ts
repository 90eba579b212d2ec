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
  if (typeof minimum === 'number') checks.push((v) => typeof v !== 'number' || !(v < minimum));
  if (typeof maximum === 'number') checks.push((v) => typeof v !== 'number' || !(v > maximum));
  if (typeof minLength === 'number') {
    checks.push((v) => typeof v !== 'string' || !(v.length < minLength || (v.length < 2 * minLength && codePoints(v) < minLength)));
  }
  if (typeof maxLength === 'number') checks.push((v) => typeof v !== 'string' || !(v.length > maxLength && codePoints(v) > maxLength));

  const items = schema.items;
  if (isPlainObject(items)) {
    const item = compile(items as Schema, depth + 1);
    if (!item) return null;
    checks.push((v) => !Array.isArray(v) || v.every((x) => item(x)));
  }

  const object = objectCheck(schema, depth);
  if (object === null) return null;
  if (object !== undefined) checks.push(object);

  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0] as Check;
  return (v) => {
    for (let i = 0; i < checks.length; i++) if (!(checks[i] as Check)(v)) return false;
    return true;
  };
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

/** What a schema asks of an object value (required, properties, additionalProperties); undefined: nothing; null: not compiled. */
function objectCheck(schema: Schema, depth: number): Check | null | undefined {
  const { required, properties, additionalProperties } = schema;
  const needed = Array.isArray(required) ? required.filter((k): k is string => typeof k === 'string') : [];
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
  return (v) => {
    if (!isPlainObject(v)) return true;
    for (let i = 0; i < needed.length; i++) if (!Object.hasOwn(v, needed[i] as string)) return false;
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      const check = known.get(key) ?? other;
      if (check === true) continue;
      if (check === false || !check(v[key])) return false;
    }
    return true;
  };
}
