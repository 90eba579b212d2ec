// Writing answers and reading bodies: shared by every HTTP route.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Answers are written in pieces of this many bytes, each after the client took the previous ones. */
export const SEND_CHUNK_BYTES = 64 * 1024;
/** A client that takes no bytes of its answer for this long is cut off, and the answer freed. */
export const SEND_STALL_MS = 30_000;

/**
 * Serialises `body` (throws, writing nothing, if it cannot be) and writes it with backpressure: the
 * bridge holds one copy of the answer and hands the socket a chunk at a time, so a client that does
 * not read holds at most its own answer, and only until `stallMs` pass without progress.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  stallMs: number = SEND_STALL_MS,
): void {
  sendBytes(res, status, 'application/json', Buffer.from(JSON.stringify(body), 'utf8'), headers, stallMs);
}

/**
 * `body` as a complete Server-Sent Events stream of one `message` event (for clients whose Accept
 * takes text/event-stream but not JSON). JSON text has no raw line breaks, so it is one data line.
 */
export function sendSseMessage(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  stallMs: number = SEND_STALL_MS,
): void {
  const data = Buffer.from(`event: message\ndata: ${JSON.stringify(body)}\n\n`, 'utf8');
  sendBytes(res, status, 'text/event-stream', data, { 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...headers }, stallMs);
}

function sendBytes(
  res: ServerResponse,
  status: number,
  contentType: string,
  data: Buffer,
  headers: Record<string, string>,
  stallMs: number,
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': data.length, ...headers });
  if (data.length <= SEND_CHUNK_BYTES) {
    res.end(data);
    return;
  }
  let offset = 0;
  let stall: NodeJS.Timeout | undefined;
  const pump = () => {
    clearTimeout(stall);
    while (offset < data.length) {
      const chunk = data.subarray(offset, offset + SEND_CHUNK_BYTES);
      offset += chunk.length;
      if (offset >= data.length) {
        res.end(chunk);
        return;
      }
      if (!res.write(chunk)) {
        stall = setTimeout(() => res.destroy(), stallMs);
        res.once('drain', pump);
        return;
      }
    }
  };
  res.once('close', () => clearTimeout(stall));
  pump();
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
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
