/**
 * Per-identity token buckets: each key may make `burst` requests at once and `ratePerSecond`
 * sustained. Pure bookkeeping over a clock; idle buckets (full again) are forgotten.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private sweepAt = 0;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes one token for `key`: 0 when allowed, else the seconds until one is there (Retry-After).
   * `share` (0–1): the part of the rate and the burst that is this process's (the rest being
   * other replicas'); the burst never goes below one request.
   */
  take(key: string, share = 1): number {
    const t = this.now();
    const rate = this.ratePerSecond * share;
    const burst = Math.max(1, this.burst * share);
    const b = this.buckets.get(key) ?? { tokens: burst, at: t };
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * rate);
    b.at = t;
    this.buckets.set(key, b);
    if (t >= this.sweepAt) this.sweep(t);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    // a share may grow at the next renewal: never more than a minute
    return Math.max(1, Math.min(60, Math.ceil((1 - b.tokens) / Math.max(rate, 1e-9))));
  }

  get size(): number {
    return this.buckets.size;
  }

  private sweep(t: number): void {
    this.sweepAt = t + 60_000;
    const full = (this.burst / this.ratePerSecond) * 1000;
    for (const [k, b] of this.buckets) if (t - b.at >= full) this.buckets.delete(k);
  }
}

/** Counts what each key holds open (watches), refusing more than `max`. */
export class Slots {
  private readonly held = new Map<string, number>();
  constructor(private readonly max: number) {}

  /** A release function, or undefined when `key` already holds `max` (or `cap`: this process's part of it, when given). */
  acquire(key: string, cap = this.max): (() => void) | undefined {
    const n = this.held.get(key) ?? 0;
    if (n >= Math.min(this.max, cap)) return undefined;
    this.held.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const m = (this.held.get(key) ?? 1) - 1;
      if (m <= 0) this.held.delete(key);
      else this.held.set(key, m);
    };
  }

  count(key: string): number {
    return this.held.get(key) ?? 0;
  }
}
