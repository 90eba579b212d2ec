// The GET requests of the Streamable HTTP client (http.ts): the GET event stream that brings server
// notifications outside any request, reopened with backoff, and a request's answer stream resumed
// with `Last-Event-ID` when the server ended it before the answer.
import type { Logger } from '../log.js';
import { readEvents, type EventSink, type StreamEnd } from './sse-read.js';
import { CrossOriginRedirectError, TooManyRedirectsError, fetchSameOrigin } from './redirects.js';

const MAX_LISTEN_BACKOFF_MS = 30_000;

/** What these requests use of their transport (HttpTransport). */
export interface GetHost {
  url: string;
  /** Log prefix: `upstream nether`. */
  label: string;
  log: Logger | undefined;
  /** Where the streams' messages go. */
  events: EventSink;
  /** The transport is closed: stop. */
  closed(): boolean;
  /** The transport's headers (session, protocol version, the config's) with `base`. */
  headers(base: Record<string, string>): Record<string, string>;
  /** A controller the transport aborts when it closes; untrack it when done. */
  track(): AbortController;
  untrack(controller: AbortController): void;
}

const contentType = (res: Response) => (res.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();

/**
 * The server ended a request's event stream before the answer (it may, once it sent an event id):
 * reopen it with GET and `Last-Event-ID` after the delay it asked for (`retry:`, else 1 s, longer
 * after each stream that brought nothing) until the answer arrives, the stream cannot be resumed,
 * or the request is given up (its timeout or cancel aborts `signal`). 'dropped': its answer was
 * among the events dropped for their size (the request fails now, not at its timeout).
 */
export async function resume(host: GetHost, id: string | number, first: StreamEnd, signal: AbortSignal): Promise<'dropped' | undefined> {
  let stream = first;
  let idle = 0;
  for (;;) {
    if (stream.dropped > 0) return 'dropped';
    if (stream.lastEventId === undefined) throw new Error('the server ended its event stream without answering and without an event id to resume from');
    const waitMs = Math.min(MAX_LISTEN_BACKOFF_MS, (stream.retryMs ?? 1000) * 2 ** idle);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, waitMs);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
    if (signal.aborted || host.closed()) return undefined;
    const res = await fetchSameOrigin(host.url, {
      method: 'GET',
      headers: host.headers({ accept: 'text/event-stream', 'last-event-id': stream.lastEventId }),
      signal,
    });
    if (!res.ok || contentType(res) !== 'text/event-stream') {
      await res.body?.cancel();
      throw new Error(`the server ended its event stream without answering and resuming it failed (HTTP ${res.status})`);
    }
    const next = await readEvents(res, host.events, id);
    if (next.answered) return undefined;
    idle = next.events > 0 ? 0 : idle + 1;
    stream = { ...next, lastEventId: next.lastEventId ?? stream.lastEventId, retryMs: next.retryMs ?? stream.retryMs };
  }
}

/** The GET stream: server notifications outside requests, until the transport closes. A 405 means the server has none. */
export async function listen(host: GetHost, failures: number): Promise<void> {
  while (!host.closed()) {
    const controller = host.track();
    try {
      const res = await fetchSameOrigin(host.url, { method: 'GET', headers: host.headers({ accept: 'text/event-stream' }), signal: controller.signal });
      if (!res.ok || contentType(res) !== 'text/event-stream') {
        await res.body?.cancel();
        host.log?.debug(`${host.label}: no GET event stream (HTTP ${res.status}); notifications arrive only with answers`);
        return;
      }
      failures = 0;
      await readEvents(res, host.events);
    } catch (err) {
      if (host.closed()) return;
      if (err instanceof CrossOriginRedirectError || err instanceof TooManyRedirectsError) {
        // asking again would be sent away again: no GET stream, as when the server has none
        host.log?.warn(`${host.label}: GET event stream not opened: ${err.message}`);
        return;
      }
      failures++;
      host.log?.debug(`${host.label}: GET event stream failed: ${(err as Error).message}`);
    } finally {
      host.untrack(controller);
    }
    if (host.closed()) return;
    // the stream ended or failed: reopen it after 1 s, waiting longer after each failure in a row
    const waitMs = Math.min(MAX_LISTEN_BACKOFF_MS, 1000 * 2 ** failures);
    await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
  }
}
