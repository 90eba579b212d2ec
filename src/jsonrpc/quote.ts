// Client-supplied values quoted in error answers and log lines, bounded. Pure; the lowest layer, so the
// MCP dispatch, the HTTP surface and the link can all use it.

/** Longest JSON text of a value quoted in an error message or log line. */
export const QUOTE_MAX = 60;

/**
 * A client value quoted in an error message or log line: a string or scalar as JSON, cut at QUOTE_MAX
 * characters with the full length said; an object or array by its kind only. Neither is walked whole: a
 * value thousands of levels deep made JSON.stringify overflow the stack (a 500), and a long one (a 16 KB
 * header, a request id) was echoed back whole.
 */
export function quoteValue(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = typeof value === 'string' ? quoteWhole(value) : (JSON.stringify(value) ?? String(value));
    return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}... (${text.length} characters)` : text;
  }
  return Array.isArray(value) ? 'an array' : 'an object';
}

/**
 * Characters JSON.stringify leaves as they are that still break, hide or reorder text where it is shown:
 * DEL and the C1 controls (U+0085 ends a line for some readers), the line and paragraph separators
 * U+2028/U+2029, bidirectional controls (U+202E shows the rest of a line backwards), zero-width and
 * other invisible format characters, the byte order mark, and the tag characters and supplementary
 * variation selectors (U+E0000 to U+E01EF: invisible, yet each carries a letter or a byte to a model
 * that reads the text, so a label could hold an instruction nobody sees).
 */
const HIDDEN = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\uddef]/g;

/**
 * A string as JSON text, whole, with HIDDEN characters escaped too (\u2028): one line, shown as it
 * reads, and still valid JSON. For a value that is data (a computer's label in list-computers).
 */
export function quoteWhole(text: string): string {
  return JSON.stringify(text).replace(HIDDEN, escapeChar);
}

// a tag or supplementary variation selector is two UTF-16 units: each is escaped
const escapeUnit = (c: string, i: number): string => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
const escapeChar = (c: string): string => (c.length === 1 ? escapeUnit(c, 0) : escapeUnit(c, 0) + escapeUnit(c, 1));

/** A client string put into structured error data: whole up to QUOTE_MAX characters, else its first QUOTE_MAX. */
export function cutString(text: string): string {
  return text.length > QUOTE_MAX ? text.slice(0, QUOTE_MAX) : text;
}

/**
 * A client string set into a message unquoted (`Method not found: x`, `Unknown tool: x`): whole up to
 * QUOTE_MAX characters, else its first QUOTE_MAX and its length, as quoteValue does.
 */
export function cutText(text: string): string {
  const shown = shownText(text);
  return shown.length > QUOTE_MAX ? `${shown.slice(0, QUOTE_MAX)}... (${text.length} characters)` : shown;
}

/**
 * `text` whole, with control and invisible characters as \uXXXX escapes: a line break, ESC or U+202E
 * would otherwise reach whoever reads it as it is (a message, a terminal).
 */
export function shownText(text: string): string {
  return UNSHOWN.test(text) ? text.replace(UNSHOWN_ALL, escapeChar) : text;
}

/** A control character (C0, C1), or one of HIDDEN: what would break or disguise a line of text. */
const UNSHOWN = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\uddef]/;
const UNSHOWN_ALL = new RegExp(UNSHOWN.source, 'g');

/**
 * A peer's string shown as data in a tool's text (a computer's label, version, peripheral names in
 * list-computers, its pong in probe-computers): as it is, whole (letters of any script, quotes), unless
 * it holds a control or invisible character: then quoteWhole's JSON, so it stays on its own line and
 * cannot pass for another computer's.
 */
export function dataText(text: string): string {
  return UNSHOWN.test(text) ? quoteWhole(text) : text;
}

/**
 * A peer's string named in a message (a computer's label in "wrote 12 bytes to x on computer 5 (Label:
 * base)"): as it is when short (QUOTE_MAX) and free of control and invisible characters, else quoteValue's
 * quoted and cut form.
 */
export function messageText(text: string): string {
  return text.length <= QUOTE_MAX && !UNSHOWN.test(text) ? text : quoteValue(text);
}
