/** Settings of the eviction pacing. */
export interface PacingConfig {
  /**
   * RESOURCE_EVICTION_RATE: bindings evicted per second while the fleet is mostly healthy.
   * A deliberate difference from Karmada: its --resource-eviction-rate defaults to 0.5/s (over
   * half an hour for 1,000 bindings); ours defaults to 1000/s, the fleet-health slowdown below
   * being what protects against a mass evacuation. 0.5 restores upstream's pace.
   */
  rate: number;
  /** SECONDARY_RESOURCE_EVICTION_RATE: bindings per second once too many clusters are unhealthy (0 stops evictions). */
  secondaryRate: number;
  /** UNHEALTHY_CLUSTER_THRESHOLD: share of unhealthy clusters above which the secondary rate applies. */
  unhealthyThreshold: number;
}

export interface FleetHealth {
  total: number;
  unhealthy: number;
}

/**
 * The eviction rate for the fleet's health (Kubernetes' node-lifecycle controller: a zone with
 * more than unhealthy-zone-threshold of its nodes unhealthy evicts at the secondary rate), so
 * that losing the control plane's view of most clusters at once (a network cut on our side)
 * cannot evacuate everything.
 */
export function evictionRate(f: FleetHealth, cfg: PacingConfig): number {
  if (f.total > 0 && f.unhealthy / f.total > cfg.unhealthyThreshold) return cfg.secondaryRate;
  return cfg.rate;
}

/**
 * A token bucket with reservations (golang.org/x/time/rate's Reserve): each caller takes a
 * token, going into debt when there is none, and is told how long to wait for its turn, so
 * waiters are served in order at the current rate. Capacity is one second's worth of tokens
 * (at least 1). Pure: the caller passes the time.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(rate: number, now: number) {
    this.tokens = Math.max(1, rate);
    this.last = now;
  }

  private refill(rate: number, now: number): void {
    const cap = Math.max(1, rate);
    if (now > this.last) this.tokens = Math.min(cap, this.tokens + ((now - this.last) * rate) / 1000);
    this.last = Math.max(this.last, now);
  }

  /**
   * Takes a token at `rate` per second and returns how many ms to wait before using it (0: at
   * once). A rate of 0 takes nothing and returns Infinity.
   */
  reserve(rate: number, now: number): number {
    this.refill(rate, now);
    if (!(rate > 0)) return Infinity;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / rate);
  }

  /** Gives back a reserved token that was not used. */
  cancel(): void {
    this.tokens += 1;
  }
}
