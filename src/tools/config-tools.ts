// Config-defined Lua tools (the CC_CONFIG file's "tools"): the admin's own named operations. Each runs
// its fixed chunk through the exec path with the validated arguments as data (`local args = ...`).
// They do not depend on CC_EXEC_LUA: the admin wrote the code, the agent only supplies arguments.
import type { LuaToolConfig } from '../config/file.js';
import { Link, type LinkRegistry } from '../link/registry.js';
import { execLua, runLua } from './exec-lua.js';
import { findComputer, linkedList } from './computer-target.js';
import type { ToolSource } from './registry.js';
import { failedResult, type Tool, type ToolResult } from './tool.js';

export const CONFIG_SOURCE_ID = 'config';

function resolveTarget(def: LuaToolConfig, links: LinkRegistry, args: Record<string, unknown>): Link | string | ToolResult {
  if (def.target === 'argument') return findComputer(links, args);
  if ('computerId' in def.target) {
    return links.get(def.target.computerId) ?? `Computer ${def.target.computerId} (the target of ${def.name}) is not linked.`;
  }
  return findComputer(links, { computer: def.target.label });
}

export function luaTool(def: LuaToolConfig): Tool {
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: def.inputSchema,
    ...(execLua.outputSchema ? { outputSchema: execLua.outputSchema } : {}),
    ...(def.annotations ? { annotations: def.annotations } : {}),
    async call(args, { links, config, signal }) {
      const target = resolveTarget(def, links, args);
      if (typeof target === 'string') return failedResult(`${target} ${linkedList(links)}`, 'unknown_computer');
      if (!(target instanceof Link)) return target;
      // the target arguments pick the computer; the chunk gets the rest
      const data = { ...args };
      if (def.target === 'argument') {
        delete data.computerId;
        delete data.computer;
      }
      return runLua(links, target, def.lua, data, def.timeoutMs ?? config.execTimeoutMs, signal, config.execMaxResultValues);
    },
  };
}

export function configToolSource(defs: readonly LuaToolConfig[]): ToolSource {
  const tools = defs.map(luaTool);
  return { id: CONFIG_SOURCE_ID, tools: () => tools };
}
