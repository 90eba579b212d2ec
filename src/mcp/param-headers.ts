// Streamable HTTP 2026-07-28: tool parameters a tool's inputSchema marks with `x-mcp-header` are
// mirrored by clients into `Mcp-Param-{Name}` headers, and the server must check them against the
// call's arguments. Pure: the listed inputSchema, the arguments and the received headers in.
import { isRecord } from '../jsonrpc/message.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { decodeHeaderValue } from './http-era.js';

export interface ParamHeader {
  /** The `properties` keys leading from the schema root to the annotated parameter. */
  path: string[];
  /** The name part of `Mcp-Param-{name}`. */
  name: string;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** An HTTP field-name token (RFC 9110 tchar), what an x-mcp-header name must be. */
export const isHeaderToken = (name: string): boolean => TOKEN.test(name);
const SAFE_VALUE = /^[\t\x20-\x7e]*$/;
/** A number as decimal text: sign, digits, a fraction, an exponent (no hex, binary, octal or Infinity). */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The `x-mcp-header` annotations reachable through `properties` alone (others are not valid ones). */
export function paramHeaders(schema: unknown, path: string[] = [], found: ParamHeader[] = []): ParamHeader[] {
  if (!isRecord(schema) || !isRecord(schema.properties) || path.length > 32) return found;
  for (const [key, property] of Object.entries(schema.properties)) {
    if (!isRecord(property)) continue;
    const name = property['x-mcp-header'];
    if (typeof name === 'string' && TOKEN.test(name)) found.push({ path: [...path, key], name });
    paramHeaders(property, [...path, key], found);
  }
  return found;
}

function valueAt(args: unknown, path: string[]): unknown {
  let value = args;
  for (const key of path) {
    if (!isRecord(value)) return undefined;
    value = value[key];
  }
  return value;
}

/** How the revision writes a primitive into a header (before any base64 encoding). */
function matches(header: string, value: unknown): boolean {
  if (typeof value === 'string') return header === value;
  if (typeof value === 'boolean') return header === String(value);
  // integers compare as numbers ("42.0" and 42 are equal), written in decimal: JavaScript's Number()
  // also reads "0x2a", "0b101010" and "0o52", which an intermediary routing on the text would not
  if (typeof value === 'number') return DECIMAL.test(header) && Number(header) === value;
  return false;
}

/**
 * Why the Mcp-Param-* headers do not fit the arguments; null when they do. `headers` holds every
 * received header by lower-case name. A parameter without a value (absent or null) needs no header,
 * but one sent anyway is checked like any other: its characters, then its value, which matches no
 * absent value (an intermediary routing on it would act on a value the call does not use).
 */
export function paramHeadersProblem(schema: unknown, args: unknown, headers: Readonly<Record<string, string | undefined>>): string | null {
  for (const { path, name } of paramHeaders(schema)) {
    const value = valueAt(args, path);
    const raw = headers[`mcp-param-${name.toLowerCase()}`];
    const none = value === undefined || value === null;
    if (raw === undefined) {
      if (none) continue;
      return `the Mcp-Param-${name} header is required (arguments.${path.join('.')} has a value)`;
    }
    if (!SAFE_VALUE.test(raw)) return `the Mcp-Param-${name} header contains invalid characters`;
    const decoded = decodeHeaderValue(raw);
    if (decoded === null) return `the Mcp-Param-${name} header has a malformed =?base64?...?= value`;
    if (none || !matches(decoded, value)) {
      const body = value === undefined ? '(absent)' : quoteValue(value);
      return `Mcp-Param-${name} header value ${quoteValue(decoded)} does not match arguments.${path.join('.')} ${body}`;
    }
  }
  return null;
}
