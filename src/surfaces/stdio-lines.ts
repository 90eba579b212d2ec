// The lines read from stdin, as serveStdio (stdio.ts) takes them: each one a message's text, or a
// line refused unread (over MCP_MAX_BODY_BYTES, or not UTF-8), and what each becomes: the parsed
// message, or the error answer for a line that is not one.
import { INVALID_REQUEST, PARSE_ERROR, errorResponse } from '../jsonrpc/message.js';
import { LineReader } from '../jsonrpc/ndjson.js';

/** A line that is not valid UTF-8, by its byte count: answered -32700, not decoded with U+FFFD. */
export class InvalidUtf8 {
  constructor(readonly bytes: number) {}
}

/** A line read and not handled yet, the byte count of one skipped for its size, or one not UTF-8. */
export type Pending = string | number | InvalidUtf8;

/** A reader of stdin's bytes that hands each line (or refused line) to `push`, in order. */
export function stdioLineReader(maxLineBytes: number, push: (line: Pending) => void): LineReader {
  return new LineReader({
    maxLineBytes,
    onLine: (line) => push(line),
    onOversize: (bytes) => push(bytes),
    // a byte that is not UTF-8 would become U+FFFD, silently changing a tool's arguments (Lua code,
    // a file's text) or the id echoed back
    onInvalidUtf8: (bytes) => push(new InvalidUtf8(bytes)),
  });
}

/**
 * What a line read is: its message (`body`, and the line's length in UTF-16 units), or the error
 * answer (`error`, its id null) for a line that is not valid UTF-8, is over `maxLineBytes`, or is not JSON.
 */
export function parseLine(line: Pending, maxLineBytes: number): { body: unknown; textLength: number } | { error: unknown } {
  if (line instanceof InvalidUtf8) return { error: errorResponse(null, PARSE_ERROR, `Parse error: the line (${line.bytes} bytes) is not valid UTF-8, which every MCP message is; skipped`) };
  if (typeof line === 'number') return { error: errorResponse(null, INVALID_REQUEST, `Invalid Request: a line of ${line} bytes is over the limit of ${maxLineBytes} (MCP_MAX_BODY_BYTES); skipped`) };
  try {
    return { body: JSON.parse(line), textLength: line.length };
  } catch {
    return { error: errorResponse(null, PARSE_ERROR, 'Parse error: the line is not valid JSON') };
  }
}
