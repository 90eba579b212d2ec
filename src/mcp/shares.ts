// Who holds the slots of a limited set of notification streams (GET /mcp streams, subscriptions/listen),
// so one client cannot take them all. Pure: no I/O, no clock. Each item belongs to a client (a GET
// stream to its Mcp-Session-Id; a subscription to its auth token or stdio connection) or to nobody
// the bridge can name (null: counted in the total, never grouped). A client's entry goes away with
// its last item, so the map never holds more clients than items.

/** What to do with one more item: open it, first end `victim` to make room, or refuse it. */
export type Admission<T> =
  | { kind: 'open' }
  | { kind: 'replace'; victim: T; why: Why; held: number }
  | { kind: 'refuse' };

/**
 * Why a victim ends: its client is over its own cap ('client'), the total is reached and the
 * newcomer's client ends its own oldest ('own', ownFirst), or the total is reached and the victim's
 * client holds the most ('total').
 */
export type Why = 'client' | 'own' | 'total';

export interface SharesOptions {
  /** Most items open at once, every client together (MCP_MAX_GET_STREAMS, MCP_MAX_SUBSCRIPTIONS). */
  max: number;
  /** Most items one client holds; one more ends its oldest (the newest wins). */
  perClient: number;
  /**
   * At the total: a client that already holds one ends its own oldest first (GET streams: only a
   * session's newest stream gets its notices, so its older ones are spares).
   */
  ownFirst: boolean;
}

const NONE: readonly never[] = Object.freeze([]);

export class Shares<T> {
  /** Each named client's items, oldest first. */
  private readonly clients = new Map<string, T[]>();
  /** Items of no named client. */
  private readonly unnamed = new Set<T>();
  private total = 0;

  constructor(private readonly options: SharesOptions) {}

  /** Items open now, every client's and the unnamed ones. */
  get size(): number {
    return this.total;
  }

  /** Clients holding at least one item now. */
  get clientCount(): number {
    return this.clients.size;
  }

  /** Items `client` holds now. */
  held(client: string | null): number {
    return client === null ? 0 : (this.clients.get(client)?.length ?? 0);
  }

  /**
   * Whether one more item of `client` may open, and what must end first. Over the client's own cap
   * its oldest ends. At the total, an item of the client holding the most ends when that client
   * holds at least two more than this one would (a fair share, so two clients never take turns
   * ending each other's); otherwise the newcomer is refused.
   */
  admit(client: string | null): Admission<T> {
    const own = client === null ? undefined : this.clients.get(client);
    const mine = own?.length ?? 0;
    if (own && mine >= this.options.perClient) return { kind: 'replace', victim: own[0]!, why: 'client', held: mine };
    if (this.total < this.options.max) return { kind: 'open' };
    if (own && this.options.ownFirst) return { kind: 'replace', victim: own[0]!, why: 'own', held: mine };
    let most: T[] | undefined;
    for (const items of this.clients.values()) if (!most || items.length > most.length) most = items;
    if (most && most.length > mine + 1) return { kind: 'replace', victim: most[0]!, why: 'total', held: most.length };
    return { kind: 'refuse' };
  }

  /** The items `client` holds, oldest first (empty for null or a client holding none). */
  itemsOf(client: string | null): readonly T[] {
    return (client === null ? undefined : this.clients.get(client)) ?? NONE;
  }

  add(client: string | null, item: T): void {
    this.total++;
    if (client === null) {
      this.unnamed.add(item);
      return;
    }
    const items = this.clients.get(client);
    if (items) items.push(item);
    else this.clients.set(client, [item]);
  }

  /** Forgets `item`; false when it was not held (already removed). */
  remove(client: string | null, item: T): boolean {
    if (client === null) {
      if (!this.unnamed.delete(item)) return false;
      this.total--;
      return true;
    }
    const items = this.clients.get(client);
    const at = items ? items.indexOf(item) : -1;
    if (at < 0) return false;
    this.total--;
    items!.splice(at, 1);
    if (items!.length === 0) this.clients.delete(client);
    return true;
  }
}
