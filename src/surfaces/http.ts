// The HTTP listener on MCP_HOST:MCP_PORT: guards every request (Origin, Host), then hands it to the
// router. Routes (MCP, health ...) are added by whoever wires the bridge.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { INTERNAL_ERROR, errorResponse } from '../jsonrpc/message.js';
import { sendJson } from './respond.js';
import type { Router } from './router.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  allowedOrigins: string[];
  /** Cut off clients that send headers or bodies too slowly. */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export interface HttpServer {
  address: AddressInfo;
  /** Stops accepting, lets in-flight calls answer, then closes (forcibly after graceMs). */
  close(graceMs: number): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::ffff:127.0.0.1';
}

/** `Host` header value without its port: `[::1]:3000` -> `[::1]`, `localhost:3000` -> `localhost`. */
function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  const colon = value.lastIndexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

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

export async function startHttpServer(router: Router, log: Logger, options: HttpServerOptions): Promise<HttpServer> {
  const guardHost = isLoopbackHost(options.host);
  const inFlight = new Set<ServerResponse>();

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (!originAllowed(origin, options.allowedOrigins)) {
      log.warn(`rejected request from Origin ${JSON.stringify(origin)}`);
      return sendJson(res, 403, { error: 'forbidden', message: `Origin ${origin} is not allowed; add it to MCP_ALLOWED_ORIGINS` });
    }
    if (guardHost && !isLoopbackHost(hostName(req.headers.host ?? ''))) {
      log.warn(`rejected request for Host ${JSON.stringify(req.headers.host)}`);
      return sendJson(res, 403, { error: 'forbidden', message: 'Host header must name a loopback address while MCP_HOST is loopback' });
    }
    const match = router.match(req.method ?? 'GET', req.url ?? '/');
    switch (match.kind) {
      case 'found':
        return match.handler(req, res, match.ctx);
      case 'method-not-allowed':
        return sendJson(res, 405, { error: 'method not allowed' }, { allow: match.allow });
      case 'not-found':
        return sendJson(res, 404, { error: 'not found', message: `No route for ${match.ctx.path}; MCP is at POST /mcp` });
    }
  }

  // Node checks these timeouts only every connectionsCheckingInterval (30 s by default), and
  // refuses a header timeout longer than the request timeout.
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout);
  const server: Server = createServer({
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))),
  }, (req, res) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    route(req, res).catch((err: Error) => {
      log.error(`MCP request failed: ${err.stack ?? err.message}`);
      if (!res.headersSent) sendJson(res, 500, errorResponse(null, INTERNAL_ERROR, 'Internal error'));
      else res.destroy();
    });
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
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
        // keep-alive sockets become idle once their in-flight answer is written
        for (const res of inFlight) res.once('finish', () => server.closeIdleConnections());
      }),
  };
}
