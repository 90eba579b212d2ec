// What the CC_CONFIG file holds once checked (config-defined Lua tools, upstream MCP servers,
// REST endpoints), the limits and name rules its values must meet, and the error that lists every
// problem found in it (ConfigFileError, code ERR_CONFIG_FILE).
import type { Schema } from '../tools/schema.js';

export const MAX_LUA_BYTES = 64 * 1024;
export const MAX_TOOL_TIMEOUT_MS = 300_000;
/** A bridge tool name: what every client accepts (no dots or slashes), at most 64 characters. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A server id: no "__" (it separates id and tool name) and no trailing "_", so names split one way. */
export const SERVER_ID = /^(?!.*__)[A-Za-z0-9](?:[A-Za-z0-9_-]{0,30}[A-Za-z0-9-])?$/;

export type LuaTarget = { computerId: number } | { label: string } | 'argument';

export interface LuaToolConfig {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema;
  target: LuaTarget;
  lua: string;
  timeoutMs?: number;
  annotations?: Record<string, unknown>;
}

export interface StdioServerConfig {
  id: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
}

export interface HttpServerConfig {
  id: string;
  url: string;
  headers: Record<string, string>;
  timeoutMs?: number;
}

export type ServerConfig = StdioServerConfig | HttpServerConfig;

export interface EndpointConfig {
  path: string;
  tool: string;
}

export interface FileConfig {
  tools: LuaToolConfig[];
  servers: ServerConfig[];
  endpoints: EndpointConfig[];
}

export const EMPTY_FILE_CONFIG: FileConfig = { tools: [], servers: [], endpoints: [] };

export function isStdio(server: ServerConfig): server is StdioServerConfig {
  return 'command' in server;
}

export interface Problem {
  /** JSON path of the offending value: `$.tools[0].target`. */
  path: string;
  message: string;
}

export class ConfigFileError extends Error {
  readonly code = 'ERR_CONFIG_FILE';
  constructor(readonly file: string, readonly problems: Problem[]) {
    super(problems.map((p) => `${file}: ${p.path}: ${p.message}`).join('\n'));
    this.name = 'ConfigFileError';
  }
}

