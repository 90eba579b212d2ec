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
    const text = JSON.stringify(value) ?? String(value);
    return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}... (${text.length} characters)` : text;
  }
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** A client string put into structured error data: whole up to QUOTE_MAX characters, else its first QUOTE_MAX. */
export function cutString(text: string): string {
  return text.length > QUOTE_MAX ? text.slice(0, QUOTE_MAX) : text;
}

/**
 * A client string set into a message unquoted (`Method not found: x`, `Unknown tool: x`): whole up to
 * QUOTE_MAX characters, else its first QUOTE_MAX and its length, as quoteValue does.
 */
export function cutText(text: string): string {
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}... (${text.length} characters)` : text;
}
