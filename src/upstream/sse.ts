// Server-sent events, the part Streamable HTTP uses: `data:` lines joined by "\n" make one event's
// payload; a blank line ends the event; `event:` names it (MCP messages are unnamed or "message").
// Pure and incremental: feed text as it arrives.

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

const LINE_BREAK = /\r\n|\r|\n/g;

export class SseParser {
  /**
   * The line not ended yet, as the pieces it came in: joined once, when its end comes. (Appending each
   * chunk to one string and searching it again from its start took time in the square of a line's
   * length: a 4 MiB event in 16 KiB chunks cost 1.5 s.)
   */
  private parts: string[] = [];
  private pending = 0;
  /** The last text ended with \r: a \n starting the next is the second half of its \r\n. */
  private afterCr = false;
  private data: string[] = [];
  private dataBytes = 0;
  private event = '';
  private id: string | undefined;
  private retry: number | undefined;
  private oversize = false;

  /**
   * `maxEventBytes` bounds one event's data; a larger event is dropped whole and reported through
   * `onOversize` instead of `onEvent`.
   */
  constructor(
    private readonly maxEventBytes: number,
    private readonly onEvent: (event: SseEvent) => void,
    private readonly onOversize: (bytes: number) => void,
  ) {}

  /** The last event id the stream set (kept across events, as SSE's last-event-ID buffer is). */
  get lastEventId(): string | undefined {
    return this.id;
  }

  /** The reconnection delay the stream asked for with `retry:`, in ms. */
  get retryMs(): number | undefined {
    return this.retry;
  }

  /** Whether the text so far ends inside an event: a line begun, or fields read without the blank line that ends them. */
  get inEvent(): boolean {
    return this.pending > 0 || this.parts.length > 0 || this.data.length > 0 || this.event !== '' || this.oversize;
  }

  push(text: string): void {
    // nothing (a chunk that ended inside a character): a \r before it is still waiting for its \n
    if (text === '') return;
    let from = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(0) === 0x0a) from = 1;
    }
    // only the new text is searched: the start of the line is in `parts`
    const breaks = LINE_BREAK;
    for (;;) {
      breaks.lastIndex = from;
      const match = breaks.exec(text);
      if (!match) break;
      const piece = text.slice(from, match.index);
      let line = piece;
      if (this.parts.length > 0) {
        this.parts.push(piece);
        line = this.parts.join('');
        this.parts = [];
        this.pending = 0;
      }
      from = match.index + match[0].length;
      // a \r at the very end may be the first half of \r\n
      if (match[0] === '\r' && from === text.length) this.afterCr = true;
      this.line(line);
    }
    if (from < text.length) {
      this.parts.push(from === 0 ? text : text.slice(from));
      this.pending += text.length - from;
    }
    if (this.pending > this.maxEventBytes) {
      // one endless line: count it as oversize and skip to its end
      this.oversize = true;
      this.dataBytes += this.pending;
      this.parts = [];
      this.pending = 0;
    }
  }

  /** End of stream: an event without its blank line is not dispatched (as the SSE rules say). */
  end(): void {
    this.parts = [];
    this.pending = 0;
    this.afterCr = false;
    this.reset();
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.dataBytes += value.length + 1;
        if (this.dataBytes > this.maxEventBytes) this.oversize = true;
        if (!this.oversize) this.data.push(value);
        return;
      case 'event':
        this.event = value;
        return;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        return;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        return;
      default:
        // unknown fields are ignored
        return;
    }
  }

  private dispatch(): void {
    if (this.oversize) this.onOversize(this.dataBytes);
    else if (this.data.length > 0) {
      const event: SseEvent = { event: this.event || 'message', data: this.data.join('\n') };
      if (this.id !== undefined) event.id = this.id;
      this.onEvent(event);
    }
    this.reset();
  }

  private reset(): void {
    this.data = [];
    this.dataBytes = 0;
    this.event = '';
    this.oversize = false;
  }
}
