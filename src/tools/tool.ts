// The shape every tool has. One implementation serves every surface that lists or calls tools.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { LinkRegistry } from '../link/registry.js';
import type { Schema } from './schema.js';
import type { CancelSignal } from '../cancel.js';

export interface TextContent {
  type: 'text';
  text: string;
}

/** Any MCP content block (image, audio, resource ...); upstream results pass through unchanged. */
export interface OtherContent {
  type: string;
  [field: string]: unknown;
}

export type ContentBlock = TextContent | OtherContent;

/**
 * Why a call did not do what was asked, as a stable code surfaces map (REST: HTTP statuses):
 * - unknown_tool, disabled, invalid_arguments: refused before the tool ran
 * - unknown_computer: no linked computer (or more than one) matches what the arguments name
 * - timeout: nothing came back in time (the computer was told to stop)
 * - unavailable: the link dropped, or an upstream server is down
 * - cancelled: the caller stopped waiting
 * - tool_error: the tool ran and the computer or upstream answered with an error
 * - internal: a bug in the bridge
 * - busy: a bridge-wide limit (MCP_MAX_CONCURRENT_CALLS) refused the call before it ran; retry later
 * - rate_limited: this caller started more calls than MCP_CALL_RATE allows; retry after the time given
 */
export type FailureCode =
  | 'unknown_tool'
  | 'disabled'
  | 'invalid_arguments'
  | 'unknown_computer'
  | 'timeout'
  | 'unavailable'
  | 'cancelled'
  | 'tool_error'
  | 'internal'
  | 'busy'
  | 'rate_limited';

/** Key of a result's classification; a symbol, so JSON (the MCP answer) never carries it. */
export const FAILURE: unique symbol = Symbol('failure');

/**
 * Key of the sentence a surface shows for a classified failure (REST's error.message) when the
 * result's text is not one: exec-lua's text is the run's output and an `error: ...` line.
 */
export const FAILURE_MESSAGE: unique symbol = Symbol('failure message');

export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** Set by a tool whose error result is more than tool_error (the default for isError). */
  [FAILURE]?: FailureCode;
  /** With FAILURE: the failure's sentence, when it is not the result's text. */
  [FAILURE_MESSAGE]?: string;
}

export interface ToolContext {
  links: LinkRegistry;
  config: Config;
  log: Logger;
  /** Aborted when the caller cancels the call (notifications/cancelled, or the client went away). */
  signal: CancelSignal;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema;
  outputSchema?: Schema;
  annotations?: Record<string, unknown>;
  /**
   * The exact tools/list entry, for a tool defined elsewhere (an upstream server's): passed through
   * whole (icons, _meta, annotations ...) with only the name changed to the bridge's.
   */
  definition?: Record<string, unknown>;
  /** An upstream server's tool: its name there (`files.read`), which `name` encodes (`files__files-2e-read`). */
  upstreamName?: string;
  /** Whether the configuration offers this tool at all (default: yes). */
  enabled?(config: Config): boolean;
  call(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

export function textResult(text: string, isError = false): ToolResult {
  return isError ? { content: [{ type: 'text', text }], isError: true } : { content: [{ type: 'text', text }] };
}

/** An error result classified as `code`. */
export function failedResult(text: string, code: FailureCode): ToolResult {
  return { ...textResult(text, true), [FAILURE]: code };
}

/** Tags an error result (built elsewhere) with its classification and, if its text is not one, the failure's sentence. */
export function classified(result: ToolResult, code: FailureCode, message?: string): ToolResult {
  return message === undefined ? { ...result, [FAILURE]: code } : { ...result, [FAILURE]: code, [FAILURE_MESSAGE]: message };
}
