// Which protocol revision each --stdio message speaks. A message that names a protocol version in
// `_meta` other than a 2025 one is 2026-07-28 (an unserved one gets -32022); anything else speaks
// the 2025 revision initialize settled on, so a server/discover without `_meta` is -32601 as it is
// over HTTP without MCP-Protocol-Version. The revision of the last message read also decides how an
// error for an unreadable id is written (omitsUnreadableId).
import { isRecord, withoutNullIds } from '../jsonrpc/message.js';
import type { Reply } from '../mcp/exchange.js';
import { declaredVersion } from '../mcp/modern.js';
import { MODERN_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, omitsUnreadableId } from '../mcp/protocol.js';

/**
 * A message handled as 2026-07-28: one whose `_meta` declares a protocol version other than a served
 * 2025 revision (an unserved one then gets -32022). One declaring a 2025 revision is served as that
 * revision, as over HTTP (where MCP-Protocol-Version picks it): a server answers -32022 only for a
 * revision it does not serve.
 */
export const isModern = (body: unknown): boolean => {
  if (!isRecord(body)) return false;
  const declared = declaredVersion(body);
  return declared !== undefined && !(typeof declared === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(declared));
};

/** The revisions one stdio connection has spoken so far. */
export class StdioEra {
  /** The 2025 revision initialize settled on; null before (or in 2026-07-28, which has none). */
  negotiated: string | null = null;
  /**
   * Whether initialize succeeded: the plain list_changed is sent only after that, to a client that
   * was told listChanged (a 2026-07-28 client gets its notices on subscriptions/listen instead).
   */
  ready = false;
  /**
   * The revision of the last message read (2026-07-28, else what initialize settled on): an error for
   * a line or request whose id could not be read leaves the id out in 2025-11-25 and 2026-07-28 and
   * sends null otherwise (see omitsUnreadableId).
   */
  spoken: string | null = null;

  /** A message read: whether it is 2026-07-28, and the revision its answer is written for. */
  read(body: unknown): { modern: boolean; revision: string | null } {
    const modern = isModern(body);
    const revision = (this.spoken = modern ? MODERN_PROTOCOL_VERSION : this.negotiated);
    return { modern, revision };
  }

  /** An answer as `revision` (by default the last one spoken) writes an unreadable id. */
  forRevision(body: unknown, revision = this.spoken): unknown {
    return omitsUnreadableId(revision) ? withoutNullIds(body) : body;
  }

  /** Settles the revision once initialize has been answered with one. */
  answered(body: unknown, reply: Reply): void {
    if (!isRecord(body) || reply.status >= 300 || reply.body === null || Array.isArray(reply.body)) return;
    const answer = reply.body as { result?: unknown };
    if (!isRecord(answer.result)) return;
    // only after initialize, whose answer declared listChanged: 2026-07-28 sends change notices only on
    // a subscriptions/listen stream (with its subscription id), so a client speaking only that
    // revision gets these plain ones never
    if (body.method === 'initialize' && typeof answer.result.protocolVersion === 'string') {
      this.negotiated = this.spoken = answer.result.protocolVersion;
      this.ready = true;
    }
  }
}
