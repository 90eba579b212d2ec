// Pure JSON-RPC 2.0 message classification and response builders.

export type JsonRpcId = string | number;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export type Message =
  | { kind: 'request'; id: JsonRpcId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response' }
  | { kind: 'invalid'; id: JsonRpcId | null; reason: string };

export interface ErrorResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  error: { code: number; message: string; data?: unknown };
}

export interface ResultResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: unknown;
}

export type Response = ErrorResponse | ResultResponse;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** An id an answer can carry exactly as it was sent: a string, or a number within 2^53-1 either way. */
export function isExactId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Math.abs(value) <= Number.MAX_SAFE_INTEGER);
}

export function classify(value: unknown): Message {
  if (!isRecord(value)) return { kind: 'invalid', id: null, reason: 'a JSON-RPC message must be an object' };
  const id = isId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };
  if ('method' in value) {
    if (typeof value.method !== 'string') return { kind: 'invalid', id, reason: 'method must be a string' };
    if ('params' in value && !isRecord(value.params) && !Array.isArray(value.params)) {
      return { kind: 'invalid', id, reason: 'params must be an object or an array' };
    }
    if (!('id' in value)) return { kind: 'notification', method: value.method, params: value.params };
    if (!isId(value.id)) return { kind: 'invalid', id: null, reason: 'id must be a string or a number' };
    // JSON numbers are read as doubles: past 2^53-1 the id read is not always the id sent
    // (12345678901234567890 reads as ...567000), and an answer must carry the id sent
    if (typeof value.id === 'number' && Math.abs(value.id) > Number.MAX_SAFE_INTEGER) {
      return { kind: 'invalid', id: null, reason: `a number id beyond ${Number.MAX_SAFE_INTEGER} either way cannot be echoed exactly; send a smaller integer or a string` };
    }
    return { kind: 'request', id: value.id, method: value.method, params: value.params };
  }
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if ((hasResult !== hasError) && 'id' in value && (isId(value.id) || value.id === null)) {
    if (hasError && !(isRecord(value.error) && typeof value.error.code === 'number' && typeof value.error.message === 'string')) {
      return { kind: 'invalid', id, reason: 'error must have a numeric code and a string message' };
    }
    return { kind: 'response' };
  }
  return { kind: 'invalid', id, reason: 'not a request, notification or response' };
}

/** Whether a message has the shape of a response: `result` or `error` and no `method`, well formed or not. */
export function isResponseShaped(value: unknown): boolean {
  return isRecord(value) && !('method' in value) && ('result' in value || 'error' in value);
}

/**
 * A message a server received, classified as classify() does, except that a malformed response keeps
 * no id: its id names a request of the server's, so an error under it would be taken by the client as
 * the answer to its own request with that id (MCP 2025-11-25 and 2026-07-28: an error for a response
 * the server cannot accept has no id).
 */
export function classifyReceived(value: unknown): Message {
  const message = classify(value);
  return message.kind === 'invalid' && message.id !== null && isResponseShaped(value) ? { ...message, id: null } : message;
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): ErrorResponse {
  const error: ErrorResponse['error'] = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', id, error };
}

/**
 * An answer with `id` left out of each error whose request's id could not be read (id null), as the
 * MCP revisions from 2025-11-25 on have it (their schema makes an error's id optional and never null);
 * plain JSON-RPC 2.0 and the earlier revisions send `"id": null`. Anything else is returned as it is.
 */
export function withoutNullIds(body: unknown): unknown {
  if (Array.isArray(body)) return body.some((r) => isRecord(r) && r.id === null) ? body.map(withoutNullIds) : body;
  if (!isRecord(body) || body.id !== null || !('error' in body)) return body;
  return { jsonrpc: body.jsonrpc, error: body.error };
}

export function resultResponse(id: JsonRpcId, result: unknown): ResultResponse {
  return { jsonrpc: '2.0', id, result };
}

/** Thrown by method handlers to answer with a JSON-RPC error. */
export class RpcError extends Error {
  constructor(readonly rpcCode: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = 'RpcError';
  }
}
