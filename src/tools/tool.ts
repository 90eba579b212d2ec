// The shape every tool has. One implementation serves every surface that lists or calls tools.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Registry } from '../link/registry.js';
import type { Schema } from './schema.js';

export interface TextContent {
  type: 'text';
  text: string;
}

export interface ToolResult {
  content: TextContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolContext {
  registry: Registry;
  config: Config;
  log: Logger;
  /** Aborted when the MCP client cancels the call (notifications/cancelled). */
  signal: AbortSignal;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema;
  outputSchema?: Schema;
  annotations?: Record<string, unknown>;
  /** Whether the configuration offers this tool at all. */
  enabled(config: Config): boolean;
  call(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

export function textResult(text: string, isError = false): ToolResult {
  return isError ? { content: [{ type: 'text', text }], isError: true } : { content: [{ type: 'text', text }] };
}
