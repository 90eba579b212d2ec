// Helpers of the Streamable HTTP client (http.ts): reading a bounded body, naming a network error,
// telling an answer from other messages.
import { isRecord } from '../jsonrpc/message.js';

/** A body over the size limit, refused unread. */
export class OversizeError extends Error {}

/** Reads a body as text, refusing one past `maxBytes` (declared or counted) with an OversizeError. */
export async function readBounded(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw new OversizeError(`the answer is ${declared} bytes; at most ${maxBytes} are accepted`);
  }
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) {
        await res.body.cancel().catch(() => {});
        throw new OversizeError(`the answer is over ${maxBytes} bytes; dropped`);
      }
      chunks.push(Buffer.from(chunk));
    }
  } catch (err) {
    throw cutShort(err);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A body read that failed part-way: undici says only "terminated" when the server closes the
 * connection before the whole answer arrived, so the error says that, with the socket's own reason.
 * An abort (timeout, cancel) and an oversize answer keep their own errors.
 */
export function cutShort(err: unknown): unknown {
  if (err instanceof OversizeError || (err as Error).name === 'AbortError') return err;
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  return new Error(`the connection closed before the whole answer arrived${cause ? ` (${cause})` : ''}`);
}

/** The most specific name of a fetch failure: ECONNREFUSED rather than "fetch failed". */
export function networkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** A JSON-RPC response (or a batch of them): something a pending request is waiting for. */
export function isAnswer(body: unknown): boolean {
  if (Array.isArray(body)) return body.length > 0 && body.every(isAnswer);
  return isRecord(body) && body.jsonrpc === '2.0' && ('result' in body || 'error' in body);
}
