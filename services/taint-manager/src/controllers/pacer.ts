import { GK, type Cluster } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { readyCondition } from "../logic/health.js";
import { TokenBucket, evictionRate, type FleetHealth, type PacingConfig } from "../logic/pacing.js";

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => (signal?.removeEventListener("abort", onAbort), resolve()), ms);
    const onAbort = () => (clearTimeout(t), reject(signal!.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Paces evictions in this process: a token bucket at RESOURCE_EVICTION_RATE, or at
 * SECONDARY_RESOURCE_EVICTION_RATE while more than UNHEALTHY_CLUSTER_THRESHOLD of the clusters
 * are not Ready (recounted at most every `refreshMs` while evictions happen). Each replica
 * paces itself: N replicas evict at up to N times the rate.
 */
export class EvictionPacer {
  private bucket: TokenBucket;
  private fleet: FleetHealth = { total: 0, unhealthy: 0 };
  private fleetAt = -Infinity;
  private refreshing?: Promise<void>;
  /** Evictions let through, and the milliseconds spent waiting for them. */
  readonly stats = { granted: 0, waitedMs: 0, rate: 0 };

  constructor(
    private readonly store: ObjectStore,
    private readonly cfg: PacingConfig & { refreshMs: number },
    private readonly now: () => number = Date.now,
  ) {
    this.bucket = new TokenBucket(cfg.rate, now());
    this.stats.rate = cfg.rate;
  }

  /** The fleet's health as last counted. */
  health(): FleetHealth {
    return { ...this.fleet };
  }

  /** The rate in force now (recounting the fleet when the count is older than refreshMs). */
  async rate(): Promise<number> {
    if (this.now() - this.fleetAt >= this.cfg.refreshMs) {
      this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
      await this.refreshing;
    }
    this.stats.rate = evictionRate(this.fleet, this.cfg);
    return this.stats.rate;
  }

  private async refresh(): Promise<void> {
    const { items } = await this.store.list<Cluster>(GK.cluster);
    let total = 0;
    let unhealthy = 0;
    for (const c of items) {
      if (c.metadata.deletionTimestamp) continue;
      total++;
      if (readyCondition(c.status?.conditions)?.status !== "True") unhealthy++;
    }
    this.fleet = { total, unhealthy };
    this.fleetAt = this.now();
  }

  /** Returns the token of an acquire() whose eviction turned out unnecessary. */
  giveBack(): void {
    this.bucket.cancel();
    this.stats.granted--;
  }

  /** Waits for this eviction's turn; returns the milliseconds waited. Rejects when `signal` aborts. */
  async acquire(signal?: AbortSignal): Promise<number> {
    let waited = 0;
    for (;;) {
      const rate = await this.rate();
      const wait = this.bucket.reserve(rate, this.now());
      if (wait === Infinity) {
        // evictions are stopped (rate 0): look again when the fleet is recounted
        const ms = Math.max(50, this.cfg.refreshMs);
        await sleep(ms, signal);
        waited += ms;
        continue;
      }
      if (wait > 0) {
        try {
          await sleep(wait, signal);
        } catch (e) {
          this.bucket.cancel();
          throw e;
        }
        waited += wait;
      }
      this.stats.granted++;
      this.stats.waitedMs += waited;
      return waited;
    }
  }
}
