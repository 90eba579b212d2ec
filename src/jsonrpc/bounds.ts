// Pure, iterative measures of parsed JSON values. Anything a computer or a client sent passes through
// here before a recursive walk (JSON.stringify, validation, rendering) may touch it: JSON.parse itself
// is iterative and accepts any depth, but the walks that follow overflow the stack somewhere between
// a few thousand levels and ten thousand.
import { plural } from '../plural.js';

/** How deep a parsed value from a computer or a client may nest, unless a caller says otherwise. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

export interface JsonBounds {
  /** Most levels of arrays/objects: a scalar is depth 0, `[]` and `[1]` are depth 1. */
  maxDepth: number;
  /** Most values (containers, keys' values, scalars) counted; Infinity when the byte size is already capped. */
  maxNodes?: number;
}

/** The JSON type name of a value, for error messages that must never echo an untrusted value. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** `jsonType` with its article: "an array", "a string", "null". */
export function aJsonType(value: unknown): string {
  const type = jsonType(value);
  if (type === 'null') return type;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * Why `value` is out of bounds (a sentence fragment such as "nests deeper than 64 levels"), or null
 * when it is within them. Never recurses; stops at the first limit crossed.
 */
export function boundsProblem(value: unknown, bounds: JsonBounds): string | null {
  const maxNodes = bounds.maxNodes ?? Infinity;
  if (maxNodes < 1) return tooMany(maxNodes);
  if (typeof value !== 'object' || value === null) return null;
  const problem = walk(value, bounds.maxDepth, maxNodes);
  // the stacks are shared: keep nothing of this value alive in them (a walk that finds nothing wrong
  // empties them itself; setting a length is a runtime call, so only when one stopped early)
  if (problem !== null) {
    OPEN.length = 0;
    DEPTHS.length = 0;
  }
  return problem;
}

const tooMany = (maxNodes: number) => `holds more than ${plural(maxNodes, 'value')}`;

// containers still to open and their depths, in two flat stacks shared by every walk (a walk never
// yields, so no two overlap): every link frame and every MCP body passes through here, so it
// allocates no object per node, no array of values per object and no stack per call
const OPEN: object[] = [];
const DEPTHS: number[] = [];

function walk(value: object, maxDepth: number, maxNodes: number): string | null {
  const open = OPEN;
  const depths = DEPTHS;
  open.push(value);
  depths.push(1);
  let nodes = 1;
  while (open.length > 0) {
    const v = open.pop() as Record<string, unknown>;
    const depth = depths.pop() as number;
    if (depth > maxDepth) return `nests deeper than ${plural(maxDepth, 'level')}`;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (++nodes > maxNodes) return tooMany(maxNodes);
        const child: unknown = v[i];
        if (typeof child === 'object' && child !== null) {
          open.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in v) {
        if (++nodes > maxNodes) return tooMany(maxNodes);
        const child = v[key];
        if (typeof child === 'object' && child !== null) {
          open.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return null;
}

/** True when `value` is within `bounds`. */
export function withinBounds(value: unknown, bounds: JsonBounds): boolean {
  return boundsProblem(value, bounds) === null;
}
