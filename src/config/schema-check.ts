// A config Lua tool's inputSchema may use only what the bridge enforces (ENFORCED in
// src/tools/schema.ts) and annotations: any other keyword (oneOf, $ref, if, format ...) would be
// shown to clients but not checked, so the file is refused, naming each keyword's JSON path.
import { isRecord } from '../jsonrpc/message.js';
import { ENFORCED } from '../tools/schema.js';
import { compilePattern } from '../tools/schema-pattern.js';
import { patternProblem } from '../tools/pattern-safety.js';
import { key, kind, type Check } from './checks.js';
import { isHeaderToken } from '../mcp/param-headers.js';

/** Keywords that describe and constrain nothing (x-mcp-header: mirrored into a header, checked by the HTTP surface). */
export const ANNOTATIONS = ['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$schema', 'x-mcp-header'];

const TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean', 'null'];
const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'];
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
/** Deepest sub-schema nesting checked; deeper is refused (it would only be a stack to blow). */
export const MAX_SCHEMA_DEPTH = 32;

const refused = (k: string) =>
  k === 'format'
    ? '"format" is not enforced by the bridge (JSON Schema treats it as an annotation); constrain the text with "pattern", or say it in "description"'
    : `"${k}" is not enforced by the bridge, so a Lua tool's inputSchema cannot use it; enforced: ${ENFORCED.join(', ')}; annotations: ${ANNOTATIONS.join(', ')}`;

function pattern(value: unknown, path: string, fail: Check, walk: Walk): void {
  if (typeof value !== 'string') fail(`must be a string (a regular expression), got ${kind(value)}`, path);
  else if (!compilePattern(value)) fail('is not a valid regular expression (JavaScript, with the u flag)', path);
  else {
    // run on every call's argument: one that backtracks exponentially would block the bridge for every caller
    const problem = patternProblem(value);
    const owner = walk.tool === undefined ? '' : ` of tool ${JSON.stringify(walk.tool)}`;
    if (problem) fail(`the pattern ${JSON.stringify(value)}${owner} could take exponential time on a crafted argument, blocking the bridge: ${problem}`, path);
  }
}

/** Where a sub-schema sits: its depth, whether a chain of `properties` keys alone leads to it, and the x-mcp-header names seen. */
interface Walk {
  depth: number;
  /** The root, or reached from it through `properties` keys only (2026-07-28: x-mcp-header may annotate such a property). */
  property: boolean;
  /** Lower-cased x-mcp-header name -> the JSON path that declared it first. */
  headers: Map<string, string>;
  /** The tool whose inputSchema this is, for messages. */
  tool?: string;
}

const HEADER_TYPES = ['string', 'integer', 'boolean'];

/**
 * MCP 2026-07-28 clients must drop a tool whose x-mcp-header breaks the revision's rules, so such a
 * Lua tool would vanish from their tools/list: refuse it at load instead.
 */
function mcpHeader(value: unknown, schema: Record<string, unknown>, path: string, fail: Check, walk: Walk): void {
  const at = key(path, 'x-mcp-header');
  if (!walk.property || walk.depth === 0) {
    fail('may only annotate a property reached from the root through "properties" keys alone (not items, additionalProperties, patternProperties or the root)', at);
  } else if (typeof value !== 'string' || !isHeaderToken(value)) {
    fail(`must be an HTTP header name token (letters, digits and !#$%&'*+-.^_\`|~), got ${typeof value === 'string' ? JSON.stringify(value) : kind(value)}`, at);
  } else if (typeof schema.type !== 'string' || !HEADER_TYPES.includes(schema.type)) {
    fail(`may only annotate a property of type "string", "integer" or "boolean" (one type; not "number"), got ${JSON.stringify(schema.type)}`, at);
  } else {
    const first = walk.headers.get(value.toLowerCase());
    if (first !== undefined) fail(`"${value}" is already used by ${first} (names are compared without case)`, at);
    else walk.headers.set(value.toLowerCase(), at);
  }
}

function keyword(k: string, value: unknown, path: string, fail: Check, walk: Walk): void {
  const { depth } = walk;
  const inner = (property: boolean): Walk => ({ depth: depth + 1, property: property && walk.property, headers: walk.headers, tool: walk.tool });
  const at = key(path, k);
  if (COUNTS.includes(k)) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(`must be a whole number >= 0, got ${JSON.stringify(value)}`, at);
  } else if (BOUNDS.includes(k)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      fail(`must be a number${typeof value === 'boolean' ? ' (the 2020-12 form; draft-04 true/false is not supported)' : `, got ${kind(value)}`}`, at);
    }
  } else if (k === 'multipleOf') {
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) fail(`must be a number > 0, got ${JSON.stringify(value)}`, at);
  } else if (k === 'uniqueItems') {
    if (typeof value !== 'boolean') fail(`must be true or false, got ${kind(value)}`, at);
  } else if (k === 'pattern') {
    pattern(value, at, fail, walk);
  } else if (k === 'type') {
    const types = Array.isArray(value) ? value : [value];
    if (!types.length || types.some((t) => typeof t !== 'string' || !TYPES.includes(t)) || new Set(types).size !== types.length) {
      fail(`must be one of ${TYPES.map((t) => `"${t}"`).join(', ')} or an array of distinct ones`, at);
    }
  } else if (k === 'enum') {
    if (!Array.isArray(value) || !value.length) fail(`must be a non-empty array, got ${Array.isArray(value) ? 'an empty one' : kind(value)}`, at);
  } else if (k === 'required') {
    if (!Array.isArray(value) || !value.every((r) => typeof r === 'string')) fail('must be an array of property names', at);
  } else if (k === 'properties' || k === 'patternProperties') {
    if (!isRecord(value)) {
      fail(`must be an object, got ${kind(value)}`, at);
      return;
    }
    for (const [name, sub] of Object.entries(value)) {
      if (k === 'patternProperties') pattern(name, key(at, name), fail, walk);
      schemaProblems(sub, key(at, name), fail, inner(k === 'properties'));
    }
  } else if (k === 'additionalProperties') {
    if (typeof value !== 'boolean') schemaProblems(value, at, fail, inner(false));
  } else if (k === 'items') {
    if (Array.isArray(value)) fail('must be one schema object (the array form is not enforced)', at);
    else schemaProblems(value, at, fail, inner(false));
  }
  // const: any JSON value
}

/**
 * The JSON Schema dialects a Lua tool's inputSchema may declare in `$schema`: those in which every
 * keyword the bridge enforces or allows means what it means in 2020-12 (MCP's default when `$schema`
 * is absent). draft-04 and older read `exclusiveMinimum`/`exclusiveMaximum` as booleans; MCP asks an
 * unsupported dialect to be refused with an error saying so, not validated as another one.
 */
export const DIALECTS: readonly string[] = [
  'https://json-schema.org/draft/2020-12/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'http://json-schema.org/draft-07/schema',
  'http://json-schema.org/draft-06/schema',
];

/** A `$schema` value with an empty fragment and the http/https difference of the draft URIs dropped. */
const dialectOf = (uri: string): string => uri.replace(/#$/, '').replace(/^https:\/\/json-schema\.org\/draft-0/, 'http://json-schema.org/draft-0');

function dialect(value: unknown, path: string, fail: Check, walk: Walk): void {
  const at = key(path, '$schema');
  // 2020-12 allows $schema only at the root of a schema resource, and these schemas have no $id
  if (walk.depth > 0) fail('may only be at the root of inputSchema (JSON Schema 2020-12 allows $schema only at a schema resource root)', at);
  else if (typeof value !== 'string' || !DIALECTS.includes(dialectOf(value))) {
    fail(`names a JSON Schema dialect the bridge does not support (${typeof value === 'string' ? JSON.stringify(value) : kind(value)}); supported: ${DIALECTS.join(', ')} (2020-12 is the default without "$schema")`, at);
  }
}

/** Reports every keyword of `schema` (and its sub-schemas) the bridge does not enforce, and malformed values. */
export function schemaProblems(schema: unknown, path: string, fail: Check, walk: Walk = { depth: 0, property: true, headers: new Map() }): void {
  if (!isRecord(schema)) {
    fail(`must be a JSON Schema object, got ${kind(schema)}${typeof schema === 'boolean' ? ' (true/false schemas are not supported)' : ''}`, path);
    return;
  }
  if (walk.depth > MAX_SCHEMA_DEPTH) {
    fail(`nests deeper than ${MAX_SCHEMA_DEPTH} schemas`, path);
    return;
  }
  for (const [k, value] of Object.entries(schema)) {
    if ((ENFORCED as readonly string[]).includes(k)) keyword(k, value, path, fail, walk);
    else if (k === 'x-mcp-header') mcpHeader(value, schema, path, fail, walk);
    else if (k === '$schema') dialect(value, path, fail, walk);
    else if (!ANNOTATIONS.includes(k)) fail(refused(k), key(path, k));
  }
}
