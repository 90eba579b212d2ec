// One Streamable HTTP event stream read to its end (http.ts: a POST's SSE answer, a resumed stream, the
// GET stream): every message event delivered, oversized ones dropped, and how the stream ended.
import type { Logger } from '../log.js';
import { isRecord } from '../jsonrpc/message.js';
import { SseParser } from './sse.js';
import { cutShort } from './http-body.js';

/** Bytes of a stream handled in one turn of the event loop before the reader lets others go first. */
const YIELD_BYTES = 65_536;

/** How an event stream ended: whether it carried the awaited answer, and how to resume it. */
export interface StreamEnd {
  answered: boolean;
  /** Messages it delivered. */
  events: number;
  /** Events dropped for their size (CC_UPSTREAM_MAX_MESSAGE_BYTES). */
  dropped: number;
  lastEventId?: string;
  retryMs?: number;
}

/** Where a stream's messages go, and its bounds and log. */
export interface EventSink {
  /** Largest event accepted (CC_UPSTREAM_MAX_MESSAGE_BYTES). */
  maxMessageBytes: number;
  log?: Logger | undefined;
  /** Log prefix: `upstream nether`. */
  label: string;
  deliver(value: unknown): void;
  /** An event was not JSON (counted: too many end the connection). */
  notJson?(): void;
  /** The connection ended: what is left of the stream is not parsed. */
  stopped?(): boolean;
}

/** Delivers every message event of an SSE body until the server ends it; says whether `waiting` was answered. */
export async function readEvents(res: Response, sink: EventSink, waiting?: string | number): Promise<StreamEnd> {
  let answered = false;
  let events = 0;
  let dropped = 0;
  const parser = new SseParser(
    sink.maxMessageBytes,
    (event) => {
      // events without data prime reconnection (an id and nothing else): no message in them
      if (event.event !== 'message' || event.data.trim() === '' || sink.stopped?.()) return;
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        sink.log?.warn(`${sink.label} sent an SSE event that is not JSON; ignored`);
        sink.notJson?.();
        return;
      }
      events++;
      if (waiting !== undefined && isRecord(value) && value.id === waiting && !('method' in value)) answered = true;
      sink.deliver(value);
    },
    (bytes) => {
      dropped++;
      sink.log?.warn(`${sink.label} sent an SSE event of ${bytes} bytes, over the ${sink.maxMessageBytes}-byte limit; dropped`);
    },
  );
  const decoder = new TextDecoder();
  if (res.body) {
    try {
      let sinceYield = 0;
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        parser.push(decoder.decode(chunk, { stream: true }));
        // a server that streams without pause: the next chunks wait for the next turn of the event
        // loop once 64 KiB were handled in this one, so links, calls and other servers are served
        sinceYield += chunk.byteLength;
        if (sinceYield >= YIELD_BYTES) {
          sinceYield = 0;
          await new Promise(setImmediate);
        }
      }
    } catch (err) {
      // inside an event (a notification, or the answer itself): say so, not "the whole answer"
      throw parser.inEvent ? cutShort(err, 'the server closed its event stream in the middle of an event') : cutShort(err);
    }
  }
  parser.push(decoder.decode());
  parser.end();
  const end: StreamEnd = { answered, events, dropped };
  if (parser.lastEventId !== undefined && parser.lastEventId !== '') end.lastEventId = parser.lastEventId;
  if (parser.retryMs !== undefined) end.retryMs = parser.retryMs;
  return end;
}
