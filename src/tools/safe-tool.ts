// The safe-tool framework: a tool that calls one fixed method of mcp-computer (no Lua is sent), so
// it works with exec-lua switched off (CC_EXEC_LUA=off). A safe tool is defined once here with
// `safeTool` and listed in builtins.ts; `callMethod` is how it talks to the computer.
import { FrameTooLargeError, Link, describe } from '../link/registry.js';
import { isRecord } from '../jsonrpc/message.js';
import { CC_MAX_MESSAGE_BYTES } from './exec-lua.js';
import { findComputer, linkedList } from './computer-target.js';
import { failedResult, type Tool, type ToolContext, type ToolResult } from './tool.js';
import type { Schema } from './schema.js';

/** The arguments every safe tool takes to pick its computer. */
export const COMPUTER_PROPERTIES: Record<string, Schema> = {
  computerId: { type: 'integer', minimum: 0, description: 'id of the target computer (os.getComputerID())' },
  computer: { type: 'string', minLength: 1, description: 'label of the target computer; must match exactly one linked computer' },
};

/** How to update mcp-computer on a computer, with the bridge's link port when it is fixed. */
export function updateHint(linkPort: number): string {
  const port = linkPort === 0 ? '<link port>' : String(linkPort);
  return (
    `update it from the bridge: on the computer run "mcp-computer stop" (if it runs in the background), "rm mcp-computer.lua", ` +
    `"wget http://<bridge-host>:${port}/mcp-computer.lua mcp-computer.lua", then start it again (or reboot)`
  );
}

/** The error a computer's `unknown method` becomes: its program is older than this bridge. */
export function tooOld(link: Link, method: string, linkPort: number): ToolResult {
  const version = link.version ? `mcp-computer ${link.version}` : 'an mcp-computer program';
  return failedResult(
    `computer ${describe(link.computerId, link.label)} runs ${version}, which is too old to know "${method}"; ${updateHint(linkPort)}.`,
    'tool_error',
  );
}

/** Largest request frame `link` accepts: CC's default, or less when the computer said so. */
export function frameLimit(link: Link): number {
  return Math.min(CC_MAX_MESSAGE_BYTES, link.maxFrame ?? CC_MAX_MESSAGE_BYTES);
}

export type MethodResult = { ok: true; result: unknown } | { ok: false; error: ToolResult };

export interface MethodOptions {
  /** Tell the computer to stop when the bridge stops waiting (methods that run as a chunk there). */
  cancelOnTimeout?: boolean;
}

/**
 * Sends one request for `method` to `link` and waits for its answer (CC_EXEC_TIMEOUT_MS, or
 * `timeoutMs`). Every way it can fail becomes a finished error result: the computer's own error
 * (CC's message), the owner's refusal (mcp.tools / mcp.readonly), a program too old to know the
 * method, a timeout, a cancelled call, a dropped link.
 */
export async function callMethod(
  ctx: ToolContext,
  link: Link,
  method: string,
  params: Record<string, unknown>,
  timeoutMs: number = ctx.config.execTimeoutMs,
  options: MethodOptions = {},
): Promise<MethodResult> {
  const who = describe(link.computerId, link.label);
  let outcome;
  try {
    outcome = await ctx.links.request(link, method, params, {
      timeoutMs,
      signal: ctx.signal,
      maxFrameBytes: frameLimit(link),
      cancelOnTimeout: options.cancelOnTimeout ?? false,
    });
  } catch (err) {
    if (err instanceof FrameTooLargeError) return { ok: false, error: failedResult(`The request is too large to send: ${err.message}.`, 'invalid_arguments') };
    throw err;
  }
  switch (outcome.status) {
    case 'ok':
      return { ok: true, result: outcome.result };
    case 'error':
      if (outcome.error === 'unknown method') return { ok: false, error: tooOld(link, method, ctx.config.linkPort) };
      if (isRecord(outcome.result) && outcome.result.refused === true) {
        return { ok: false, error: failedResult(`computer ${who} refused: ${outcome.error}`, 'disabled') };
      }
      return { ok: false, error: failedResult(outcome.error, 'tool_error') };
    case 'timeout':
      return { ok: false, error: failedResult(`computer ${who} did not answer ${method} within ${timeoutMs} ms${options.cancelOnTimeout ? '; cancel sent' : ' (CC_EXEC_TIMEOUT_MS)'}.`, 'timeout') };
    case 'cancelled':
      return { ok: false, error: failedResult(`cancelled while waiting for ${method} on computer ${who}${options.cancelOnTimeout ? '; cancel sent to the computer' : ''}.`, 'cancelled') };
    case 'disconnected':
      return { ok: false, error: failedResult(`the link to computer ${who} dropped before it answered (${outcome.reason}).`, 'unavailable') };
  }
}

/**
 * A safe tool's outputSchema: an object with the target's `computerId` and `fields`, every one
 * required but those named in `optional` (properties and required lists in the order given).
 */
export function answerSchema(fields: Record<string, Schema>, optional: readonly string[] = []): Schema {
  return {
    type: 'object',
    properties: { computerId: { type: 'integer' }, ...fields },
    required: ['computerId', ...Object.keys(fields).filter((name) => !optional.includes(name))],
  };
}

export interface SafeToolSpec {
  name: string;
  title: string;
  description: string;
  /** The tool's own arguments (computerId / computer are added). */
  properties: Record<string, Schema>;
  required?: string[];
  outputSchema?: Schema;
  /** Only reads: allowed on a computer whose owner set mcp.readonly. */
  readOnly: boolean;
  /** Destroys or overwrites something (annotation for clients). */
  destructive?: boolean;
  /** Runs the tool against the one computer the arguments named. */
  run(link: Link, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool on one computer that calls fixed methods of mcp-computer; offered whatever CC_EXEC_LUA says. */
export function safeTool(spec: SafeToolSpec): Tool {
  const tool: Tool = {
    name: spec.name,
    title: spec.title,
    description: `${spec.description} Pick the computer with "computerId" or an exact "computer" label. Works with exec-lua off; the computer's owner can refuse it (settings mcp.tools, mcp.readonly).`,
    inputSchema: {
      type: 'object',
      properties: { ...COMPUTER_PROPERTIES, ...spec.properties },
      required: spec.required ?? [],
      additionalProperties: false,
    },
    annotations: spec.readOnly
      ? { readOnlyHint: true, openWorldHint: true }
      : { readOnlyHint: false, destructiveHint: spec.destructive ?? false, openWorldHint: true },
    async call(args, ctx) {
      const target = findComputer(ctx.links, args);
      if (typeof target === 'string') return failedResult(`${target} ${linkedList(ctx.links)}`, 'unknown_computer');
      if (!(target instanceof Link)) return target;
      return spec.run(target, args, ctx);
    },
  };
  if (spec.outputSchema) tool.outputSchema = spec.outputSchema;
  return tool;
}
