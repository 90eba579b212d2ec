// Streamable HTTP, client side: every message is a POST; the answer is `application/json` or a
// `text/event-stream` whose events carry the messages (most SDK-built servers answer with SSE).
// A session id the server issues on initialize is sent back on every request and DELETEd on close.
// A GET stream, when the server offers one, brings notifications sent outside any request.
import type { Logger } from '../log.js';
import type { CancelSignal } from '../cancel.js';
import type { Transport, TransportHandlers } from '../jsonrpc/client.js';
import { isId, isRecord } from '../jsonrpc/message.js';
import { OversizeError, fetchFailure, isAnswer, readBounded } from './http-body.js';
import { readEvents, type EventSink } from './sse-read.js';
import { listen, resume, type GetHost } from './http-get.js';
import { MAX_NOT_JSON_PER_S } from './stdio.js';
import { CrossOriginRedirectError, TooManyRedirectsError, fetchSameOrigin } from './redirects.js';

export interface HttpTransportOptions {
  url: string;
  /** Extra headers on every request (authorization ...). */
  headers?: Record<string, string>;
  /** Largest answer body or SSE event accepted; a larger one is dropped with a log line. */
  maxMessageBytes: number;
  log?: Logger;
  /** Log prefix: `upstream nether`. */
  name?: string;
  /** Open the GET stream for server notifications after initialize (default true). */
  listen?: boolean;
}

const ACCEPT = 'application/json, text/event-stream';
const DELETE_TIMEOUT_MS = 2000;

/**
 * `url` as messages, logs and /health show it: without user and password, and with each query
 * parameter's value hidden (`?api_key=***`), as hosted MCP servers often take their key there. Before,
 * `cannot reach <url>` carried the key into the log, /health's server reason and the tool errors a
 * model reads.
 */
export function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(an invalid URL)';
  }
  const query = [...parsed.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join('&');
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${query ? `?${query}` : parsed.search ? '?***' : ''}`;
}

export class HttpError extends Error {
  readonly code = 'ERR_UPSTREAM_HTTP';
  constructor(readonly status: number, detail: string) {
    super(`HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'HttpError';
  }
}

export class HttpTransport implements Transport {
  private handlers: TransportHandlers | null = null;
  private sessionId: string | null = null;
  private protocolVersion: string | null = null;
  private readonly inFlight = new Set<AbortController>();
  private closed = false;
  /** Events that were not JSON in the second since notJsonSince (notJson). */
  private notJsonCount = 0;
  private notJsonSince = -Infinity;
  private listening = false;
  /** Where the event streams' messages go (readEvents). */
  private readonly events: EventSink;
  /** What the GET requests (http-get.ts: the GET stream, resumed answers) use of this transport. */
  private readonly getHost: GetHost;

  constructor(private readonly options: HttpTransportOptions) {
    this.events = {
      maxMessageBytes: options.maxMessageBytes,
      log: options.log,
      label: this.label(),
      deliver: (value) => this.deliver(value),
      notJson: () => this.notJson(),
      stopped: () => this.closed,
    };
    this.getHost = {
      url: options.url,
      label: this.label(),
      log: options.log,
      events: this.events,
      closed: () => this.closed,
      headers: (base) => this.headers(base),
      track: () => this.track(),
      untrack: (controller) => this.inFlight.delete(controller),
    };
  }

  /** The session the server issued, if any. */
  get session(): string | null {
    return this.sessionId;
  }

  async start(handlers: TransportHandlers): Promise<void> {
    this.handlers = handlers;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
    // initialize is done: the server may now have notifications for us outside any request
    if (this.options.listen !== false && !this.listening) {
      this.listening = true;
      void listen(this.getHost, 0);
    }
  }

  async send(message: unknown, signal?: CancelSignal): Promise<void> {
    if (this.closed) throw new Error('transport closed');
    const controller = this.track(signal);
    try {
      let res: Response;
      try {
        res = await fetchSameOrigin(this.options.url, {
          method: 'POST',
          headers: this.headers({ 'content-type': 'application/json', accept: ACCEPT }),
          body: JSON.stringify(message),
          signal: controller.signal,
        });
      } catch (err) {
        // the server cannot be reached at all, or sends us elsewhere: the connection is over (the supervisor reconnects)
        if (err instanceof CrossOriginRedirectError || err instanceof TooManyRedirectsError) this.ended(err.message);
        else if (!controller.signal.aborted) {
          const why = this.scrub(fetchFailure(err, shownUrl(this.options.url)));
          this.ended(why);
          // the failed request or notification says the same as the log, not a bare "fetch failed"
          throw new Error(why);
        }
        throw err;
      }
      const issued = res.headers.get('mcp-session-id');
      if (issued && isRecord(message) && message.method === 'initialize') this.sessionId = issued;
      if (res.status === 404 && this.sessionId !== null) {
        await res.body?.cancel();
        this.ended('the server no longer knows our session (HTTP 404)');
        throw new HttpError(404, 'session expired');
      }
      if (res.status === 202 || res.status === 204) {
        await res.body?.cancel();
        return;
      }
      const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
      if (type === 'text/event-stream' && res.ok) {
        // a request's answer comes on this stream, or on the ones it is resumed with
        const waiting = isRecord(message) && typeof message.method === 'string' && isId(message.id) ? message.id : undefined;
        const stream = await readEvents(res, this.events, waiting);
        if (waiting !== undefined && !stream.answered) {
          const end = await resume(this.getHost, waiting, stream, controller.signal);
          if (end === 'dropped') this.handlers?.dropped?.(waiting, this.oversize());
        }
        return;
      }
      let text: string;
      try {
        text = await readBounded(res, this.options.maxMessageBytes);
      } catch (err) {
        // the answer to this request, dropped for its size: the request fails now, not at its timeout
        if (err instanceof OversizeError && isRecord(message) && typeof message.method === 'string' && isId(message.id)) {
          this.handlers?.dropped?.(message.id, this.oversize());
        }
        throw err;
      }
      let body: unknown = undefined;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        // not JSON: reported below
      }
      // an error status may still carry a JSON-RPC answer for the request (our own bridge does)
      if (body !== undefined && isAnswer(body)) {
        this.deliver(body);
        if (res.ok) return;
      }
      if (!res.ok) throw new HttpError(res.status, text.slice(0, 200).replace(/\s+/g, ' ').trim());
      if (body === undefined) throw new Error(`the answer is not JSON (content-type ${type || 'none'})`);
      this.deliver(body);
    } finally {
      this.inFlight.delete(controller);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const controller of this.inFlight) controller.abort();
    if (this.sessionId === null) return;
    try {
      const res = await fetchSameOrigin(this.options.url, {
        method: 'DELETE',
        headers: this.headers({}),
        signal: AbortSignal.timeout(DELETE_TIMEOUT_MS),
      });
      await res.body?.cancel();
    } catch (err) {
      this.options.log?.debug(`${this.label()}: session DELETE failed: ${(err as Error).message}`);
    }
  }

  /** `text` (a fetch error, which may quote the URL) with the URL as shownUrl shows it. */
  private scrub(text: string): string {
    const { url } = this.options;
    let href = url;
    try {
      href = new URL(url).href;
    } catch {
      // shownUrl says so
    }
    const shown = shownUrl(url);
    return text.split(url).join(shown).split(href).join(shown);
  }

  private label(): string {
    return this.options.name ?? shownUrl(this.options.url);
  }

  /**
   * Counts an event that is not JSON: past MAX_NOT_JSON_PER_S in a second the server is not speaking
   * MCP and the connection ends (the supervisor reconnects with backoff). Each costs a thrown
   * SyntaxError: a server streaming them without pause made every request to the bridge take 0.4-2.7 s.
   */
  private notJson(): void {
    const now = Date.now();
    if (now - this.notJsonSince >= 1000) {
      this.notJsonSince = now;
      this.notJsonCount = 0;
    }
    if (++this.notJsonCount > MAX_NOT_JSON_PER_S) this.ended(`it sent more than ${MAX_NOT_JSON_PER_S} events that are not JSON in a second, where every event is an MCP message; closed`);
  }

  private ended(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const controller of this.inFlight) controller.abort();
    this.handlers?.close(reason);
  }

  private headers(base: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...this.options.headers, ...base };
    if (this.sessionId !== null) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== null) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  private track(signal?: CancelSignal): AbortController {
    const controller = new AbortController();
    if (signal) {
      if (signal.aborted) controller.abort();
      else signal.addEventListener('abort', () => controller.abort(), { once: true });
    }
    this.inFlight.add(controller);
    return controller;
  }

  private deliver(value: unknown): void {
    this.handlers?.message(value);
  }

  private oversize(): string {
    return `is over ${this.options.maxMessageBytes} bytes (CC_UPSTREAM_MAX_MESSAGE_BYTES); dropped`;
  }

}
