// MCP over stdin/stdout (`--stdio`): one JSON message per line each way, as every MCP revision
// defines stdio. The same Dispatcher as HTTP answers; only protocol messages are ever written to
// `output` (logs go to the logger, on stderr). Both eras: a message that names a protocol version in
// `_meta` is 2026-07-28 (an unserved one gets -32022), anything else is the 2025 revisions, so a
// server/discover without `_meta` is -32601 as it is over HTTP without MCP-Protocol-Version.
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { INVALID_REQUEST, PARSE_ERROR, errorResponse, isRecord } from '../jsonrpc/message.js';
import { LineReader, encodeLine } from '../jsonrpc/ndjson.js';
import type { Logger } from '../log.js';
import { Cancellation } from '../cancel.js';
import { callKey, type Caller, type Dispatcher, type Reply } from '../mcp/dispatch.js';
import { handleModern } from '../mcp/modern-dispatch.js';
import { declaredVersion } from '../mcp/modern.js';
import { ASSUMED_PROTOCOL_VERSION, allowsBatches } from '../mcp/protocol.js';

export interface StdioOptions {
  input: Readable;
  output: Writable;
  dispatcher: Dispatcher;
  log: Logger;
  /** Largest line accepted (MCP_MAX_BODY_BYTES); a longer one is answered -32600 and skipped. */
  maxLineBytes: number;
  /** Tool set changes, once per burst (ToolRegistry.watch); returns the unwatch function. */
  onToolsChanged(listener: () => void): () => void;
}

export interface StdioSurface {
  /** Resolves once input has ended (EOF) and every answer still due has been written. */
  readonly ended: Promise<void>;
}

export const LIST_CHANGED = 'notifications/tools/list_changed';

const isModern = (body: unknown): boolean => isRecord(body) && declaredVersion(body) !== undefined;

export function serveStdio(options: StdioOptions): StdioSurface {
  const { input, output, dispatcher, log } = options;
  // EOF: the client is gone, so its calls in flight are cancelled (their cancel frames go out)
  const gone = new Cancellation();
  const caller: Caller = { scope: `stdio:${randomUUID()}`, signal: gone, listChanged: true };
  // 2026-07-28 subscriptions/listen: every subscription shares stdout, told apart by the subscription
  // id in each message's _meta; notifications/cancelled for its request id ends one (the dispatcher
  // finds it under callKey), EOF ends them all
  caller.listen = {
    problem: null,
    key: (id) => callKey(caller, id),
    // the one client on this pipe (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT)
    client: () => caller.scope,
    open: (_key, id) => ({
      send: write,
      end(final, reason) {
        // the server ends it (shutdown, or room for a newer one): the listen request's answer, then
        // the cancel notice that closes a stdio subscription (stdio has no stream of its own to close)
        write(final);
        write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
      },
    }),
  };
  /** The 2025 revision initialize settled on; null before (or in 2026-07-28, which has none). */
  let negotiated: string | null = null;
  /**
   * Whether initialize succeeded: the plain list_changed is sent only after that, to a client that
   * was told listChanged (a 2026-07-28 client gets its notices on subscriptions/listen instead).
   */
  let ready = false;
  const handling = new Set<Promise<void>>();

  const write = (message: unknown) => {
    if (output.destroyed || output.writableEnded) return;
    output.write(encodeLine(message));
  };
  output.on('error', (err: Error) => log.warn(`stdout: ${err.message}; answers are no longer delivered`));

  const afterReply = (body: unknown, reply: Reply) => {
    if (!isRecord(body) || reply.status >= 300 || reply.body === null || Array.isArray(reply.body)) return;
    const answer = reply.body as { result?: unknown };
    if (!isRecord(answer.result)) return;
    // only after initialize, whose answer declared listChanged: 2026-07-28 sends change notices only on
    // a subscriptions/listen stream (with its subscription id), so a client speaking only that
    // revision gets these plain ones never
    if (body.method === 'initialize' && typeof answer.result.protocolVersion === 'string') {
      negotiated = answer.result.protocolVersion;
      ready = true;
    }
  };

  const handle = async (body: unknown) => {
    const modern = isModern(body);
    const reply = modern
      ? await handleModern(dispatcher, body, undefined, caller)
      : await dispatcher.handleBody(body, allowsBatches(negotiated ?? ASSUMED_PROTOCOL_VERSION), caller);
    // the status is HTTP's business; on stdio only the JSON-RPC answer travels, and none for a call
    // the client cancelled with notifications/cancelled (see Reply.cancelled)
    if (reply.body !== null && !reply.cancelled) write(reply.body);
    afterReply(body, reply);
  };

  const reader = new LineReader({
    maxLineBytes: options.maxLineBytes,
    onLine(line) {
      let body: unknown;
      try {
        body = JSON.parse(line);
      } catch {
        write(errorResponse(null, PARSE_ERROR, 'Parse error: the line is not valid JSON'));
        return;
      }
      const done: Promise<void> = handle(body).catch((err: Error) => {
        // Dispatcher answers its own failures; this is a last guard so the stream goes on
        log.error(`stdio message failed: ${err.stack ?? err.message}`);
      });
      handling.add(done);
      void done.finally(() => handling.delete(done));
    },
    onOversize(bytes) {
      write(errorResponse(null, INVALID_REQUEST, `Invalid Request: a line of ${bytes} bytes is over the limit of ${options.maxLineBytes} (MCP_MAX_BODY_BYTES); skipped`));
    },
  });

  // one notice per burst of changes (a reload may swap several sources at once): the registry's watch
  const unsubscribe = options.onToolsChanged(() => {
    if (ready && !gone.aborted) write({ jsonrpc: '2.0', method: LIST_CHANGED });
  });

  input.on('data', (chunk: Buffer | string) => reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  const ended = new Promise<void>((resolve) => {
    const finish = () => {
      input.off('end', finish);
      input.off('close', finish);
      input.off('error', onError);
      reader.end();
      unsubscribe();
      // the transport closed: its subscriptions end without an answer
      dispatcher.subscriptions.cancelAll(`${caller.scope}\u0000`);
      gone.abort();
      // answers already due (a quick request on the last line, calls just cancelled) still go out
      void Promise.allSettled([...handling]).then(() => resolve());
    };
    const onError = (err: Error) => {
      log.warn(`stdin: ${err.message}; treated as the end of input`);
      finish();
    };
    input.once('end', finish);
    input.once('close', finish);
    input.once('error', onError);
  });
  return { ended };
}
