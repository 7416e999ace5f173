import { GK, rateShare, type Cluster } from "@flotilla/api";
import type { FleetShares, ObjectStore } from "@flotilla/store";
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

/** A turn is reserved at most this far ahead when the rate is shared with other replicas. */
const RESERVE_AHEAD_MS = 200;

/** The fleet-wide limit the taint-manager replicas share (`limit_leases`). */
export const EVICTION_RATE_LIMIT = "taint-manager/eviction-rate";

/**
 * Paces evictions: a token bucket at this replica's share of RESOURCE_EVICTION_RATE, or of
 * SECONDARY_RESOURCE_EVICTION_RATE while more than UNHEALTHY_CLUSTER_THRESHOLD of the clusters
 * are not Ready (recounted at most every `refreshMs` while evictions happen). The rate is the
 * fleet's: with `shares`, each replica leases a share of it in proportion to its demand (the
 * evictions asked for per second, plus those waiting now), renewed every few seconds
 * (`FleetShares`), so N replicas together evict at the configured rate, not N times it. Without
 * `shares` (a lone process in tests) the whole rate is this process's.
 */
export class EvictionPacer {
  private bucket: TokenBucket;
  private fleet: FleetHealth = { total: 0, unhealthy: 0 };
  private fleetAt = -Infinity;
  private refreshing?: Promise<void>;
  private waiting = 0;
  /** Evictions let through, and the milliseconds spent waiting for them; `rate` is the fleet's, `share` this replica's part of it. */
  readonly stats = { granted: 0, waitedMs: 0, rate: 0, share: 0 };

  constructor(
    private readonly store: ObjectStore,
    private readonly cfg: PacingConfig & { refreshMs: number },
    private readonly now: () => number = Date.now,
    private readonly shares?: FleetShares,
  ) {
    this.bucket = new TokenBucket(cfg.rate, now());
    this.stats.rate = cfg.rate;
    this.stats.share = cfg.rate;
    shares?.levels(EVICTION_RATE_LIMIT, () => ({ waiting: this.waiting }));
  }

  /** This replica's share of the fleet's rate `rate` now. */
  private share(rate: number): number {
    if (!this.shares) return (this.stats.share = rate);
    const { me, others } = this.shares.snapshot(EVICTION_RATE_LIMIT);
    return (this.stats.share = rateShare(rate, me, others));
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
    this.waiting++;
    try {
      return await this.take(signal);
    } finally {
      this.waiting--;
    }
  }

  private async take(signal?: AbortSignal): Promise<number> {
    let waited = 0;
    this.shares?.ask(EVICTION_RATE_LIMIT);
    // the first eviction of a while waits for this replica's lease (one statement, then none)
    if (this.shares && !this.shares.known(EVICTION_RATE_LIMIT)) await this.shares.ready(EVICTION_RATE_LIMIT);
    for (;;) {
      const rate = this.share(await this.rate());
      const wait = this.bucket.reserve(rate, this.now());
      if (wait === Infinity) {
        // evictions are stopped (rate 0): look again when the fleet is recounted
        const ms = Math.max(50, this.cfg.refreshMs);
        await sleep(ms, signal);
        waited += ms;
        continue;
      }
      if (wait > RESERVE_AHEAD_MS && this.shares) {
        // a turn further ahead than this is not kept: the share may change meanwhile (the
        // replicas' demands move), so wait a little and ask again at the share then in force
        this.bucket.cancel();
        await sleep(RESERVE_AHEAD_MS, signal);
        waited += RESERVE_AHEAD_MS;
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
