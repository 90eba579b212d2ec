// Which upstream tool definitions the bridge may pass on to its own clients. Pure: a listed tool in,
// the reason it is left out (or null) back.
//
// The bridge re-serves an upstream's tools/list to its clients as it was sent. A definition that
// breaks the MCP Tool schema (a title that is a number, an inputSchema whose type is not "object",
// ...) makes a validating client (the TypeScript SDK parses the whole tools/list result against
// that schema) refuse the whole list, so one bad upstream tool would hide every tool of the bridge.
// And a tool whose `x-mcp-header` annotations break 2026-07-28's rules must be left out of
// tools/list by every Streamable HTTP client, which the bridge is for an HTTP upstream and which
// the bridge's own HTTP clients are. So such a tool is left out here, with a warning naming it and why.
import { isRecord } from '../jsonrpc/message.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { isHeaderToken } from '../mcp/param-headers.js';
import { runnablePattern } from '../tools/schema-pattern.js';

const HEADER_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);
/** Keywords whose values are data, not schemas: an `x-mcp-header` key in them annotates nothing. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['default', 'examples', 'const', 'enum']);
/** Schemas nest at most this deep here (messages are bounded by CC_UPSTREAM_MAX_JSON_DEPTH anyway). */
const MAX_DEPTH = 64;

const kind = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;

/** Why a listed tool (already known to have a name and an object inputSchema) is not passed on; null when it is. */
export function toolDefinitionProblem(tool: Record<string, unknown>): string | null {
  for (const field of ['title', 'description'] as const) {
    if (tool[field] !== undefined && typeof tool[field] !== 'string') return `"${field}" is ${kind(tool[field])}, not a string`;
  }
  for (const field of ['annotations', '_meta'] as const) {
    if (tool[field] !== undefined && !isRecord(tool[field])) return `"${field}" is ${kind(tool[field])}, not an object`;
  }
  if (tool.icons !== undefined && !Array.isArray(tool.icons)) return `"icons" is ${kind(tool.icons)}, not an array`;
  const input = tool.inputSchema as Record<string, unknown>;
  const problem = objectSchemaProblem('inputSchema', input);
  if (problem) return problem;
  if (tool.outputSchema !== undefined) {
    if (!isRecord(tool.outputSchema)) return `"outputSchema" is ${kind(tool.outputSchema)}, not an object`;
    const output = objectSchemaProblem('outputSchema', tool.outputSchema);
    if (output) return output;
  }
  return mcpHeaderProblem(input);
}

/**
 * What the MCP schema asks of inputSchema and outputSchema: type "object", properties an object,
 * required strings. A schema without `type` is let through (servers that send `{}` for "no
 * arguments" exist, and the bridge has always passed them on).
 */
function objectSchemaProblem(field: string, schema: Record<string, unknown>): string | null {
  if (schema.type !== undefined && schema.type !== 'object') return `${field}.type must be "object", got ${quoteValue(schema.type)}`;
  if (schema.properties !== undefined && !isRecord(schema.properties)) return `${field}.properties is ${kind(schema.properties)}, not an object`;
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string'))) {
    return `${field}.required must be an array of strings`;
  }
  return null;
}

/**
 * The first `x-mcp-header` annotation in `schema` that breaks MCP 2026-07-28's rules, or null: it must
 * be an HTTP header-name token, unique without regard to case, on a property of type string, integer
 * or boolean reached from the root through `properties` keys alone.
 */
export function mcpHeaderProblem(schema: Record<string, unknown>): string | null {
  const seen = new Map<string, string>();
  const walk = (node: unknown, path: string, property: boolean, depth: number): string | null => {
    if (depth > MAX_DEPTH) return null;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const problem = walk(node[i], `${path}[${i}]`, false, depth + 1);
        if (problem) return problem;
      }
      return null;
    }
    if (!isRecord(node)) return null;
    if ('x-mcp-header' in node) {
      const name = node['x-mcp-header'];
      const at = `x-mcp-header at ${path}`;
      if (!property) return `${at} is not on a property reached from the root through "properties" keys alone`;
      if (typeof name !== 'string' || !isHeaderToken(name)) return `${at} is not an HTTP header name token`;
      if (typeof node.type !== 'string' || !HEADER_TYPES.has(node.type)) return `${at} annotates a property whose type is not "string", "integer" or "boolean"`;
      const first = seen.get(name.toLowerCase());
      if (first !== undefined) return `${at} repeats the name ${quoteValue(name)} of the one at ${first} (compared without case)`;
      seen.set(name.toLowerCase(), path);
    }
    for (const key of Object.keys(node)) {
      if (key === 'x-mcp-header' || DATA_KEYWORDS.has(key)) continue;
      const value = node[key];
      if (key === 'properties' && isRecord(value)) {
        for (const name of Object.keys(value)) {
          const problem = walk(value[name], `${path}.properties${segment(name)}`, property || depth === 0, depth + 2);
          if (problem) return problem;
        }
      } else {
        const problem = walk(value, `${path}${segment(key)}`, false, depth + 1);
        if (problem) return problem;
      }
    }
    return null;
  };
  return walk(schema, 'inputSchema', false, 0);
}

/** A `patternProperties` key or `pattern` of an upstream schema that the bridge does not run (pattern-safety.ts). */
export interface UnrunPattern {
  keyword: 'patternProperties' | 'pattern';
  /** Where: `inputSchema.properties.opts.patternProperties`, `inputSchema.properties.name.pattern`. */
  at: string;
  pattern: string;
  problem: string;
}

/** A property name in a schema path: `.name`, or quoted and cut (quoteValue) when long or not a plain name. */
const segment = (name: string): string => (/^[\w$-]{1,60}$/.test(name) ? `.${name}` : `[${quoteValue(name)}]`);

/** Longest schema path a warning shows: past it, its start and its end with `...` between. */
const MAX_AT = 200;
const cutAt = (at: string): string => (at.length > MAX_AT ? `${at.slice(0, 60)}...${at.slice(-(MAX_AT - 63))}` : at);

/**
 * Most pattern characters one tools/list page has checked for the unrun-pattern warning: the check
 * takes about 1 to 2 us a character once its code is warm (pattern-safety.ts: a 3,900-character
 * alternation of 1,300 words about 4 ms, best of 15 here; a first check in a process is slower), and a
 * page of CC_UPSTREAM_MAX_MESSAGE_BYTES can hold a thousand 4,000-character patterns: seconds of the
 * event loop in one turn, at every listing (1.5 to 41 s measured when this bound was set; a thousand
 * such alternations 13 s on this machine under load).
 * Past it a pattern is left for the argument check, which checks it when a call first needs it.
 */
export const MAX_LISTED_PATTERN_CHARS = 16_384;

/** What is left of a page's MAX_LISTED_PATTERN_CHARS, and how many patterns were left unchecked past it. */
export interface PatternBudget {
  chars: number;
  skipped: number;
}

/**
 * The `patternProperties` keys and `pattern` values in `schema` that the bridge's argument check would
 * run but does not, because they could backtrack badly (at most `max`): a key only such a pattern could
 * match, or a value it would check, is passed on unchecked. Walks what validate() walks: properties,
 * patternProperties, additionalProperties, items. With `budget`, a pattern longer than what is left of
 * it is not checked here (counted in `skipped`).
 */
export function unrunPatterns(schema: Record<string, unknown>, max = 8, budget?: PatternBudget): UnrunPattern[] {
  const found: UnrunPattern[] = [];
  const check = (pattern: string): RegExp | string | null => {
    if (budget) {
      if (pattern.length > budget.chars) {
        budget.skipped++;
        return null;
      }
      budget.chars -= pattern.length;
    }
    return runnablePattern(pattern);
  };
  const walk = (node: unknown, path: string, depth: number): void => {
    if (depth > MAX_DEPTH || found.length >= max || !isRecord(node)) return;
    if (typeof node.pattern === 'string') {
      const regexp = check(node.pattern);
      if (typeof regexp === 'string') found.push({ keyword: 'pattern', at: cutAt(`${path}.pattern`), pattern: node.pattern, problem: regexp });
    }
    const patterns = node.patternProperties;
    if (isRecord(patterns)) {
      for (const pattern of Object.keys(patterns)) {
        const regexp = check(pattern);
        if (typeof regexp === 'string' && found.length < max) found.push({ keyword: 'patternProperties', at: cutAt(`${path}.patternProperties`), pattern, problem: regexp });
        walk(patterns[pattern], `${path}.patternProperties[${quoteValue(pattern)}]`, depth + 1);
      }
    }
    if (isRecord(node.properties)) for (const name of Object.keys(node.properties)) walk(node.properties[name], `${path}.properties${segment(name)}`, depth + 1);
    walk(node.additionalProperties, `${path}.additionalProperties`, depth + 1);
    walk(node.items, `${path}.items`, depth + 1);
  };
  walk(schema, 'inputSchema', 0);
  return found;
}
