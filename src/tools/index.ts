// Every tool the bridge offers. Surfaces read this list; they never special-case a tool.
import type { Config } from '../config.js';
import { execLua } from './exec-lua.js';
import { probeComputers } from './probe-computers.js';
import type { Tool } from './tool.js';

export const ALL_TOOLS: readonly Tool[] = [probeComputers, execLua];

export function findTool(name: string): Tool | undefined {
  return ALL_TOOLS.find((t) => t.name === name);
}

export function enabledTools(config: Config): Tool[] {
  return ALL_TOOLS.filter((t) => t.enabled(config));
}
