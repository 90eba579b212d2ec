// read-file and write-file: content of any size moves in pieces that fit the computer's frame limit,
// base64 on the link (binary-safe), each piece checked with a running Adler-32 computed on both
// sides; a write is then read back from the computer's disk and checked whole. A mismatch is an error.
import { isRecord } from '../jsonrpc/message.js';
import { describe, type Link } from '../link/registry.js';
import { adler32, ADLER_START, adlerText, isStrictBase64 } from './checksum.js';
import { malformed } from './files.js';
import { answerSchema, callMethod, frameLimit, safeTool } from './safe-tool.js';
import { failedResult, textResult, type Tool, type ToolContext, type ToolResult } from './tool.js';
import { plural } from '../plural.js';

/** Bytes a verify piece covers (mcp-computer reads at most this much for one answer). */
export const VERIFY_PIECE_BYTES = 262_144;

const PATH = { type: 'string', minLength: 1, maxLength: 4096, description: 'path of the file on the computer, as CC\'s fs takes it (disks are under disk/)' } as const;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function mismatch(link: Link, what: string, bridge: number, computer: number): ToolResult {
  return failedResult(
    `checksum mismatch on computer ${describe(link.computerId, link.label)}: ${what}: the bridge computed ${adlerText(bridge)}, the computer ${adlerText(computer)}. ` +
      'The content was corrupted on the way or on the disk; nothing was silently accepted.',
    'tool_error',
  );
}

/** Raw bytes per write piece so that the base64 request stays inside the computer's frame limit. */
export function writePieceBytes(link: Link, path: string): number {
  const limit = frameLimit(link);
  // the same margin mcp-computer keeps below its limit, then the request's own fields
  const room = limit - Math.min(4096, Math.floor(limit / 8)) - 512 - 6 * Buffer.byteLength(path);
  return Math.max(3, Math.floor(room / 4) * 3);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function asText(bytes: Buffer): string | null {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}

async function readFile(link: Link, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const path = args.path as string;
  const encoding = (args.encoding as string | undefined) ?? 'auto';
  const max = ctx.config.maxFileBytes;
  const pieces: Buffer[] = [];
  let offset = 0;
  let state = ADLER_START;
  let size: number | null = null;
  for (;;) {
    const answer = await callMethod(ctx, link, 'read-file', { path, offset, checksum: state });
    if (!answer.ok) return answer.error;
    const r = answer.result;
    if (!isRecord(r) || !isCount(r.size) || r.offset !== offset || !isCount(r.length) || !isCount(r.checksum) || typeof r.data !== 'string') {
      return malformed(link, 'read-file', 'expected {size, offset, length, checksum, data}');
    }
    if (size === null) {
      if (r.size > max) {
        return failedResult(`${path} is ${plural(r.size, 'byte')}; the bridge moves files of at most ${plural(max, 'byte')} (CC_MAX_FILE_BYTES).`, 'invalid_arguments');
      }
      size = r.size;
    } else if (r.size !== size) {
      return failedResult(`${path} changed size while it was being read (${size} -> ${r.size} bytes); read it again.`, 'tool_error');
    }
    if (!isStrictBase64(r.data)) return malformed(link, 'read-file', '"data" is not base64');
    const bytes = Buffer.from(r.data, 'base64');
    if (bytes.length !== r.length) return malformed(link, 'read-file', `"data" holds ${plural(bytes.length, 'byte')}, "length" says ${r.length}`);
    const mine = adler32(bytes, state);
    if (mine !== r.checksum) return mismatch(link, `reading ${path} bytes ${offset}-${offset + bytes.length}`, mine, r.checksum);
    state = mine;
    pieces.push(bytes);
    offset += bytes.length;
    if (offset >= size) break;
    if (bytes.length === 0) return failedResult(`${path} ended at ${offset} of ${plural(size, 'byte')} while it was being read; read it again.`, 'tool_error');
  }
  const content = Buffer.concat(pieces);
  const text = encoding === 'base64' ? null : asText(content);
  if (encoding === 'text' && text === null) {
    return failedResult(`${path} is not valid UTF-8 text (${plural(content.length, 'byte')}); read it with "encoding": "base64".`, 'tool_error');
  }
  const structured = {
    computerId: link.computerId,
    path,
    size: content.length,
    encoding: text === null ? 'base64' : 'text',
    content: text ?? content.toString('base64'),
    checksum: adlerText(state),
  };
  return { ...textResult(structured.content), structuredContent: structured };
}

async function writeFile(link: Link, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const path = args.path as string;
  const append = args.append === true;
  const raw = args.content as string;
  if (args.encoding === 'base64' && !isStrictBase64(raw)) {
    return failedResult('argument "content" is not base64 (A-Z, a-z, 0-9, +, / with = padding, length a multiple of 4).', 'invalid_arguments');
  }
  const content = args.encoding === 'base64' ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (content.length > ctx.config.maxFileBytes) {
    return failedResult(`the content is ${plural(content.length, 'byte')}; the bridge moves files of at most ${plural(ctx.config.maxFileBytes, 'byte')} (CC_MAX_FILE_BYTES).`, 'invalid_arguments');
  }
  const step = writePieceBytes(link, path);
  let state = ADLER_START;
  let start = 0;
  for (let at = 0; at === 0 || at < content.length; at += step) {
    const piece = content.subarray(at, at + step);
    const first = at === 0;
    const params: Record<string, unknown> = { path, data: piece.toString('base64'), checksum: state };
    if (first) Object.assign(params, { first: true, append });
    const answer = await callMethod(ctx, link, 'write-file', params);
    if (!answer.ok) {
      if (first) return answer.error;
      return failedResult(`${textOf(answer.error)} (after ${at} of ${content.length} bytes were written: ${path} is incomplete)`, 'tool_error');
    }
    const r = answer.result;
    if (!isRecord(r) || r.written !== piece.length || !isCount(r.checksum) || !isCount(r.size)) {
      return malformed(link, 'write-file', `expected {written: ${piece.length}, size, checksum}`);
    }
    const mine = adler32(piece, state);
    if (mine !== r.checksum) return mismatch(link, `writing ${path} bytes ${at}-${at + piece.length}`, mine, r.checksum);
    state = mine;
    if (first) start = r.size - piece.length;
    if (content.length === 0) break;
  }
  // read back from the disk: the file now holds, from `start`, exactly what was sent
  let check = ADLER_START;
  for (let at = 0; at === 0 || at < content.length; ) {
    const length = Math.min(VERIFY_PIECE_BYTES, content.length - at);
    const answer = await callMethod(ctx, link, 'write-file', { path, verify: true, offset: start + at, length, checksum: check });
    if (!answer.ok) return answer.error;
    const r = answer.result;
    if (!isRecord(r) || !isCount(r.checksum) || !isCount(r.length)) return malformed(link, 'write-file', 'expected {length, checksum} when verifying');
    if (r.length !== length) {
      return failedResult(`after writing, ${path} on computer ${describe(link.computerId, link.label)} holds ${plural(r.length, 'byte')} at ${start + at} where ${length} ${length === 1 ? 'was' : 'were'} written; it is not what was sent.`, 'tool_error');
    }
    check = r.checksum;
    at += length;
    if (content.length === 0) break;
  }
  if (check !== state) return mismatch(link, `${path} read back from the disk after writing ${plural(content.length, 'byte')}`, state, check);
  const structured = { computerId: link.computerId, path, bytes: content.length, append, checksum: adlerText(state) };
  return {
    ...textResult(`${append ? 'appended' : 'wrote'} ${plural(content.length, 'byte')} to ${path} on computer ${describe(link.computerId, link.label)}; read back and checked (${adlerText(state)}).`),
    structuredContent: structured,
  };
}

function textOf(result: ToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? (c as { text: string }).text : '')).join('\n');
}

export const readFileTool: Tool = safeTool({
  name: 'read-file',
  title: 'Read a file on a computer',
  description:
    'Read a whole file from one linked computer, any size up to CC_MAX_FILE_BYTES, binary-safe, checked end to end with a checksum. ' +
    'Returns UTF-8 text as is, anything else as base64 ("encoding" in structuredContent says which).',
  properties: {
    path: PATH,
    encoding: { type: 'string', enum: ['auto', 'text', 'base64'], description: 'auto (default): text when the file is valid UTF-8, else base64' },
  },
  required: ['path'],
  readOnly: true,
  outputSchema: answerSchema({
    path: { type: 'string' },
    size: { type: 'integer' },
    encoding: { type: 'string', enum: ['text', 'base64'] },
    content: { type: 'string' },
    checksum: { type: 'string' },
  }),
  run: readFile,
});

export const writeFileTool: Tool = safeTool({
  name: 'write-file',
  title: 'Write a file on a computer',
  description:
    'Write (or append to) a file on one linked computer, creating its parent folders; any size up to CC_MAX_FILE_BYTES, binary-safe. ' +
    'The file is read back from the computer\'s disk and checked with a checksum computed on both sides.',
  properties: {
    path: PATH,
    content: { type: 'string', description: 'the content: text, or base64 with "encoding": "base64"' },
    encoding: { type: 'string', enum: ['text', 'base64'], description: 'how "content" is given (default text, written as UTF-8)' },
    append: { type: 'boolean', description: 'add to the end of the file instead of replacing it' },
  },
  required: ['path', 'content'],
  readOnly: false,
  destructive: true,
  outputSchema: answerSchema({
    path: { type: 'string' },
    bytes: { type: 'integer' },
    append: { type: 'boolean' },
    checksum: { type: 'string' },
  }),
  run: writeFile,
});
