// Who may open a link and who may say hello: caps on connections that have not said hello (total
// and per address), on links (total and per address), and a token bucket of hellos per address.
// Pure bookkeeping with an injectable clock; the listener asks before it does any work.

export interface AdmissionLimits {
  maxLinks: number;
  maxLinksPerAddress: number;
  maxPendingHellos: number;
  maxPendingHellosPerAddress: number;
  /** Hellos per second from one address; bursts up to twice that. */
  helloRate: number;
}

/** One socket's place in the books, from connect to close. */
export interface Ticket {
  readonly address: string;
  stage: 'pending' | 'linked' | 'closed';
}

export interface Refusal {
  /** Stable code for metrics: pending, pending_per_address, links, links_per_address, hello_rate. */
  reason: string;
  message: string;
  /** Seconds after which trying again may work. */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const SWEEP_AT = 1024;

export class Admission {
  private pendingTotal = 0;
  private readonly pendingBy = new Map<string, number>();
  private readonly linkedBy = new Map<string, number>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limits: AdmissionLimits, private readonly now: () => number = Date.now) {}

  get pending(): number {
    return this.pendingTotal;
  }

  linkedFrom(address: string): number {
    return this.linkedBy.get(address) ?? 0;
  }

  /** A socket wants to connect: a ticket, or why not (nothing is counted then). */
  open(address: string): Ticket | Refusal {
    const { maxPendingHellos, maxPendingHellosPerAddress } = this.limits;
    if (this.pendingTotal >= maxPendingHellos) {
      return refusal('pending', `${maxPendingHellos} connections are waiting to say hello (CC_MAX_PENDING_HELLOS); try again shortly`);
    }
    const mine = this.pendingBy.get(address) ?? 0;
    if (mine >= maxPendingHellosPerAddress) {
      return refusal('pending_per_address', `${maxPendingHellosPerAddress} connections from ${address} are waiting to say hello (CC_MAX_PENDING_HELLOS_PER_ADDRESS); try again shortly`);
    }
    this.pendingTotal++;
    this.pendingBy.set(address, mine + 1);
    return { address, stage: 'pending' };
  }

  /**
   * A pending socket said a valid hello. `links` is how many links exist now; `replacing` is the
   * address of the link this hello would replace, or null. On success the ticket becomes linked.
   */
  hello(ticket: Ticket, links: number, replacing: string | null): Refusal | null {
    if (ticket.stage !== 'pending') return null;
    if (!this.takeHello(ticket.address)) {
      return refusal('hello_rate', `too many hellos from ${ticket.address} (CC_HELLO_RATE=${this.limits.helloRate}/s); try again shortly`);
    }
    if (replacing === null && links >= this.limits.maxLinks) {
      return refusal('links', `the bridge already has ${this.limits.maxLinks} links (CC_MAX_LINKS)`, 10);
    }
    const mine = this.linkedBy.get(ticket.address) ?? 0;
    if (replacing !== ticket.address && mine >= this.limits.maxLinksPerAddress) {
      return refusal('links_per_address', `${ticket.address} already has ${this.limits.maxLinksPerAddress} links (CC_MAX_LINKS_PER_ADDRESS)`, 10);
    }
    this.release(ticket);
    ticket.stage = 'linked';
    this.linkedBy.set(ticket.address, mine + 1);
    return null;
  }

  /** The socket is gone (any stage; closing twice is harmless). */
  close(ticket: Ticket): void {
    if (ticket.stage === 'pending') this.release(ticket);
    else if (ticket.stage === 'linked') decrement(this.linkedBy, ticket.address);
    ticket.stage = 'closed';
  }

  private release(ticket: Ticket): void {
    this.pendingTotal--;
    decrement(this.pendingBy, ticket.address);
  }

  private takeHello(address: string): boolean {
    const now = this.now();
    const rate = this.limits.helloRate;
    const burst = rate * 2;
    let bucket = this.buckets.get(address);
    if (!bucket) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(now);
      bucket = { tokens: burst, at: now };
      this.buckets.set(address, bucket);
    }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Forgets buckets that have refilled: they hold nothing a fresh one would not. */
  private sweep(now: number): void {
    const burst = this.limits.helloRate * 2;
    for (const [address, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.limits.helloRate >= burst) this.buckets.delete(address);
    }
  }

  /** How many addresses have a hello bucket (bounded by the sweep). */
  get tracked(): number {
    return this.buckets.size;
  }
}

function refusal(reason: string, message: string, retryAfter = 1): Refusal {
  return { reason, message, retryAfter };
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 0) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

export function isRefusal(value: Ticket | Refusal): value is Refusal {
  return 'reason' in value;
}
