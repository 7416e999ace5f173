import type { Cluster } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { GK } from "./keys.js";

/**
 * Cluster reads for the binding-eviction workers: a read younger than `ttlMs` is shared, and
 * concurrent reads of one cluster are one query. During a mass eviction every worker needs the
 * same cluster; this turns thousands of identical reads into a few per second. A decision may
 * so rest on a cluster read up to `ttlMs` old (an informer cache is as stale as its watch lag);
 * the binding itself is always read fresh, and `invalidate` forces the next read.
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
