// POST /mcp (and /): JSON-RPC bodies to the dispatcher, JSON answers back (one SSE event when the
// client's Accept takes only text/event-stream). A session id scopes cancellation and the GET /mcp
// stream (get-stream.ts, added by routes.ts). Every revision on one endpoint: MCP-Protocol-Version
// picks 2026-07-28 (src/mcp/modern-dispatch.ts) or a 2025 one.
import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { Dispatcher } from '../mcp/dispatch.js';
import type { Caller } from '../mcp/exchange.js';
import { INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, errorResponse, isExactId, isRecord, isResponseShaped, type Response } from '../jsonrpc/message.js';
import { allowsBatches } from '../mcp/protocol.js';
import { selectHttpEra, type McpHeaders } from '../mcp/http-era.js';
import type { handleModern } from '../mcp/modern-dispatch.js';
import { acceptsEventStream, wantsEventStream } from './accept.js';
import { UNSUPPORTED_MEDIA_HEADERS, contentTypeProblem } from './content-type.js';
import { BodyTooLargeError, readBody, sendJson, sendSseMessage } from './respond.js';
import { forRevision, sendRpc } from './rpc-answer.js';
import type { Handler, Methods } from './router.js';
import { Cancellation } from '../cancel.js';
import { callerScope, issueSessionId, sessionBinding } from './caller-scope.js';
import { rateKey } from './rate-key.js';
import type { openListenStream } from './listen-stream.js';
import { streamClient } from './stream-client.js';
import type { EventStreams } from './event-streams.js';

export interface McpRouteOptions {
  maxBodyBytes: number;
  /** The SSE answers of 2026-07-28 subscriptions/listen (without them, listen over HTTP is refused). */
  listenStreams?: EventStreams;
  /** The 2025 revisions' GET stream is served: initialize over HTTP declares tools.listChanged. */
  listChanged?: boolean;
  /** MCP_AUTH_TOKEN is set: a listen's client is its token (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT). */
  tokens?: boolean;
  /** ToolRegistry.generation: a session id carries the one it was issued at (see caller-scope.ts). */
  toolsGeneration?: () => number;
}

/** 405 for a method /mcp does not serve (DELETE, HEAD ...); `get`: GET /mcp is served (MCP_MAX_GET_STREAMS > 0). */
export function methodNotAllowed(res: ServerResponse, get: boolean): void {
  const message = get
    ? 'Method not allowed: MCP requests are sent with POST; GET opens the 2025 revisions\' event stream'
    : 'Method not allowed: this server speaks MCP over POST only (no GET event stream: MCP_MAX_GET_STREAMS is 0)';
  sendRpc(res, 405, errorResponse(null, INVALID_REQUEST, message), { allow: get ? 'GET, POST' : 'POST' });
}

const headerValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

function mcpHeaders(headers: IncomingHttpHeaders): McpHeaders {
  return {
    version: headerValue(headers['mcp-protocol-version']),
    method: headerValue(headers['mcp-method']),
    name: headerValue(headers['mcp-name']),
  };
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = headerValue(value);
  return flat;
}

/** JSON-RPC code of the 404 for a session id this process did not issue (the TypeScript SDK's server uses it too). */
export const SESSION_NOT_FOUND = -32001;
export const SESSION_NOT_FOUND_MESSAGE =
  'Session not found: this Mcp-Session-Id was not issued by this bridge (it restarted without MCP_SESSION_KEY_FILE, its key changed, or the id is made up); ' +
  'send initialize without it to start a new session';

/**
 * A non-empty Mcp-Session-Id that did not give a session scope: not one this process issued. Such a
 * session has ended as far as the client can tell, and the spec says the server MUST then answer 404
 * so the client starts a new one (Claude Code 2.1.197, opencode 1.18.33 and mcp-remote 0.15.1 do, at
 * once, and retry). Answering it as no session instead kept the client on an id that no longer
 * scoped its cancel notices: after a bridge restart they reached no call.
 */
function staleSession(header: string | string[] | undefined, scope: string): boolean {
  return header !== undefined && String(header).trim() !== '' && !scope.startsWith('session:');
}

/** The id of a single request body, for its error answer; null otherwise. */
function requestId(body: unknown): string | number | null {
  // a response's id names a request of the server's, not one of the client's (classifyReceived)
  const id = isRecord(body) && !isResponseShaped(body) ? body.id : undefined;
  return isExactId(id) ? id : null;
}

/** The 2026-07-28 handling (its dispatch and listen streams), loaded at the first such request: a start does not need it. */
interface Modern {
  handle: typeof handleModern;
  openListen: typeof openListenStream;
}
let modern: Modern | undefined;
async function loadModern(): Promise<Modern> {
  const [dispatch, listen] = await Promise.all([import('../mcp/modern-dispatch.js'), import('./listen-stream.js')]);
  modern ??= { handle: dispatch.handleModern, openListen: listen.openListenStream };
  return modern;
}

export function mcpRoute(dispatcher: Dispatcher, log: Logger, options: McpRouteOptions): Methods {
  /** Numbers each listen stream: its subscription's key (closing the stream is its only cancel). */
  let streams = 0;
  const post: Handler = async (req, res, ctx) => {
    const mediaProblem = contentTypeProblem(req.headers['content-type']);
    if (mediaProblem !== null) {
      sendRpc(res, 415, errorResponse(null, INVALID_REQUEST, mediaProblem), UNSUPPORTED_MEDIA_HEADERS);
      return;
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, options.maxBodyBytes);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        // answer without reading the rest; with `connection: close` node ends the socket once the
        // answer is written, so the client stops sending
        sendRpc(res, 413, errorResponse(null, INVALID_REQUEST, err.message), { connection: 'close' });
        return;
      }
      // the client went away (or the request timeout cut it off) mid-body: nobody is left to answer
      log.debug(`MCP request body not received: ${(err as Error).message}`);
      res.destroy();
      return;
    }
    // not decoded with U+FFFD in place of bad bytes: that would run a changed message (Lua code, a file's text)
    if (!isUtf8(raw)) {
      sendRpc(res, 400, errorResponse(null, PARSE_ERROR, 'Parse error: the body is not valid UTF-8, which every MCP message is'));
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      sendRpc(res, 400, errorResponse(null, PARSE_ERROR, 'Parse error: the body is not valid JSON'));
      return;
    }
    const era = selectHttpEra(mcpHeaders(req.headers), body);
    // the client closing the request before its answer cancels its calls; nothing is written then
    const gone = new Cancellation();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.on('close', onClose);
    const sessionHeader = req.headers['mcp-session-id'];
    // with tokens, an id verifies only with the token it was issued to (caller-scope.ts)
    const authorization = options.tokens === true ? (req.headers.authorization ?? '') : undefined;
    const scope = callerScope(req.socket, sessionHeader, authorization);
    if (era.era === 'legacy' && staleSession(sessionHeader, scope) && !(isRecord(body) && body.method === 'initialize')) {
      res.off('close', onClose);
      sendRpc(res, 404, errorResponse(requestId(body), SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE));
      return;
    }
    const m = era.era === 'modern' ? (modern ?? (await loadModern())) : null;
    // list_changed reaches a 2025 client on its GET stream (2026-07-28 has no initialize)
    // the revision in the literal (not added after): one object shape for every legacy request
    const caller: Caller = {
      scope,
      rate: rateKey(req, options.tokens === true, scope),
      signal: gone,
      listChanged: options.listChanged === true,
      revision: era.era === 'legacy' ? era.version : undefined,
    };
    const listenStreams = options.listenStreams;
    if (m && listenStreams) {
      // 2026-07-28 subscriptions/listen: this response becomes the subscription's SSE stream
      caller.listen = {
        problem: acceptsEventStream(req.headers.accept) ? null : 'subscriptions/listen is answered with an event stream: the Accept header must list text/event-stream',
        key: () => `${scope}\u0000sse:${++streams}`,
        // with tokens, the one that passed the listener's check (several tokens: one per client); without, the remote address
        client: () => streamClient(req, options.tokens === true, ctx.authenticated),
        open: (key) => m.openListen(res, key, dispatcher.subscriptions, listenStreams),
      };
    }
    const reply =
      era.era === 'reject' ? era.reply
      : era.era === 'legacy' ? await dispatcher.handleBody(body, allowsBatches(era.version), caller, raw.length)
      : await m!.handle(dispatcher, body, flatHeaders(req.headers), caller, raw.length);
    res.off('close', onClose);
    if (reply.streaming) return;
    if (gone.aborted || res.destroyed) {
      log.debug('MCP request closed by the client before its answer; its calls were cancelled');
      return;
    }
    if (reply.body === null) {
      // no body at all: without a length node would frame the empty answer as a chunked one
      res.writeHead(202, { 'content-length': '0' }).end();
      return;
    }
    if (reply.cancelled && acceptsEventStream(req.headers.accept)) {
      // cancelled by the client's notifications/cancelled: no answer (see Reply.cancelled), but the
      // request still needs its exchange closed, so an event stream that ends without an event
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).end();
      return;
    }
    // a session id is handed out with an InitializeResult only (not with initialize's error), so the
    // client's later notifications/cancelled can be matched to its calls on other connections (see
    // caller-scope.ts); nothing else keys on it
    let headers = reply.headers;
    if (isRecord(body) && body.method === 'initialize' && reply.body !== null && 'result' in reply.body && !scope.startsWith('session:')) {
      headers = { ...headers, 'mcp-session-id': issueSessionId(options.toolsGeneration?.(), sessionBinding(authorization)) };
    }
    try {
      // a client that takes only an event stream gets its answer as one SSE event; errors stay JSON
      const send = reply.status === 200 && wantsEventStream(req.headers.accept) ? sendSseMessage : sendJson;
      send(res, reply.status, forRevision(req, reply.body), headers);
    } catch (err) {
      // the answer could not be serialised: each request still hears about it, under its own id
      log.error(`MCP answer could not be serialised: ${(err as Error).message}`);
      const ids = (Array.isArray(reply.body) ? reply.body : [reply.body]).map((r: Response) => r.id);
      const errors = ids.map((id) => errorResponse(id, INTERNAL_ERROR, 'Internal error: the answer could not be serialised; the bridge log has the details'));
      sendRpc(res, 500, Array.isArray(reply.body) ? errors : errors[0]);
    }
  };
  return { POST: post, '*': (_req, res) => methodNotAllowed(res, options.listChanged === true) };
}
