// File tools on one computer (list-files, delete-file, move-file), each a fixed method of
// mcp-computer. Paths go to CC's fs unchanged: its rules and its error messages apply.
import { isRecord } from '../jsonrpc/message.js';
import { describe, type Link } from '../link/registry.js';
import { answerSchema, callMethod, safeTool } from './safe-tool.js';
import { failedResult, textResult, type Tool, type ToolContext, type ToolResult } from './tool.js';
import { plural } from '../plural.js';

/** Most entries list-files gathers from one folder (pieces of one frame each). */
export const MAX_LIST_ENTRIES = 10_000;

const PATH = { type: 'string', maxLength: 4096, description: 'path on the computer, as CC\'s fs takes it ("/" is the root; disks are under disk/)' } as const;

interface Entry {
  name: string;
  isDir: boolean;
  isReadOnly: boolean;
  size?: number;
}

/** A computer's answer that does not have the promised shape: a protocol error naming the field. */
export function malformed(link: Link, method: string, problem: string): ToolResult {
  return failedResult(`protocol error: computer ${describe(link.computerId, link.label)} sent a malformed ${method} result: ${problem}`, 'tool_error');
}

function entryProblem(entry: unknown): string | null {
  if (!isRecord(entry)) return 'an entry is not an object';
  if (typeof entry.name !== 'string') return 'an entry has no string "name"';
  if (typeof entry.isDir !== 'boolean' || typeof entry.isReadOnly !== 'boolean') return `entry ${JSON.stringify(entry.name)} lacks isDir/isReadOnly booleans`;
  if (entry.size !== undefined && (typeof entry.size !== 'number' || !Number.isSafeInteger(entry.size) || entry.size < 0)) {
    return `entry ${JSON.stringify(entry.name)} has a bad size`;
  }
  return null;
}

async function listFiles(link: Link, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const path = (args.path as string | undefined) ?? '/';
  const entries: Entry[] = [];
  let piece: Record<string, unknown> | null = null;
  let offset = 0;
  for (;;) {
    const answer = await callMethod(ctx, link, 'list-files', offset === 0 ? { path } : { path, offset });
    if (!answer.ok) return answer.error;
    if (!isRecord(answer.result) || !Array.isArray(answer.result.entries)) return malformed(link, 'list-files', 'no "entries" list');
    piece = answer.result;
    for (const entry of answer.result.entries) {
      const problem = entryProblem(entry);
      if (problem) return malformed(link, 'list-files', problem);
      const e = entry as Entry;
      entries.push(e.size === undefined ? { name: e.name, isDir: e.isDir, isReadOnly: e.isReadOnly } : { name: e.name, isDir: e.isDir, isReadOnly: e.isReadOnly, size: e.size });
    }
    const next = answer.result.next;
    if (next === undefined) break;
    if (typeof next !== 'number' || !Number.isSafeInteger(next) || next <= offset) return malformed(link, 'list-files', '"next" does not move forward');
    if (entries.length >= MAX_LIST_ENTRIES) break;
    offset = next;
  }
  const truncated = piece.next !== undefined;
  const where = typeof piece.path === 'string' ? piece.path : path;
  const free = piece.freeSpace;
  const structured: Record<string, unknown> = {
    computerId: link.computerId,
    path: where,
    entries,
    isReadOnly: piece.isReadOnly === true,
    freeSpace: typeof free === 'number' || free === 'unlimited' ? free : null,
    truncated,
  };
  if (typeof piece.drive === 'string') structured.drive = piece.drive;
  const head = [
    `${where}: ${plural(entries.length, 'entry', 'entries')}`,
    typeof structured.drive === 'string' ? `drive ${structured.drive}` : null,
    structured.isReadOnly ? 'read-only' : null,
    typeof free === 'number' ? `${plural(free, 'byte')} free` : free === 'unlimited' ? 'unlimited free space' : null,
  ]
    .filter((x) => x !== null)
    .join(', ');
  const lines = entries.map((e) => `${e.isDir ? `${e.name}/` : `${e.name}  ${plural(e.size ?? 0, 'byte')}`}${e.isReadOnly ? '  [read-only]' : ''}`);
  if (truncated) lines.push(`[only the first ${entries.length} entries; the folder has ${String(piece.total)}]`);
  return { ...textResult([head, ...lines].join('\n')), structuredContent: structured };
}

export const listFilesTool: Tool = safeTool({
  name: 'list-files',
  title: 'List files on a computer',
  description:
    'List a folder on one linked computer: each entry\'s name, size, whether it is a folder and whether it is read-only, and the free space of its drive.',
  properties: { path: { ...PATH, description: 'folder to list (default "/")' } },
  readOnly: true,
  outputSchema: answerSchema({
    path: { type: 'string' },
    entries: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, isDir: { type: 'boolean' }, isReadOnly: { type: 'boolean' }, size: { type: 'integer' } },
        required: ['name', 'isDir', 'isReadOnly'],
      },
    },
    isReadOnly: { type: 'boolean' },
    freeSpace: { type: ['integer', 'string', 'null'] },
    drive: { type: 'string' },
    truncated: { type: 'boolean' },
  }, ['drive']),
  run: listFiles,
});

export const deleteFileTool: Tool = safeTool({
  name: 'delete-file',
  title: 'Delete a file on a computer',
  description: 'Delete a file or an empty folder on one linked computer (a folder with things in it only with "recursive": true).',
  properties: {
    path: { ...PATH, minLength: 1 },
    recursive: { type: 'boolean', description: 'also delete a folder that is not empty, with everything in it' },
  },
  required: ['path'],
  readOnly: false,
  destructive: true,
  outputSchema: answerSchema({ path: { type: 'string' }, wasDir: { type: 'boolean' } }),
  async run(link, args, ctx) {
    const answer = await callMethod(ctx, link, 'delete-file', { path: args.path, recursive: args.recursive === true });
    if (!answer.ok) return answer.error;
    const r = isRecord(answer.result) ? answer.result : {};
    const where = typeof r.path === 'string' ? r.path : String(args.path);
    return { ...textResult(`deleted ${r.wasDir === true ? 'folder' : 'file'} ${where} on computer ${describe(link.computerId, link.label)}`), structuredContent: { computerId: link.computerId, path: where, wasDir: r.wasDir === true } };
  },
});

export const moveFileTool: Tool = safeTool({
  name: 'move-file',
  title: 'Move or rename a file on a computer',
  description: 'Move or rename a file or folder on one linked computer (CC\'s fs.move: the destination must not exist).',
  properties: { from: { ...PATH, minLength: 1 }, to: { ...PATH, minLength: 1 } },
  required: ['from', 'to'],
  readOnly: false,
  outputSchema: answerSchema({ from: { type: 'string' }, to: { type: 'string' } }),
  async run(link, args, ctx) {
    const answer = await callMethod(ctx, link, 'move-file', { from: args.from, to: args.to });
    if (!answer.ok) return answer.error;
    const r = isRecord(answer.result) ? answer.result : {};
    const from = typeof r.from === 'string' ? r.from : String(args.from);
    const to = typeof r.to === 'string' ? r.to : String(args.to);
    return { ...textResult(`moved ${from} to ${to} on computer ${describe(link.computerId, link.label)}`), structuredContent: { computerId: link.computerId, from, to } };
  },
});
