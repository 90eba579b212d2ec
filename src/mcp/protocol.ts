// MCP protocol revisions this server speaks.
//
// Legacy revisions (2025-03-26 .. 2025-11-25) open with an `initialize` handshake; the modern
// revision (2026-07-28) has none: every request carries its version in `_meta` (and on HTTP in the
// MCP-Protocol-Version header). Both eras are served on the same endpoint.

export const LATEST_PROTOCOL_VERSION = '2025-11-25';
/** Legacy revisions `initialize` can negotiate, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
/** The modern (handshake-less) revision. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Every revision served, newest first: the `supported` list of -32022 and server/discover. */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];
/** Streamable HTTP: a request without MCP-Protocol-Version is assumed to be this revision. */
export const ASSUMED_PROTOCOL_VERSION = '2025-03-26';

/** Revisions whose HTTP transport still accepts JSON-RPC batches (removed in 2025-06-18). */
export function allowsBatches(version: string): boolean {
  return version === '2025-03-26';
}

/**
 * Whether an error answering a request whose id could not be read leaves `id` out (2025-11-25 and
 * 2026-07-28, whose schema has no null id) instead of sending `"id": null` (the earlier revisions,
 * JSON-RPC 2.0, and a revision not served or not known).
 */
export function omitsUnreadableId(version: string | null | undefined): boolean {
  return version === '2025-11-25' || version === MODERN_PROTOCOL_VERSION;
}

export function isServed(version: string): boolean {
  return SERVED_PROTOCOL_VERSIONS.includes(version);
}

export function isModern(version: string): boolean {
  return version === MODERN_PROTOCOL_VERSION;
}

/** initialize's answer: the legacy revision asked for when served, else the newest legacy one. */
export function negotiate(requested: unknown): string {
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}
