// Finds the top-level "id" of a JSON-RPC message too large to parse: a message dropped for its size
// can still fail the request it answers at once instead of leaving it to its timeout. A byte-at-a-time
// scan that keeps only a few counters and the id's own text (at most MAX_ID_BYTES), so a message of
// any size costs no memory; it never builds the value.
import type { JsonRpcId } from './message.js';

const MAX_ID_BYTES = 256;
const MAX_KEY_BYTES = 6;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Expect = 'key' | 'colon' | 'value' | 'comma';

export class TopLevelIdScanner {
  private depth = 0;
  private inString = false;
  private escape = false;
  private expect: Expect = 'key';
  /** Text of the key being read at the top level (its first MAX_KEY_BYTES + 1 bytes). */
  private key: number[] | null = null;
  private lastKeyIsId = false;
  /** Raw text of the id value being captured; null when not capturing. */
  private capture: number[] | null = null;
  private found: string | null = null;
  /** False once the text is not a JSON object at all. */
  private object = true;
  /** A top-level "method" key was seen: the message is a request or notification, not an answer. */
  hasMethod = false;

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length && this.object; i++) this.byte(chunk[i] as number);
  }

  /** The top-level id seen so far (the last one, as JSON.parse would keep), or null; null for a request. */
  get id(): JsonRpcId | null {
    if (this.found === null || this.hasMethod) return null;
    try {
      const value: unknown = JSON.parse(this.found);
      return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : null;
    } catch {
      return null;
    }
  }

  private byte(b: number): void {
    if (this.capture && this.capture.length > MAX_ID_BYTES) this.capture = null;
    if (this.inString) {
      this.capture?.push(b);
      if (this.escape) {
        this.escape = false;
      } else if (b === BACKSLASH) {
        this.escape = true;
      } else if (b === QUOTE) {
        this.inString = false;
        if (this.key) {
          const key = Buffer.from(this.key).toString('latin1');
          this.lastKeyIsId = key === 'id';
          if (key === 'method') this.hasMethod = true;
          this.key = null;
          this.expect = 'colon';
        } else if (this.capture) {
          this.finishCapture();
        }
        return;
      }
      if (this.key && this.key.length <= MAX_KEY_BYTES) this.key.push(b);
      return;
    }
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
      if (this.capture) this.finishCapture();
      return;
    }
    if (this.depth === 0) {
      if (b === 0x7b) this.depth = 1; // {
      else this.object = false;
      return;
    }
    if (this.depth === 1) {
      if (this.expect === 'key' && b === QUOTE) {
        this.inString = true;
        this.key = [];
        return;
      }
      if (this.expect === 'colon' && b === 0x3a) {
        this.expect = 'value';
        return;
      }
      if (this.expect === 'value') {
        this.expect = 'comma';
        if (this.lastKeyIsId) this.capture = [];
      }
      if (b === 0x2c || b === 0x7d) {
        // , or } ends a scalar value at the top level
        if (this.capture) this.finishCapture();
        this.expect = 'key';
        if (b === 0x7d) this.depth = 0;
        return;
      }
    }
    if (b === QUOTE) {
      this.inString = true;
      this.capture?.push(b);
      return;
    }
    if (b === 0x7b || b === 0x5b) {
      this.capture = null; // an object or array is no id
      this.depth++;
      return;
    }
    if (b === 0x7d || b === 0x5d) {
      this.depth--;
      return;
    }
    this.capture?.push(b);
  }

  private finishCapture(): void {
    const capture = this.capture as number[];
    this.capture = null;
    this.found = Buffer.from(capture).toString('utf8');
  }
}
