// Helpers of the Streamable HTTP client (http.ts): reading a bounded body, naming a network error,
// telling an answer from other messages.
import { isRecord } from '../jsonrpc/message.js';
import { NotAnsweredError } from '../jsonrpc/client.js';

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
 * connection before the whole answer arrived, so the error says that, with the socket's own reason
 * (`what`: what was cut, default the whole answer; an event stream cut inside an event says so). The
 * request got through, so it is a NotAnsweredError. An abort (timeout, cancel) and an oversize
 * answer keep their own errors.
 */
export function cutShort(err: unknown, what = 'the connection closed before the whole answer arrived'): unknown {
  if (err instanceof OversizeError || (err as Error).name === 'AbortError') return err;
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  return new NotAnsweredError(`${what}${cause ? ` (${cause})` : ''}`);
}

/** The most specific name of a fetch failure: ECONNREFUSED rather than "fetch failed". */
export function networkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/**
 * Why a fetch failed, for the log and the failed request: a server that took the connection and
 * closed it before any answer (undici's UND_ERR_SOCKET, "other side closed") says so; anything else is
 * `cannot reach <shown>: <networkError>`. Before, the first was "cannot reach ...: UND_ERR_SOCKET" as
 * the down reason, and a notification POSTed on it failed with a bare "fetch failed".
 */
export function fetchFailure(err: unknown, shown: string): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'UND_ERR_SOCKET') return `the server closed the connection before answering${cause.message ? ` (${cause.message})` : ''}`;
  return `cannot reach ${shown}: ${networkError(err)}`;
}

/** A JSON-RPC response (or a batch of them): something a pending request is waiting for. */
export function isAnswer(body: unknown): boolean {
  if (Array.isArray(body)) return body.length > 0 && body.every(isAnswer);
  return isRecord(body) && body.jsonrpc === '2.0' && ('result' in body || 'error' in body);
}
