// A value whose JSON text was written when it was made (issue 16). V8's JSON.stringify (node 20) costs
// ~700 instructions a call and ~500-1,000 per property, each key written out and looked up for a
// toJSON again in every answer: exec-lua's answer `{jsonrpc, id, result: {content: [{type, text}],
// structuredContent: {...}}}` took ~12,000 instructions of a ~150,000-instruction call (callgrind).
// A tool that knows its result's shape writes the result's text by template as it builds it (`written`)
// and the HTTP answer splices that text into the envelope (`jsonText`). Pure; the lowest layer, so the
// tools and the surfaces can both use it.

/** Key of a result's written text; a symbol, so JSON never carries it. */
const WRITTEN: unique symbol = Symbol('written JSON');

/**
 * The JSON text of one object, as JSON.stringify writes it. It holds the object it was written for:
 * a copy made by spreading (`{...result, more}`, as 2026-07-28's `complete` does) carries the symbol
 * too but is another object, and gets JSON.stringify as before.
 */
class Written {
  constructor(
    readonly of: object,
    readonly text: string,
  ) {}
}

/**
 * Marks `value` as having `text` for its JSON (exactly JSON.stringify(value)); returns `value`. The
 * caller must not change the value (nor anything it holds) afterwards.
 */
export function written<T extends object>(value: T, text: string): T {
  (value as { [WRITTEN]?: Written })[WRITTEN] = new Written(value, text);
  return value;
}

/** The text written for `value` itself (not for an object it was copied from), or undefined. */
export function writtenText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const w = (value as { [WRITTEN]?: Written })[WRITTEN];
  return w !== undefined && w.of === value ? w.text : undefined;
}

/** Printable ASCII but `"` and `\\`: a string of these is its own JSON between quotes. */
const PLAIN = /^[ !#-[\]-~]*$/;

/**
 * Whether `text` is printable ASCII without `"` and `\\`, so its JSON is itself between quotes. A short
 * one is tested in a loop (a regex test costs ~330 instructions before its first character, the loop
 * ~5 a character); a long one by the regex.
 */
export function isPlainText(text: string): boolean {
  if (text.length > 64) return PLAIN.test(text);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** A string as JSON.stringify writes it; plain text (most) by template. */
export function stringText(text: string): string {
  return isPlainText(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * JSON.stringify(value), with the written text of a JSON-RPC result response's result spliced in:
 * `{jsonrpc: '2.0', id, result}` (these keys alone, in this order, as resultResponse makes it), whose
 * result was made with `written`. Anything else is JSON.stringify'd whole.
 */
export function jsonText(value: unknown): string {
  const result = typeof value === 'object' && value !== null ? (value as { result?: unknown }).result : undefined;
  const text = writtenText(result);
  if (text === undefined || !isResultResponse(value as Record<string, unknown>)) return JSON.stringify(value);
  const id = (value as { id: unknown }).id;
  return `{"jsonrpc":"2.0","id":${typeof id === 'number' ? (Number.isFinite(id) ? String(id) : 'null') : stringText(id as string)},"result":${text}}`;
}

/** An own `jsonrpc: '2.0'`, a string or number `id` and `result`, and no other key (in this order). */
function isResultResponse(value: Record<string, unknown>): boolean {
  if (Array.isArray(value) || value.jsonrpc !== '2.0' || (typeof value.id !== 'number' && typeof value.id !== 'string')) return false;
  let i = 0;
  for (const key in value) {
    if (key !== (i === 0 ? 'jsonrpc' : i === 1 ? 'id' : i === 2 ? 'result' : '')) return false;
    i++;
  }
  return i === 3;
}
