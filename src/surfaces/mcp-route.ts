// POST /mcp (and /): JSON-RPC bodies to the dispatcher, JSON answers back. No SSE, no sessions.
import type { Logger } from '../log.js';
import type { Dispatcher } from '../mcp/dispatch.js';
import { INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, errorResponse, type Response } from '../jsonrpc/message.js';
import { ASSUMED_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, allowsBatches } from '../mcp/protocol.js';
import { BodyTooLargeError, readBody, sendJson } from './respond.js';
import type { Handler, Methods } from './router.js';

export interface McpRouteOptions {
  maxBodyBytes: number;
}

export function mcpRoute(dispatcher: Dispatcher, log: Logger, options: McpRouteOptions): Methods {
  const post: Handler = async (req, res) => {
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
    let raw: Buffer;
    try {
      raw = await readBody(req, options.maxBodyBytes);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        // answer without reading the rest; with `connection: close` node ends the socket once the
        // answer is written, so the client stops sending
        sendJson(res, 413, errorResponse(null, INVALID_REQUEST, err.message), { connection: 'close' });
        return;
      }
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
    try {
      sendJson(res, reply.status, reply.body, reply.headers);
    } catch (err) {
      // the answer could not be serialised: each request still hears about it, under its own id
      log.error(`MCP answer could not be serialised: ${(err as Error).message}`);
      const ids = (Array.isArray(reply.body) ? reply.body : [reply.body]).map((r: Response) => r.id);
      const errors = ids.map((id) => errorResponse(id, INTERNAL_ERROR, 'Internal error: the answer could not be serialised; the bridge log has the details'));
      sendJson(res, 500, Array.isArray(reply.body) ? errors : errors[0]);
    }
  };
  const notPost: Handler = (_req, res) =>
    sendJson(res, 405, errorResponse(null, INVALID_REQUEST, 'Method not allowed: this server speaks MCP over POST only (no SSE stream)'), {
      allow: 'POST',
    });
  return { POST: post, '*': notPost };
}
