// GET /mcp: the 2025 revisions' (2025-03-26 .. 2025-11-25) stream from server to client. A client
// that initialized and holds its Mcp-Session-Id opens it with Accept: text/event-stream; the bridge
// sends notifications/tools/list_changed on it whenever the tool set changes, and nothing else
// (never a response). One notice per change per session, on the session's newest stream; and one as
// the first event when a session opens a stream while holding none and the tool set may have changed
// since its id was issued (an earlier start issued it, MCP_SESSION_KEY_FILE, or the set changed
// since), as such a change reached no stream of it. 2026-07-28
// has no GET stream (405 as before). Origin, Host and the token are checked by the listener first.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import { INVALID_REQUEST, errorResponse } from '../jsonrpc/message.js';
import { selectHttpEra } from '../mcp/http-era.js';
import { SERVER_BUSY } from '../mcp/exchange.js';
import { acceptsEventStream } from './accept.js';
import { callerScope, toolsMayDiffer } from './caller-scope.js';
import type { EventStream, EventStreams } from './event-streams.js';
import { SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE, methodNotAllowed } from './mcp-route.js';
import { Shares } from '../mcp/shares.js';
import { sendRpc } from './rpc-answer.js';
import type { Handler, RouteContext } from './router.js';
import { streamClient } from './stream-client.js';

export const LIST_CHANGED_NOTICE = Object.freeze({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
/** How callerScope names a session's scope (the id follows). */
const SESSION_SCOPE = 'session:';

export interface GetStreamDeps {
  streams: EventStreams;
  /** Tool set changes, once per burst (ToolRegistry.watch, shared with subscriptions/listen). */
  watchTools(listener: () => void): () => void;
  /** ToolRegistry.generation: how many times the tool set changed since start. */
  toolsGeneration(): number;
  log: Logger;
  /** MCP_MAX_GET_STREAMS_PER_SESSION: most streams one session holds; one more ends its oldest. */
  perSession: number;
  /** MCP_MAX_GET_STREAMS_PER_CLIENT: most streams one client (token, else address: stream-client.ts) holds over all its sessions; one more ends its oldest. */
  perClient: number;
  /** MCP_AUTH_TOKEN is set: a client is its token; otherwise its remote address. */
  tokens: boolean;
}

/**
 * The open GET streams of each session, oldest first, and who may open one more (shares.ts): a
 * session over MCP_MAX_GET_STREAMS_PER_SESSION, or one opening a stream while MCP_MAX_GET_STREAMS
 * are open, ends its own oldest (the new one wins: a client reconnecting is never refused because
 * its dead streams still hold places); a new session at the total ends the oldest stream of the
 * session holding the most, when that one holds two or more (only its newest gets notices anyway).
 * A session watches the tool set while it has a stream; each change goes on its newest stream only
 * (the next older if that one is already closing), so the client never gets the same notice twice.
 */
class SessionStreams {
  readonly shares: Shares<EventStream>;
  /**
   * The streams of each client over all its sessions (MCP_MAX_GET_STREAMS_PER_CLIENT): a client can
   * start as many sessions as it likes, so without this one client held every place of
   * MCP_MAX_GET_STREAMS, a stream per session, and every other client's new session got 503.
   */
  private readonly clients: Shares<EventStream>;
  private readonly watching = new Map<string, () => void>();

  constructor(
    private readonly watchTools: (listener: () => void) => () => void,
    private readonly toolsGeneration: () => number,
    private readonly limits: { max: number; perSession: number; perClient: number },
  ) {
    this.shares = new Shares({ max: limits.max, perClient: limits.perSession, ownFirst: true });
    // only the per-client cap: the total is the sessions' shares' to keep
    this.clients = new Shares({ max: Infinity, perClient: limits.perClient, ownFirst: true });
  }

  /** A client holding MCP_MAX_GET_STREAMS_PER_CLIENT streams ends its oldest (the newest wins, as within a session). */
  makeClientRoom(client: string | null): void {
    const admission = this.clients.admit(client);
    if (admission.kind !== 'replace') return;
    admission.victim.replace(
      `ended: this client opened a newer GET /mcp stream and may hold ${this.limits.perClient} over all its sessions (MCP_MAX_GET_STREAMS_PER_CLIENT; a client is its MCP_AUTH_TOKEN, or without tokens its address); notices go to each session's newest stream`,
    );
  }

  /** Whether `session` may open one more stream; when a stream must end first, it is ended. */
  makeRoom(session: string): boolean {
    const admission = this.shares.admit(session);
    if (admission.kind === 'open') return true;
    if (admission.kind === 'refuse') return false;
    const { victim, why, held } = admission;
    const owner = why === 'total' ? 'another session' : 'this session';
    victim.replace(
      why === 'client'
        ? `ended: this session opened a newer GET /mcp stream and may hold ${this.limits.perSession} (MCP_MAX_GET_STREAMS_PER_SESSION); notices go to its newest stream`
        : `ended: ${this.limits.max} event streams are open, the most this bridge allows (MCP_MAX_GET_STREAMS), and ${owner} needed one; this session holds ${held}, notices go to its newest stream`,
    );
    return true;
  }

  add(session: string, client: string | null, stream: EventStream): void {
    // a session opening a stream while it holds none, issued by an earlier start (MCP_SESSION_KEY_FILE
    // kept its id valid) or before a change of the tool set: a change made while the bridge was down,
    // or while the session had no stream (before its first, between a drop and the reconnect), was
    // told to no stream of it, so its stream starts with the notice
    const stale = !this.watching.has(session) && toolsMayDiffer(session.slice(SESSION_SCOPE.length), this.toolsGeneration());
    if (!this.watching.has(session)) {
      this.watching.set(
        session,
        this.watchTools(() => {
          const streams = this.shares.itemsOf(session);
          for (let i = streams.length - 1; i >= 0; i--) if (streams[i]!.send(LIST_CHANGED_NOTICE)) return;
        }),
      );
    }
    this.shares.add(session, stream);
    this.clients.add(client, stream);
    stream.onClose(() => {
      this.clients.remove(client, stream);
      this.drop(session, stream);
    });
    if (stale) stream.send(LIST_CHANGED_NOTICE);
  }

  private drop(session: string, stream: EventStream): void {
    // onClose functions run once per stream, so this is its only removal
    this.shares.remove(session, stream);
    if (this.shares.held(session) > 0) return;
    this.watching.get(session)!();
    this.watching.delete(session);
  }
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

function refuse(res: ServerResponse, status: number, code: number, message: string): void {
  sendRpc(res, status, errorResponse(null, code, message));
}

export function getStream(deps: GetStreamDeps): Handler {
  const { streams, log } = deps;
  const sessions = new SessionStreams(deps.watchTools, deps.toolsGeneration, { max: streams.options.maxStreams, perSession: deps.perSession, perClient: deps.perClient });
  let atLimit = false;
  return (req: IncomingMessage, res: ServerResponse, ctx: RouteContext) => {
    // a HEAD cannot carry a stream: answered as before the GET stream existed
    if (req.method !== 'GET') return methodNotAllowed(res, true);
    const era = selectHttpEra({ version: single(req.headers['mcp-protocol-version']) }, undefined);
    if (era.era === 'reject') return sendRpc(res, era.reply.status, era.reply.body);
    if (era.era === 'modern') {
      return sendRpc(res, 405, errorResponse(null, INVALID_REQUEST, 'Method not allowed: 2026-07-28 has no GET stream; send requests with POST'), { allow: 'POST' });
    }
    if (!acceptsEventStream(single(req.headers.accept))) {
      return refuse(res, 406, INVALID_REQUEST, 'Not Acceptable: GET /mcp opens the server\'s event stream; its Accept header must list text/event-stream (send MCP requests with POST)');
    }
    const session = req.headers['mcp-session-id'];
    if (session === undefined || String(session).trim() === '') {
      return refuse(res, 400, INVALID_REQUEST, 'Bad Request: GET /mcp needs the Mcp-Session-Id header that initialize answered with (the stream belongs to that session)');
    }
    // with tokens, an id issued to another token is as unknown as a made-up one (caller-scope.ts)
    const scope = callerScope(req.socket, session, deps.tokens ? (req.headers.authorization ?? '') : undefined);
    // an id this process did not issue: the same 404 as POST gives, so the client initializes again
    if (!scope.startsWith(SESSION_SCOPE)) return refuse(res, 404, SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE);
    // the new stream wins over this client's oldest (over all its sessions), then over this
    // session's oldest, or a session holding spares gives one up
    const client = streamClient(req, deps.tokens, ctx.authenticated);
    if (!streams.closing) sessions.makeClientRoom(client);
    const stream = streams.closing || sessions.makeRoom(scope) ? streams.open(res) : 'limit';
    if (stream === 'limit') {
      // warned once per run of refusals (a client retrying in a loop must not flood the log)
      if (!atLimit) log.warn(`GET /mcp refused: ${streams.options.maxStreams} event streams are open (MCP_MAX_GET_STREAMS), each the only one of its session`);
      atLimit = true;
      return refuse(res, 503, SERVER_BUSY, `Service Unavailable: ${streams.options.maxStreams} event streams are open, the most this bridge allows (MCP_MAX_GET_STREAMS), each the only one of its session; tool calls still work over POST`);
    }
    if (stream === 'closing') return refuse(res, 503, SERVER_BUSY, 'Service Unavailable: the bridge is shutting down');
    atLimit = false;
    sessions.add(scope, client, stream);
    log.debug(`GET /mcp stream opened (${streams.size} open)`);
  };
}
