// Tool calls per caller per second (MCP_CALL_RATE, bursts of MCP_CALL_BURST): one token bucket per
// caller key, shared by every surface (MCP over HTTP and stdio, REST), checked by callTool before a
// call runs. The surfaces name the caller (see rateKey in surfaces/rate-key.ts); this module only
// counts. Buckets that have refilled hold nothing a fresh one would not, so they are forgotten when
// the table has doubled since the last sweep: the table holds about the callers of the last
// burst / rate seconds, and a sweep costs O(1) per new key amortised.

interface Bucket {
  tokens: number;
  /** The clock (Date.now()) at the last refill. */
  at: number;
}

/** Sweeps start once this many callers have buckets. */
const FIRST_SWEEP = 1024;

export class CallRate {
  private readonly buckets = new Map<string, Bucket>();
  private sweepAt = FIRST_SWEEP;
  /** Tokens gained per ms. */
  private readonly perMs: number;

  /**
   * `rate`: calls a second each caller may make over time; `burst`: how many it may make at once
   * (the bucket's size, a fresh caller's start).
   */
  constructor(
    readonly rate: number,
    readonly burst: number,
  ) {
    this.perMs = rate / 1000;
  }

  /**
   * Takes one call for `key` at `now` (ms, Date.now(): callTool reads the clock once for this and its
   * metrics; a clock read is about two thirds of a check's cost): 0 when it may run, else the ms until
   * it may (at least 1). A clock set back refills nothing until it passes the last refill again.
   */
  take(key: string, now: number): number {
    const bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= this.sweepAt) this.sweep(now);
      this.buckets.set(key, { tokens: this.burst - 1, at: now });
      return 0;
    }
    const tokens = now > bucket.at ? Math.min(this.burst, bucket.tokens + (now - bucket.at) * this.perMs) : bucket.tokens;
    bucket.at = now;
    if (tokens >= 1) {
      bucket.tokens = tokens - 1;
      return 0;
    }
    bucket.tokens = tokens;
    // (less a hair: 0.01 / 0.01 is 1.0000000000000009 in floating point)
    return Math.max(1, Math.ceil((1 - tokens) / this.perMs - 1e-9));
  }

  /** Callers with a bucket now (bounded by the sweep). */
  get tracked(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.burst) this.buckets.delete(key);
    }
    this.sweepAt = Math.max(FIRST_SWEEP, this.buckets.size * 2);
  }
}
