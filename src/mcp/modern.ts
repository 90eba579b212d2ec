// The 2026-07-28 revision over plain values: what a request declares in `_meta`, the revision's
// error codes, and the fields its results carry. No I/O; the dispatcher and transports use it.
import { INVALID_PARAMS, errorResponse, isRecord, type ErrorResponse, type JsonRpcId } from '../jsonrpc/message.js';
import { quoteValue, cutString } from '../jsonrpc/quote.js';
import { SERVED_PROTOCOL_VERSIONS } from './protocol.js';

/** Header and body disagree, or a required MCP header is missing or malformed (HTTP 400). */
export const HEADER_MISMATCH = -32020;
/** The request's protocol version is not served (HTTP 400); data: {supported, requested}. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** Methods the modern revision defines that this tools-only server implements. */
export const MODERN_METHODS: readonly string[] = ['server/discover', 'tools/list', 'tools/call', 'subscriptions/listen'];

export interface ServerInfo {
  name: string;
  title?: string;
  version: string;
}

/** Caching hints on cacheable results (server/discover, tools/list). */
export interface CacheHints {
  ttlMs: number;
  cacheScope: 'public' | 'private';
}

const metaOf = (message: unknown): Record<string, unknown> | undefined => {
  if (!isRecord(message) || !isRecord(message.params)) return undefined;
  const meta = message.params._meta;
  return isRecord(meta) ? meta : undefined;
};

/**
 * The protocol version a message declares in `params._meta`, as sent (any JSON type), or undefined
 * when it declares none: messages of the 2025 revisions never carry this key.
 */
export function declaredVersion(message: unknown): unknown {
  const meta = metaOf(message);
  return meta && META_PROTOCOL_VERSION in meta ? meta[META_PROTOCOL_VERSION] : undefined;
}

/** Why a modern request's params lack the required per-request fields; null when they are complete. */
export function metaProblem(params: unknown): string | null {
  if (!isRecord(params)) return 'params with _meta are required in protocol 2026-07-28';
  const meta = params._meta;
  if (!isRecord(meta)) return 'params._meta is required in protocol 2026-07-28';
  if (typeof meta[META_PROTOCOL_VERSION] !== 'string') return `params._meta["${META_PROTOCOL_VERSION}"] must be a string`;
  if (!isRecord(meta[META_CLIENT_CAPABILITIES])) return `params._meta["${META_CLIENT_CAPABILITIES}"] must be an object`;
  return null;
}

export function invalidMeta(id: JsonRpcId | null, problem: string): ErrorResponse {
  return errorResponse(id, INVALID_PARAMS, `Invalid params: ${problem}`);
}

export function unsupportedVersion(id: JsonRpcId | null, requested: string): ErrorResponse {
  return errorResponse(
    id,
    UNSUPPORTED_PROTOCOL_VERSION,
    `Unsupported protocol version: ${quoteValue(requested)}; this server speaks ${SERVED_PROTOCOL_VERSIONS.join(', ')}`,
    // the client's value, cut: a header may be ~16 KB
    { supported: [...SERVED_PROTOCOL_VERSIONS], requested: cutString(requested) },
  );
}

export function headerMismatch(id: JsonRpcId | null, problem: string): ErrorResponse {
  return errorResponse(id, HEADER_MISMATCH, `Header mismatch: ${problem}`);
}

/** A finished result in this revision: resultType "complete" and the server's identity in `_meta`. */
export function complete(result: Record<string, unknown>, serverInfo: ServerInfo): Record<string, unknown> {
  const meta = isRecord(result._meta) ? result._meta : {};
  return { ...result, resultType: 'complete', _meta: { ...meta, [META_SERVER_INFO]: serverInfo } };
}

export function discoverResult(serverInfo: ServerInfo, instructions: string, hints: CacheHints): Record<string, unknown> {
  return complete(
    // listChanged: a subscriptions/listen with toolsListChanged is told when the tool set changes
    { supportedVersions: [...SERVED_PROTOCOL_VERSIONS], capabilities: { tools: { listChanged: true } }, instructions, ...hints },
    serverInfo,
  );
}

/** tools/list in this revision: the tools by name (code point order, stable for a given set) with caching hints. */
export function toolsListResult(result: Record<string, unknown>, serverInfo: ServerInfo, hints: CacheHints): Record<string, unknown> {
  const tools = Array.isArray(result.tools) ? [...result.tools] : [];
  const nameOf = (tool: unknown) => (isRecord(tool) && typeof tool.name === 'string' ? tool.name : '');
  tools.sort((a, b) => {
    const x = nameOf(a);
    const y = nameOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return complete({ ...result, tools, ...hints }, serverInfo);
}
