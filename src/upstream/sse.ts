// Server-sent events, the part Streamable HTTP uses: `data:` lines joined by "\n" make one event's
// payload; a blank line ends the event; `event:` names it (MCP messages are unnamed or "message").
// Pure and incremental: feed text as it arrives.

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export class SseParser {
  private buffer = '';
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

  push(text: string): void {
    this.buffer += text;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // a lone \r at the very end may be the first half of \r\n: wait for more
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      this.line(line);
    }
    if (this.buffer.length > this.maxEventBytes) {
      // one endless line: count it as oversize and skip to its end
      this.oversize = true;
      this.dataBytes += this.buffer.length;
      this.buffer = '';
    }
  }

  /** End of stream: an event without its blank line is not dispatched (as the SSE rules say). */
  end(): void {
    this.buffer = '';
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
