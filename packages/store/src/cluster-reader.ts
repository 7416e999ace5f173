import { GK, type Cluster } from "@flotilla/api";
import type { ObjectStore } from "./store.js";

/**
 * Shared Cluster reads for workers that all need the same few clusters (a mass eviction names
 * one cluster in thousands of bindings): a read younger than `ttlMs` is shared, and concurrent
 * reads of one cluster are one query. A decision may so rest on a cluster read up to `ttlMs` old
 * (an informer cache is as stale as its watch lag); `invalidate` (on a Cluster wake-up) forces
 * the next read, so a recovery is seen at once.
 */
export class ClusterReader {
  private readonly cache = new Map<string, { at: number; value: Promise<Cluster | undefined> }>();

  constructor(
    private readonly store: ObjectStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(name: string): Promise<Cluster | undefined> {
    const t = this.now();
    const hit = this.cache.get(name);
    if (hit && t - hit.at < this.ttlMs) return hit.value;
    const value = this.store.get<Cluster>({ gk: GK.cluster, namespace: "", name });
    value.catch(() => this.cache.delete(name));
    if (this.cache.size > 1000) this.cache.clear();
    this.cache.set(name, { at: t, value });
    return value;
  }

  invalidate(name: string): void {
    this.cache.delete(name);
  }
}
