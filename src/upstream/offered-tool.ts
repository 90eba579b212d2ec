// What an upstream server's tools look like to the bridge (server.ts offers them): a listed tool as
// a registry Tool (its definition passed on as given, but for the object type a schema must name),
// the stand-in for a tool of a server that is not up, and how a call's answer becomes a ToolResult.
import { RpcClientError } from '../jsonrpc/client.js';
import { isRecord } from '../jsonrpc/message.js';
import type { Schema } from '../tools/schema.js';
import { failedResult, type Tool, type ToolResult } from '../tools/tool.js';
import { callFailure } from './call-failure.js';
import { toolResult, type UpstreamTool } from './mcp-client.js';

/** How every call of one upstream tool ends (UpstreamServer.adapt): the JSON-RPC request's own ends. */
export type CallEnds = { upstreamName: string; ok(result: unknown): ToolResult; failed(err: unknown): ToolResult };

/**
 * A tool schema with `"type": "object"` at its root when it names no type. The Tool schema of every
 * MCP revision requires that type on inputSchema (and on outputSchema up to 2025-11-25), and clients
 * that parse tools/list against it (the TypeScript SDK) refuse the whole list over one tool without
 * it; servers that send `{}` for "no arguments" exist. It changes nothing the bridge accepts or passes
 * on: arguments and structuredContent must be objects anyway. A schema naming another type is left
 * out before this (tool-check.ts).
 */
function objectTyped<T extends Record<string, unknown>>(schema: T): T {
  return schema.type === undefined ? { type: 'object', ...schema } : schema;
}

/** The registry Tool for `tool`, offered as `name`; `call` runs it on the server. */
export function offeredTool(tool: UpstreamTool, name: string, call: Tool['call']): Tool {
  const annotations = isRecord(tool.annotations) ? tool.annotations : undefined;
  const title = typeof tool.title === 'string' ? tool.title : typeof annotations?.title === 'string' ? annotations.title : tool.name;
  const inputSchema = objectTyped(tool.inputSchema as Schema);
  const adapted: Tool = {
    name,
    title,
    description: typeof tool.description === 'string' ? tool.description : '',
    inputSchema,
    definition: { ...tool, name, inputSchema, ...(isRecord(tool.outputSchema) ? { outputSchema: objectTyped(tool.outputSchema) } : {}) },
    upstreamName: tool.name,
    call,
  };
  if (isRecord(tool.outputSchema)) adapted.outputSchema = objectTyped(tool.outputSchema) as Schema;
  if (annotations) adapted.annotations = annotations;
  return adapted;
}

/** A tool of a server that is not up: every call answers `isError` with `why()` (unavailable). */
export function unavailableTool(name: string, why: () => string): Tool {
  return {
    name,
    title: name,
    description: '',
    inputSchema: { type: 'object' },
    call: async () => failedResult(why(), 'unavailable'),
  };
}

/**
 * The end of a call of `name` (`upstreamName` on server `serverId`): the server's result, whole
 * (every content type, structuredContent, isError, _meta), or what went wrong.
 */
export function callEnd(serverId: string, upstreamName: string, name: string, answer: unknown, error: unknown, timeoutMs: number): ToolResult {
  let err = error;
  if (err === null) {
    try {
      return toolResult(upstreamName, answer) as unknown as ToolResult;
    } catch (e) {
      err = e;
    }
  }
  if (!(err instanceof RpcClientError)) throw err;
  return callFailure(err, serverId, name, timeoutMs);
}
