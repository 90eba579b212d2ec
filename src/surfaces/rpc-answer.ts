// A JSON-RPC answer on /mcp, with the id of an error whose request's id could not be read written as
// the revision the request names in MCP-Protocol-Version has it (see omitsUnreadableId): left out in
// 2025-11-25 and 2026-07-28, null otherwise (no header: 2025-03-26).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withoutNullIds } from '../jsonrpc/message.js';
import { omitsUnreadableId } from '../mcp/protocol.js';
import { sendJson } from './respond.js';

/** The revision a request names in MCP-Protocol-Version, trimmed; undefined without the header. */
export function headerVersion(req: IncomingMessage): string | undefined {
  const value = req.headers['mcp-protocol-version'];
  return (Array.isArray(value) ? value.join(', ') : value)?.trim();
}

/** `body` as the request's revision writes it (see the module comment). */
export function forRevision(req: IncomingMessage, body: unknown): unknown {
  return omitsUnreadableId(headerVersion(req)) ? withoutNullIds(body) : body;
}

/** sendJson for a JSON-RPC answer on /mcp (`res.req`: the request it answers). */
export function sendRpc(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendJson(res, status, forRevision(res.req, body), headers);
}
