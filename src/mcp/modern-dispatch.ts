// One message of protocol 2026-07-28, on any transport: no handshake, the version and client
// capabilities in every request's `_meta`, results marked complete. Tool work goes to the same
// Dispatcher the 2025 revisions use, so a tool behaves the same in both eras.
import { INVALID_REQUEST, METHOD_NOT_FOUND, classifyReceived, errorResponse, isRecord, resultResponse } from '../jsonrpc/message.js';
import type { Dispatcher } from './dispatch.js';
import { cancelledByClient, refusedReply, type Caller, type Reply } from './exchange.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { SUBSCRIPTIONS_FULL, readFilter } from './subscriptions.js';
import { paramHeadersProblem } from './param-headers.js';
import { MODERN_METHODS, headerMismatch, declaredVersion, discoverResult, invalidMeta, metaProblem, complete, toolsListResult, unsupportedVersion } from './modern.js';
import { MODERN_PROTOCOL_VERSION } from './protocol.js';
import { cutText } from '../jsonrpc/quote.js';

/**
 * Answers one 2026-07-28 body. Statuses follow the revision's Streamable HTTP binding (stdio ignores
 * them): unknown method 404, malformed `_meta` and unsupported version 400, success 200.
 */
export async function handleModern(
  dispatcher: Dispatcher,
  body: unknown,
  /** Streamable HTTP: every request header by lower-case name, for the Mcp-Param-* checks. */
  httpHeaders?: Readonly<Record<string, string | undefined>>,
  /** Who sent it, for cancellation (see Caller in dispatch.ts). */
  caller?: Caller,
  /** The length of the text it was parsed from, when known (see Dispatcher.tooDeep). */
  textLength = Infinity,
): Promise<Reply> {
  const tooDeep = dispatcher.tooDeep(body, textLength);
  if (tooDeep) return tooDeep;
  if (Array.isArray(body)) {
    return { status: 400, body: errorResponse(null, INVALID_REQUEST, 'Invalid Request: JSON-RPC batches are not part of protocol 2026-07-28') };
  }
  const message = classifyReceived(body);
  if (message.kind === 'invalid') {
    return { status: 400, body: errorResponse(message.id, INVALID_REQUEST, `Invalid Request: ${message.reason}`) };
  }
  if (message.kind !== 'request') {
    // notifications (notifications/cancelled on stdio) and stray responses: nothing to answer
    await dispatcher.handleMessage(body, caller);
    return { status: 202, body: null };
  }
  const { id, method, params } = message;
  if (!MODERN_METHODS.includes(method)) {
    const hint =
      method === 'initialize' ? ' (initialize belongs to the 2025 revisions; 2026-07-28 has no handshake)'
      : method === 'ping' ? ' (ping was removed in 2026-07-28)'
      : '';
    return { status: 404, body: errorResponse(id, METHOD_NOT_FOUND, `Method not found: ${cutText(method)}${hint}`) };
  }
  const problem = metaProblem(params);
  if (problem) return { status: 400, body: invalidMeta(id, problem) };
  const version = declaredVersion(body) as string;
  if (version !== MODERN_PROTOCOL_VERSION) return { status: 400, body: unsupportedVersion(id, version) };
  if (method === 'tools/call' && httpHeaders) {
    const p = params as Record<string, unknown>;
    const mismatch = paramHeadersProblem(dispatcher.listedInputSchema(p.name), p.arguments, httpHeaders);
    if (mismatch) return { status: 400, body: headerMismatch(id, mismatch) };
  }
  if (method === 'subscriptions/listen') return listen(dispatcher, id, params as Record<string, unknown>, caller);
  const { serverInfo, instructions, cache } = dispatcher.describe();
  if (method === 'server/discover') {
    dispatcher.logDiscover((params as Record<string, unknown>)._meta);
    return { status: 200, body: resultResponse(id, discoverResult(serverInfo, instructions, cache)) };
  }
  const response = await dispatcher.handleMessage(body, caller);
  /* c8 ignore next */
  if (!response) return { status: 202, body: null };
  if ('error' in response) {
    return refusedReply(response) ?? { status: 200, body: response };
  }
  const result = isRecord(response.result) ? response.result : {};
  const finished = method === 'tools/list' ? toolsListResult(result, serverInfo, cache) : complete(result, serverInfo);
  return cancelledByClient(response) ? { status: 200, body: resultResponse(id, finished), cancelled: true } : { status: 200, body: resultResponse(id, finished) };
}

/**
 * subscriptions/listen: the transport takes the request over as a stream that stays open, starting
 * with the acknowledgement. Nothing is answered until the server ends it (completeAll at shutdown);
 * a client ends it with notifications/cancelled (stdio) or by closing the stream (HTTP).
 */
function listen(dispatcher: Dispatcher, id: JsonRpcId, params: Record<string, unknown>, caller: Caller | undefined): Reply {
  const filter = readFilter(params);
  if ('problem' in filter) return { status: 400, body: invalidMeta(id, filter.problem) };
  const transport = caller?.listen;
  if (!transport) {
    return { status: 400, body: errorResponse(id, INVALID_REQUEST, 'Invalid Request: subscriptions/listen needs a transport that carries a stream (stdio or Streamable HTTP)') };
  }
  if (transport.problem) return { status: 400, body: errorResponse(id, INVALID_REQUEST, `Invalid Request: ${transport.problem}`) };
  const key = transport.key(id);
  const client = transport.client();
  const refusal = dispatcher.subscriptions.admit(key, id, client);
  if (refusal) {
    // a full server: a client retrying at once would only be refused again
    return refusal.error.code === SUBSCRIPTIONS_FULL ? { status: 503, body: refusal, headers: { 'retry-after': '10' } } : { status: 400, body: refusal };
  }
  const stream = transport.open(key, id);
  // the transport's own streams refuse only once shutdown began, and then admit() did already
  /* c8 ignore next */
  if (!stream) return { status: 503, body: errorResponse(id, SUBSCRIPTIONS_FULL, 'Service Unavailable: the bridge is shutting down') };
  dispatcher.subscriptions.open(key, id, filter.honoured, stream, client);
  return { status: 200, body: null, streaming: true };
}
