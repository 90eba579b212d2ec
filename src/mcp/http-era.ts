// Streamable HTTP: which revision a POST speaks, and the 2026-07-28 request headers (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name) checked against the body. Pure: header values and the parsed body in.
import { isExactId, isRecord, isResponseShaped, type ErrorResponse, type JsonRpcId } from '../jsonrpc/message.js';
import type { Reply } from './exchange.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { declaredVersion, headerMismatch, unsupportedVersion } from './modern.js';
import { ASSUMED_PROTOCOL_VERSION, isModern, isServed } from './protocol.js';

/** The MCP request headers as received (undefined when absent). */
export interface McpHeaders {
  version?: string;
  method?: string;
  name?: string;
}

export type HttpEra =
  | { era: 'legacy'; version: string }
  | { era: 'modern' }
  | { era: 'reject'; reply: Reply };

/** Methods whose Mcp-Name header mirrors a body field, and that field. */
const NAME_SOURCE: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

const SAFE_VALUE = /^[\t\x20-\x7e]*$/;
const SENTINEL = /^=\?base64\?(.*)\?=$/s;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The id of a single JSON-RPC request body, so errors can echo it; null otherwise. */
export function bodyId(body: unknown): JsonRpcId | null {
  // a response's id names a request of the server's, not one of the client's (classifyReceived)
  if (!isRecord(body) || isResponseShaped(body)) return null;
  const { id } = body;
  return isExactId(id) ? id : null;
}

export { quoteValue } from '../jsonrpc/quote.js';

const isRequest = (body: unknown): body is Record<string, unknown> & { method: string } =>
  isRecord(body) && typeof body.method === 'string' && 'id' in body;

/** A Mcp-Name value with the `=?base64?...?=` sentinel decoded; null when the encoding is broken. */
export function decodeHeaderValue(value: string): string | null {
  const sentinel = SENTINEL.exec(value);
  if (!sentinel) return value;
  const encoded = sentinel[1] ?? '';
  if (!BASE64.test(encoded)) return null;
  try {
    return utf8.decode(Buffer.from(encoded, 'base64'));
  } catch {
    return null;
  }
}

/** Why a modern request's Mcp-Method / Mcp-Name headers do not fit its body; null when they do. */
function headersProblem(headers: McpHeaders, body: Record<string, unknown> & { method: string }): string | null {
  const { method, name } = headers;
  if (method === undefined) return 'the Mcp-Method header is required';
  if (!SAFE_VALUE.test(method)) return 'the Mcp-Method header contains invalid characters';
  if (method !== body.method) return `Mcp-Method header value ${quoteValue(method)} does not match body method ${quoteValue(body.method)}`;
  const field = NAME_SOURCE[body.method];
  if (name !== undefined && !SAFE_VALUE.test(name)) return 'the Mcp-Name header contains invalid characters';
  if (!field) return null;
  if (name === undefined) return `the Mcp-Name header is required for ${body.method}`;
  const decoded = decodeHeaderValue(name);
  if (decoded === null) return 'the Mcp-Name header has a malformed =?base64?...?= value';
  const params = isRecord(body.params) ? body.params : {};
  const source = params[field];
  if (decoded !== source) {
    return `Mcp-Name header value ${quoteValue(decoded)} does not match body params.${field} ${source === undefined ? '(absent)' : quoteValue(source)}`;
  }
  return null;
}

const reject = (error: ErrorResponse): HttpEra => ({ era: 'reject', reply: { status: 400, body: error } });

/** The era object of each served legacy revision, made once (only read by callers). */
const LEGACY = new Map<string, HttpEra>();
function legacy(version: string): HttpEra {
  let era = LEGACY.get(version);
  if (!era) LEGACY.set(version, (era = Object.freeze({ era: 'legacy', version })));
  return era;
}

/**
 * The revision one POST speaks. MCP-Protocol-Version picks it (absent: 2025-03-26, as the 2025
 * revisions allow); a version this server does not serve is -32022, a body whose `_meta` names another
 * version than the header (or names one without the header) is -32020, and a 2026-07-28 request must
 * carry Mcp-Method (and Mcp-Name where the revision requires it) matching its body.
 */
export function selectHttpEra(headers: McpHeaders, body: unknown): HttpEra {
  const id = bodyId(body);
  const header = headers.version?.trim();
  if (header !== undefined && !isServed(header)) return reject(unsupportedVersion(id, header));
  const declared = isRequest(body) ? declaredVersion(body) : undefined;
  if (declared !== undefined) {
    if (header === undefined) {
      return reject(headerMismatch(id, 'the MCP-Protocol-Version header is required (params._meta declares a protocol version)'));
    }
    if (declared !== header) {
      return reject(headerMismatch(id, `MCP-Protocol-Version header value ${quoteValue(header)} does not match params._meta protocol version ${quoteValue(declared)}`));
    }
  }
  const version = header ?? ASSUMED_PROTOCOL_VERSION;
  if (!isModern(version)) return legacy(version);
  if (isRequest(body)) {
    const problem = headersProblem(headers, body);
    if (problem) return reject(headerMismatch(id, problem));
  }
  return MODERN;
}

const MODERN: HttpEra = Object.freeze({ era: 'modern' });
