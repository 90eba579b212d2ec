// The tools built into the bridge. Add a built-in tool here and every surface offers it.
import { execLua } from './exec-lua.js';
import { probeComputers } from './probe-computers.js';
import { listComputers } from './list-computers.js';
import { deleteFileTool, listFilesTool, moveFileTool } from './files.js';
import { PART_B_TOOLS } from './part-b.js';
import { readFileTool, writeFileTool } from './file-transfer.js';
import type { ToolSource } from './registry.js';
import type { Tool } from './tool.js';

// Safe tools (fixed methods of mcp-computer, offered even with CC_EXEC_LUA=off): one line per family.
export const BUILTIN_TOOLS: readonly Tool[] = [
  probeComputers,
  execLua,
  listComputers,
  ...[listFilesTool, readFileTool, writeFileTool, deleteFileTool, moveFileTool],
  ...PART_B_TOOLS,
];

export const builtinSource: ToolSource = { id: 'builtin', tools: () => BUILTIN_TOOLS };
