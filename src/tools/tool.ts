// The shape every tool has. One implementation serves every surface that lists or calls tools.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { LinkRegistry } from '../link/registry.js';
import type { Schema } from './schema.js';

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

export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolContext {
  links: LinkRegistry;
  config: Config;
  log: Logger;
  /** Aborted when the caller cancels the call (notifications/cancelled, or the client went away). */
  signal: AbortSignal;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema;
  outputSchema?: Schema;
  annotations?: Record<string, unknown>;
  /** Whether the configuration offers this tool at all (default: yes). */
  enabled?(config: Config): boolean;
  call(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

export function textResult(text: string, isError = false): ToolResult {
  return isError ? { content: [{ type: 'text', text }], isError: true } : { content: [{ type: 'text', text }] };
}
