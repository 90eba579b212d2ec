// The HTTP listener on MCP_HOST:MCP_PORT: guards every request (Origin, Host), then hands it to the
// router. Routes (MCP, health ...) are added by whoever wires the bridge.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../log.js';
import { INTERNAL_ERROR, errorResponse } from '../jsonrpc/message.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { bearerToken } from '../auth/tokens.js';
import { LogBudget } from '../link/log-budget.js';
import { AnswerWriter, sendJson } from './respond.js';
import { sendRpc } from './rpc-answer.js';
import { closeWithConnection } from './pipelined.js';
import { hostName, isLoopbackHost } from '../loopback.js';
import type { Router } from './router.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  allowedOrigins: string[];
  /** Cut off clients that send headers or bodies too slowly. */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** When it holds tokens, every request but the public ones needs `Authorization: Bearer <token>`. */
  auth?: { readonly enabled: boolean; matches(token: string | null): boolean };
  metrics?: { httpUnauthorized: number };
  /** Writes answers with backpressure and the MCP_SEND_STALL_MS cut-off; a 30 s one when absent. */
  answers?: AnswerWriter;
}

export interface HttpServer {
  address: AddressInfo;
  /** Stops accepting, lets in-flight calls answer, then closes (forcibly after graceMs). */
  close(graceMs: number): Promise<void>;
}

export { isLoopbackHost };

/** A missing Origin is fine (not a browser); otherwise an http(s) loopback origin, or one listed. */
export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLoopbackHost(url.hostname) || allowed.includes(url.origin);
}

/** CORS: what a browser page from an allowed Origin may send, and which answer headers it may read. */
export const CORS_ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID';
export const CORS_EXPOSE_HEADERS = 'MCP-Protocol-Version, Mcp-Session-Id, WWW-Authenticate, Retry-After, CC-Link-Note';

/**
 * The preflight's allowed headers: the fixed list, plus the 2026-07-28 `Mcp-Param-{Name}` headers the
 * browser asks for (their names come from tool schemas, so no fixed list can hold them).
 */
export function corsAllowHeaders(requested: string | undefined): string {
  const params = (requested ?? '').split(',').map((h) => h.trim()).filter((h) => /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(h));
  return params.length ? `${CORS_ALLOW_HEADERS}, ${params.join(', ')}` : CORS_ALLOW_HEADERS;
}

/** JSON-RPC code of the 401 body on the MCP endpoint (implementation-defined server error range). */
export const UNAUTHORIZED = -32001;

/**
 * Reachable without the token: health and metrics (which then say almost nothing), OAuth discovery
 * probes (answered 404 with a JSON body, so clients fall back to the static header) and CORS preflights.
 */
export function isPublic(method: string, path: string): boolean {
  return method === 'OPTIONS' || path === '/health' || path === '/metrics' || path === '/register' || path.startsWith('/.well-known/');
}

/** OAuth discovery and dynamic client registration: what a client tries after a 401 (RFC 9728, RFC 8414, OIDC, RFC 7591). */
export function isOAuthProbe(path: string): boolean {
  return path === '/register' || path.startsWith('/.well-known/oauth-') || path.startsWith('/.well-known/openid-configuration');
}

/**
 * The 404 body's message on those paths. Claude Code and opencode answer a 401 by starting OAuth
 * and, finding none, fail at client registration; Claude Code shows this body to the user then.
 */
export const NO_OAUTH =
  'cc-mcp-bridge has no OAuth (no authorization server, no client registration). When it has MCP_AUTH_TOKEN set, ' +
  'configure your MCP client to send the header "Authorization: Bearer <token>" with every request ' +
  '(Claude Code: claude mcp add --transport http <name> <url> --header "Authorization: Bearer <token>")';

/** JSON-RPC code of the 403 body on the MCP endpoint (a foreign Origin, a non-loopback Host). */
export const FORBIDDEN = -32000;

/**
 * 403 for a request the Origin or Host check refused: on the MCP endpoint a JSON-RPC error (id null,
 * as every other error there before a body is read), elsewhere the REST routes' `{error, message}`.
 */
function forbidden(res: ServerResponse, url: string | undefined, message: string): void {
  const path = (url ?? '/').split('?', 1)[0];
  const body = path === '/mcp' || path === '/' ? errorResponse(null, FORBIDDEN, `Forbidden: ${message}`) : { error: 'forbidden', message };
  sendRpc(res, 403, body);
}

/**
 * GET /mcp-computer.lua on the MCP port: the program is served by the link listener, on another port.
 * Before, "No route for /mcp-computer.lua; MCP is at POST /mcp", which does not say where it is.
 */
const PROGRAM_ELSEWHERE =
  'mcp-computer.lua is served on the computer link port (CC_LINK_PORT, 3001 by default), not on this MCP port: ' +
  'wget http://<bridge-host>:<CC_LINK_PORT>/mcp-computer.lua mcp-computer.lua (the bridge prints the address at start, "program at ...")';

/**
 * A WebSocket handshake on the MCP port: a computer given the MCP port's address. Before, it got the
 * GET /mcp answer (406, "its Accept header must list text/event-stream"), the computer only CC's
 * failed connect, and the bridge logged nothing.
 */
const WRONG_PORT = 'computers link to the computer link port (CC_LINK_PORT, 3001 by default; the bridge prints it at start as "Computer link: ws://..."), not to this one';

/** 401 without reading the body: no route is looked up, so it says nothing about what exists. */
function unauthorized(res: ServerResponse, path: string, presented: boolean): void {
  const message = presented
    ? 'Unauthorized: the bearer token is not valid'
    : 'Unauthorized: send the header Authorization: Bearer <token> (the bridge has MCP_AUTH_TOKEN set)';
  const body = path === '/mcp' || path === '/' ? errorResponse(null, UNAUTHORIZED, message) : { error: 'unauthorized', message };
  const challenge = presented ? 'Bearer realm="cc-mcp-bridge", error="invalid_token"' : 'Bearer realm="cc-mcp-bridge"';
  sendRpc(res, 401, body, { 'www-authenticate': challenge, connection: 'close' });
}

export async function startHttpServer(router: Router, log: Logger, options: HttpServerOptions): Promise<HttpServer> {
  const guardHost = isLoopbackHost(options.host);
  /**
   * close() was called: each response that ends from then on lets node close its now idle keep-alive
   * connection. A flag read by the one close listener every response has anyway, not a Set of the
   * responses in flight: a Set keyed by objects cost two hash lookups through the runtime and the
   * growing and shrinking of its table with every request (issue 16: ~1,000 instructions a call).
   */
  let closing = false;
  // every open connection, so close() can end those that never sent a byte at once: node's
  // closeIdleConnections() leaves them to the grace period (fetch opens one after an aborted call)
  const connections = new Set<Socket>();
  const answers = options.answers ?? new AnswerWriter();
  // any client can provoke these warnings at will: a budget keeps a flood from flooding the log
  const budget = new LogBudget(50);
  const warn = (line: string) => {
    const text = budget.take(line);
    if (text !== null) log.warn(text);
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (!originAllowed(origin, options.allowedOrigins)) {
      warn(`rejected request from Origin ${quoteValue(origin)}`);
      return forbidden(res, req.url, `Origin ${quoteValue(origin)} is not allowed; add it to MCP_ALLOWED_ORIGINS`);
    }
    if (guardHost && !isLoopbackHost(hostName(req.headers.host ?? ''))) {
      warn(`rejected request for Host ${quoteValue(req.headers.host)}`);
      return forbidden(res, req.url, 'Host header must name a loopback address while MCP_HOST is loopback');
    }
    const method = req.method ?? 'GET';
    if (origin !== undefined) {
      // the Origin passed the check: a browser page there may read the answer (whatever it is)
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-expose-headers', CORS_EXPOSE_HEADERS);
      res.setHeader('vary', 'Origin');
      if (method === 'OPTIONS') {
        res.writeHead(204, {
          'access-control-allow-methods': CORS_ALLOW_METHODS,
          'access-control-allow-headers': corsAllowHeaders(req.headers['access-control-request-headers']),
          'access-control-max-age': '600',
        });
        res.end();
        return;
      }
    }
    if (req.headers.upgrade?.toLowerCase() === 'websocket') {
      // a computer told the MCP port's address (the two ports are printed together); MCP has no WebSocket
      warn(`a WebSocket handshake from ${req.socket.remoteAddress} reached the MCP port: ${WRONG_PORT}`);
      return sendJson(res, 400, { error: 'wrong port', message: `This is the MCP port of cc-mcp-bridge: ${WRONG_PORT}` }, { connection: 'close' });
    }
    const match = router.match(method, req.url ?? '/');
    let authenticated = true;
    if (options.auth?.enabled) {
      const token = bearerToken(req.headers.authorization);
      authenticated = options.auth.matches(token);
      if (!authenticated && !isPublic(method, match.ctx.path)) {
        if (options.metrics) options.metrics.httpUnauthorized++;
        log.debug(`401 for ${method} ${match.ctx.path} from ${req.socket.remoteAddress}`);
        return unauthorized(res, match.ctx.path, req.headers.authorization !== undefined);
      }
    }
    switch (match.kind) {
      case 'found':
        match.ctx.authenticated = authenticated;
        // awaited, not returned: an async function that returns a promise pays extra ticks for it
        await match.handler(req, res, match.ctx);
        return;
      case 'method-not-allowed':
        return sendJson(res, 405, { error: 'method not allowed', message: `${method} is not allowed on ${match.ctx.path}; use ${match.allow}` }, { allow: match.allow });
      case 'not-found':
        return sendJson(res, 404, {
          error: 'not found',
          message:
            isOAuthProbe(match.ctx.path) ? NO_OAUTH
            : match.ctx.path === '/mcp-computer.lua' ? PROGRAM_ELSEWHERE
            : `No route for ${match.ctx.path}; MCP is at POST /mcp`,
        });
    }
  }

  // Node checks these timeouts only every connectionsCheckingInterval (30 s by default), and
  // refuses a header timeout longer than the request timeout.
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout);
  // one listener for every response (close is emitted once, after finish)
  function untrack(): void {
    if (closing) server.closeIdleConnections();
  }
  const server: Server = createServer({
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))),
    // each response finds the answer writer on its prototype (nothing stored per response)
    ServerResponse: answers.responseClass(),
  }, (req, res) => {
    res.on('close', untrack);
    closeWithConnection(req, res);
    route(req, res).catch((err: Error) => {
      log.error(`MCP request failed: ${err.stack ?? err.message}`);
      if (!res.headersSent) sendRpc(res, 500, errorResponse(null, INTERNAL_ERROR, 'Internal error'));
      else res.destroy();
    });
  });

  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    address: server.address() as AddressInfo,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        closing = true;
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
        // node counts a connection that has sent nothing yet as busy; one that sent part of a request
        // (bytes read, no answer in flight) is left to the grace period like any request in progress
        for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
        // keep-alive sockets become idle once their in-flight answer is written: untrack closes them then
      }),
  };
}
