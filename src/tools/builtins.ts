// The tools built into the bridge. Add a built-in tool here and every surface offers it.
import { execLua } from './exec-lua.js';
import { probeComputers } from './probe-computers.js';
import type { ToolSource } from './registry.js';
import type { Tool } from './tool.js';

export const BUILTIN_TOOLS: readonly Tool[] = [probeComputers, execLua];

export const builtinSource: ToolSource = { id: 'builtin', tools: () => BUILTIN_TOOLS };
