// Newline-delimited JSON framing, as every MCP revision defines stdio: one message per line, no
// embedded newlines. Splits a byte stream into lines with a bound on each line's size (the line's
// own bytes: a \r before its \n is the line ending, so a message of exactly the limit fits with CRLF).
import { isUtf8 } from 'node:buffer';
import { TopLevelIdScanner } from './id-scan.js';
import type { JsonRpcId } from './message.js';

export interface LineReaderOptions {
  /** Largest line kept; a longer one is dropped whole and reported once through onOversize. */
  maxLineBytes: number;
  onLine(line: string): void;
  /** With findIds, `id` is the dropped answer's top-level JSON-RPC id, found without parsing it; else null. */
  onOversize(bytes: number, id: JsonRpcId | null): void;
  /** Scan a line dropped for its size for its id (JSON-RPC streams, not stderr). */
  findIds?: boolean;
  /**
   * Given: a line that is not valid UTF-8 goes here (its byte count) instead of to onLine, rather
   * than being decoded with U+FFFD in place of the bad bytes.
   */
  onInvalidUtf8?(bytes: number): void;
}

export class LineReader {
  private pieces: Buffer[] = [];
  private size = 0;
  /** Bytes of the current line when it is being dropped for its size; -1 while keeping it. */
  private dropping = -1;
  /** Reads the id of the line being dropped as it streams past. */
  private scanner: TopLevelIdScanner | null = null;
  /** Until the first line ends: a UTF-8 byte order mark before it is not part of the message. */
  private first = true;
  /** The last byte of the line being dropped: a \r there is its line ending, not counted. */
  private lastDropped = -1;

  constructor(private readonly options: LineReaderOptions) {}

  /** Feeds bytes; calls onLine for every complete line (without its \n or \r\n), skipping blank ones. */
  push(chunk: Buffer): void {
    let start = 0;
    // the usual chunk of a JSON-RPC stream: whole lines (answers that arrived together), nothing
    // carried over. Decoded in one piece and split as text: one decode per chunk instead of one per
    // line (~1.1k instructions each for a ~120-byte answer, callgrind). Each of its lines is at most
    // the bytes before the last newline, so within the limit when they are. The first line (a BOM) and
    // readers that check UTF-8 line by line (onInvalidUtf8) take the path below.
    if (this.size === 0 && this.dropping < 0 && !this.first && this.options.onInvalidUtf8 === undefined) {
      const last = chunk.lastIndexOf(0x0a);
      if (last > 0 && last <= this.options.maxLineBytes) {
        this.emitText(chunk.toString('utf8', 0, last));
        start = last + 1;
      }
    }
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl !== -1 && this.size === 0 && this.dropping < 0 && this.fits(chunk, start, nl)) {
        // a whole line inside this chunk (nearly every line): decoded in place, no piece kept
        this.emit(chunk, start, nl);
        start = nl + 1;
        continue;
      }
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) return;
      this.finishLine();
      start = nl + 1;
    }
  }

  /** Whether the line `bytes[start, end)`, less a trailing \r, is within the limit. */
  private fits(bytes: Buffer, start: number, end: number): boolean {
    const max = this.options.maxLineBytes;
    return end - start <= max || (end - start === max + 1 && bytes[end - 1] === 0x0d);
  }

  /** The line `bytes[start, end)` without a trailing \r, unless blank. */
  private emit(bytes: Buffer, start: number, end: number): void {
    if (end > start && bytes[end - 1] === 0x0d) end--;
    // a host whose text encoder writes a BOM (PowerShell, .NET) puts one at the start of the stream:
    // JSON.parse refuses it, so that host's first message (its initialize) got a parse error
    if (this.first) {
      this.first = false;
      if (end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf) start += 3;
    }
    const { onInvalidUtf8 } = this.options;
    if (onInvalidUtf8 && !isUtf8(bytes.subarray(start, end))) return onInvalidUtf8(end - start);
    const line = bytes.toString('utf8', start, end);
    if (line.trim() !== '') this.options.onLine(line);
  }

  /** The lines of `text` (whole lines without their last newline), each as emit() gives it. */
  private emitText(text: string): void {
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      let end = nl === -1 ? text.length : nl;
      if (end > from && text.charCodeAt(end - 1) === 0x0d) end--;
      const line = text.slice(from, end);
      if (line.trim() !== '') this.options.onLine(line);
      if (nl === -1) return;
      from = nl + 1;
    }
  }

  /** End of stream: a last line without a newline still counts. */
  end(): void {
    if (this.size > 0 || this.dropping >= 0) this.finishLine();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropping >= 0) {
      this.dropping += piece.length;
      this.lastDropped = piece[piece.length - 1] as number;
      this.scanner?.push(piece);
      return;
    }
    // one byte more than the limit is kept: it may be the \r of a CRLF ending (finishLine decides)
    if (this.size + piece.length > this.options.maxLineBytes + 1) {
      this.dropping = this.size + piece.length;
      this.lastDropped = piece[piece.length - 1] as number;
      if (this.options.findIds) {
        this.scanner = new TopLevelIdScanner();
        for (const kept of this.pieces) this.scanner.push(kept);
        this.scanner.push(piece);
      }
      this.pieces = [];
      this.size = 0;
      return;
    }
    this.pieces.push(piece);
    this.size += piece.length;
  }

  private finishLine(): void {
    if (this.dropping >= 0) {
      const bytes = this.dropping - (this.lastDropped === 0x0d ? 1 : 0);
      const id = this.scanner?.id ?? null;
      this.dropping = -1;
      this.scanner = null;
      this.first = false;
      this.options.onOversize(bytes, id);
      return;
    }
    const bytes = this.pieces.length === 1 ? (this.pieces[0] as Buffer) : Buffer.concat(this.pieces);
    this.pieces = [];
    this.size = 0;
    if (!this.fits(bytes, 0, bytes.length)) {
      // the byte kept past the limit was not a \r: the line is over it by one
      this.first = false;
      this.options.onOversize(bytes.length, this.options.findIds ? idOf(bytes) : null);
      return;
    }
    this.emit(bytes, 0, bytes.length);
  }
}

/** One message as one line: JSON.stringify never emits a raw newline, so the line is the frame. */
export function encodeLine(message: unknown): string {
  return JSON.stringify(message) + '\n';
}

/** The last method requestLine quoted, and its JSON (every call of an upstream tool is 'tools/call'). */
let lastMethod = '';
let lastQuoted = '""';
/** The last tool name a ToolCallParams line quoted, and its JSON. */
let lastName = '';
let lastNameQuoted = '""';

/**
 * The params of a tools/call request: `{ name, arguments }`, as JSON.stringify writes any object
 * (its two own fields in this order). requestLine writes it with the name quoted once per name and
 * only `arguments` run through JSON.stringify: stringifying the nested object whole cost ~4.2k
 * instructions a call against ~1.6k (callgrind, issue 16), the same bytes.
 */
export class ToolCallParams {
  readonly name: string;
  readonly arguments: Record<string, unknown>;

  constructor(name: string, args: Record<string, unknown>) {
    this.name = name;
    this.arguments = args;
  }
}

/** `params` as JSON.stringify(params) writes it. */
function paramsJson(params: unknown): string | undefined {
  if (params instanceof ToolCallParams) {
    const args: string | undefined = JSON.stringify(params.arguments);
    if (args !== undefined) {
      if (params.name !== lastName) {
        lastNameQuoted = JSON.stringify(params.name);
        lastName = params.name;
      }
      return `{"name":${lastNameQuoted},"arguments":${args}}`;
    }
  }
  return JSON.stringify(params);
}

/**
 * The line of the request `{ jsonrpc: '2.0', id, method, params }` (params left out when undefined),
 * exactly the text encodeLine gives for that object, with only `params` run through JSON.stringify:
 * the envelope is written as text (issue 16: stringifying it was most of the ~0.7 us encodeLine
 * took per upstream call). `id` is a JsonRpcClient's counter, a safe integer.
 */
export function requestLine(id: number, method: string, params: unknown): string {
  if (method !== lastMethod) {
    lastQuoted = JSON.stringify(method);
    lastMethod = method;
  }
  // undefined for params that JSON.stringify leaves out of an object (undefined, a function, a symbol)
  const json: string | undefined = params === undefined ? undefined : paramsJson(params);
  return json === undefined ? `{"jsonrpc":"2.0","id":${id},"method":${lastQuoted}}\n` : `{"jsonrpc":"2.0","id":${id},"method":${lastQuoted},"params":${json}}\n`;
}

/** The top-level id of a line dropped for its size, found without parsing it. */
function idOf(bytes: Buffer): JsonRpcId | null {
  const scanner = new TopLevelIdScanner();
  scanner.push(bytes);
  return scanner.id;
}
