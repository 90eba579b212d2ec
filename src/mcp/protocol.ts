// MCP protocol revisions this server speaks.

export const LATEST_PROTOCOL_VERSION = '2025-11-25';
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
/** Streamable HTTP: a request without MCP-Protocol-Version is assumed to be this revision. */
export const ASSUMED_PROTOCOL_VERSION = '2025-03-26';

/** Revisions whose HTTP transport still accepts JSON-RPC batches (removed in 2025-06-18). */
export function allowsBatches(version: string): boolean {
  return version === '2025-03-26';
}

export function negotiate(requested: unknown): string {
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}
