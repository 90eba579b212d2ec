// The MCP listener: a tiny node:http router around the dispatcher. POST /mcp (and /) carry
// JSON-RPC; GET /health is plain HTTP. No SSE and no sessions: every answer is application/json.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import type { Dispatcher } from './dispatch.js';
import { INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, errorResponse } from './jsonrpc.js';
import { ASSUMED_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, allowsBatches } from './protocol.js';

export interface McpServerOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  allowedOrigins: string[];
  /** Cut off clients that send headers or bodies too slowly. */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  computers: () => number;
}

export interface McpServer {
  address: AddressInfo;
  /** Stops accepting, lets in-flight calls answer, then closes (forcibly after graceMs). */
  close(graceMs: number): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const MCP_PATHS = new Set(['/mcp', '/']);

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

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startMcpServer(dispatcher: Dispatcher, log: Logger, options: McpServerOptions): Promise<McpServer> {
  const guardHost = isLoopbackHost(options.host);
  const inFlight = new Set<ServerResponse>();

  function tooLarge(res: ServerResponse): void {
    // answer without reading the rest; with `connection: close` node ends the socket once the
    // answer is written, so the client stops sending
    sendJson(res, 413, errorResponse(null, INVALID_REQUEST, `Request body exceeds ${options.maxBodyBytes} bytes`), {
      connection: 'close',
    });
  }

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers['mcp-protocol-version'];
    const version = typeof header === 'string' ? header.trim() : ASSUMED_PROTOCOL_VERSION;
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      sendJson(
        res,
        400,
        errorResponse(null, INVALID_REQUEST, `Unsupported MCP-Protocol-Version: ${version}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`),
      );
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBodyBytes) return tooLarge(res);
    let raw: Buffer;
    try {
      raw = await readBody(req, options.maxBodyBytes);
    } catch (err) {
      if (err instanceof BodyTooLarge) return tooLarge(res);
      // the client went away (or the request timeout cut it off) mid-body: nobody is left to answer
      log.debug(`MCP request body not received: ${(err as Error).message}`);
      res.destroy();
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      sendJson(res, 400, errorResponse(null, PARSE_ERROR, 'Parse error: the body is not valid JSON'));
      return;
    }
    const reply = await dispatcher.handleBody(body, allowsBatches(version));
    if (reply.body === null) {
      res.writeHead(202).end();
      return;
    }
    sendJson(res, reply.status, reply.body);
  }

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
    const path = (req.url as string).split('?')[0] as string;
    if (path === '/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
      }
      return sendJson(res, 200, { ok: true, computers: options.computers() });
    }
    if (!MCP_PATHS.has(path)) return sendJson(res, 404, { error: 'not found', message: `No route for ${path}; MCP is at POST /mcp` });
    if (req.method !== 'POST') {
      return sendJson(res, 405, errorResponse(null, INVALID_REQUEST, 'Method not allowed: this server speaks MCP over POST only (no SSE stream)'), {
        allow: 'POST',
      });
    }
    return handleMcp(req, res);
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
