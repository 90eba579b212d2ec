// Writing answers and reading bodies: shared by every HTTP route.
import { ServerResponse, type IncomingMessage } from 'node:http';
import { jsonText } from '../jsonrpc/written.js';

const WRITER = Symbol('answer writer');

/** Answers are written in pieces of this many bytes, each after the client took the previous ones. */
export const SEND_CHUNK_BYTES = 64 * 1024;
/** Default of MCP_SEND_STALL_MS: a client that takes none of its answer for this long is cut off. */
export const SEND_STALL_MS = 30_000;

/**
 * How one HTTP listener writes answers: the cut-off (MCP_SEND_STALL_MS) and counts for /metrics. The
 * listener hands it to each response with `AnswerWriter.attach`; `sendJson` finds it there.
 */
export class AnswerWriter {
  /** Answers still being written (their client has not taken them all). */
  readonly writing = new Set<ServerResponse>();
  /** Clients cut off for taking nothing of their answer for `stallMs`. */
  cutOff = 0;

  constructor(readonly stallMs: number = SEND_STALL_MS) {}

  /**
   * The ServerResponse class a listener should create its responses with (node:http's
   * `ServerResponse` option): each response finds this writer on its prototype, so nothing is
   * stored per response.
   */
  responseClass(): typeof ServerResponse {
    const writer = this;
    class AnsweredResponse extends ServerResponse {
      get [WRITER](): AnswerWriter {
        return writer;
      }
    }
    return AnsweredResponse as typeof ServerResponse;
  }

  /** Bytes waiting in the sockets of the answers being written: at most about one piece each. */
  queuedBytes(): number {
    let total = 0;
    for (const res of this.writing) total += res.writableLength;
    return total;
  }
}

const DEFAULT_WRITER = new AnswerWriter();

/**
 * Serialises `body` (throws, writing nothing, if it cannot be) and writes it with backpressure: the
 * bridge holds one copy of the answer and hands the socket a piece at a time, so a client that does
 * not read holds at most its own answer plus one piece in the socket, and only until the listener's
 * `stallMs` pass without the client taking a piece; then the socket is destroyed and the answer freed.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  // JSON.stringify(body), a result written when it was made spliced in (src/jsonrpc/written.ts)
  const text = jsonText(body);
  // a small answer (nearly all) is handed to node as the string: node then writes the head and the
  // body in one write, with no Buffer copy and no writev (issue 16: ~0.6 KB less allocated per call).
  // Not a bigger one: node joins head and body into one string, which copies the body on the JS heap
  // (a probe over 100 computers allocated ~15 KB more per call that way)
  if (text.length <= STRING_ANSWER_MAX) {
    res.writeHead(status, headFields('application/json', Buffer.byteLength(text, 'utf8'), headers));
    endWith(res, text);
    // the client must still take it in time
    if (res.writableLength > 0) paced(res, EMPTY, true);
    return;
  }
  sendBytes(res, status, 'application/json', Buffer.from(text, 'utf8'), headers);
}

/**
 * `res.end(text)` in one write of head and body. node's end(chunk) corks the socket, writes head and
 * body, then an empty chunk (the callback that finishes the response) and uncorks: two chunks, so
 * one writev, whose string chunks node copies into a new buffer and whose request it builds in C++
 * (issue 16: ~13,000 of the ~165,000 instructions of an exec-lua or probe call at N=1). Written and
 * uncorked before end(), the pair leaves in one plain write, and end() (nothing left in the socket)
 * finishes the response on the next tick as node does for any response already written out. A
 * response that is not the socket's current one yet (pipelined requests: node assigns it the socket
 * later and has none to cork) is ended as before.
 */
function endWith(res: ServerResponse, text: string): void {
  const socket = res.socket;
  if (socket === null || socket.writableCorked !== 0) {
    res.end(text, 'utf8');
    return;
  }
  socket.cork();
  res.write(text, 'utf8');
  socket.uncork();
  res.end();
}

const EMPTY = Buffer.alloc(0);
/** Longest answer (in UTF-16 units) written as a string; at most 12 KiB of UTF-8, one piece. */
const STRING_ANSWER_MAX = 4096;

function headFields(contentType: string, length: number, headers: Record<string, string> | undefined): Record<string, string | number> {
  return headers ? { 'content-type': contentType, 'content-length': length, ...headers } : { 'content-type': contentType, 'content-length': length };
}

/**
 * `body` as a complete Server-Sent Events stream of one `message` event (for clients whose Accept
 * takes text/event-stream but not JSON). JSON text has no raw line breaks, so it is one data line.
 */
export function sendSseMessage(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = Buffer.from(`event: message\ndata: ${jsonText(body)}\n\n`, 'utf8');
  sendBytes(res, status, 'text/event-stream', data, { 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...headers });
}

function sendBytes(res: ServerResponse, status: number, contentType: string, data: Buffer, headers: Record<string, string> | undefined): void {
  res.writeHead(status, headFields(contentType, data.length, headers));
  // most answers are one piece the socket takes at once: no closures and no timer for them
  if (data.length <= SEND_CHUNK_BYTES) {
    res.end(data);
    if (res.writableLength === 0) return;
  }
  paced(res, data, data.length <= SEND_CHUNK_BYTES);
}

/** Writes what is left of `data` a piece at a time (`ended`: all of it is written, wait for it to leave). */
function paced(res: ServerResponse, data: Buffer, ended: boolean): void {
  const writer = (res as { [WRITER]?: AnswerWriter })[WRITER] ?? DEFAULT_WRITER;
  let offset = 0;
  let stall: NodeJS.Timeout | undefined;
  const wait = (event: 'drain' | 'finish', next: () => void) => {
    // only an answer that waits for its client needs cleaning up if the connection closes first
    if (!writer.writing.has(res)) res.once('close', done);
    writer.writing.add(res);
    stall = setTimeout(() => {
      writer.cutOff++;
      res.destroy();
    }, writer.stallMs);
    res.once(event, next);
  };
  const done = () => {
    clearTimeout(stall);
    writer.writing.delete(res);
  };
  const pump = () => {
    clearTimeout(stall);
    while (data.length - offset > SEND_CHUNK_BYTES) {
      const chunk = data.subarray(offset, offset + SEND_CHUNK_BYTES);
      offset += chunk.length;
      if (!res.write(chunk)) return wait('drain', pump);
    }
    res.end(offset === 0 ? data : data.subarray(offset));
    // the last piece too must be taken in time: a client that never reads does not keep its socket
    if (res.writableLength > 0) wait('finish', done);
    else done();
  };
  if (ended) wait('finish', done);
  else pump();
}

export class BodyTooLargeError extends Error {
  readonly code = 'ERR_BODY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`Request body exceeds ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Reads the whole body, refusing (without reading on) once it passes `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    // most bodies arrive in one chunk: no copy then
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}
