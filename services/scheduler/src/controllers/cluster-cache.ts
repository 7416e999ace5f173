import { GK, type Cluster } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import type { ObjectStore } from "@flotilla/store";
import { compareRv } from "../logic/keys.js";

export interface ClusterChange {
  name: string;
  before?: Cluster;
  after?: Cluster;
}

const byName = (a: Cluster, b: Cluster) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1);

/**
 * This replica's snapshot of the Clusters, which every scheduling decision reads. Listed in full
 * at start and every `refreshMs`, and re-read for one cluster whenever its wake-up arrives (so
 * the bindings a cluster change fans out to are scheduled against the change). Cluster objects
 * are replaced, never changed in place, and the snapshot array keeps its identity until
 * something changes: the scheduling package caches what it derives from both by identity.
 */
export class ClusterCache {
  private readonly byName = new Map<string, Cluster>();
  private list: readonly Cluster[] = [];
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<ClusterChange[]>;
  /** When the last completed full list started (performance.now()). */
  private listedAt = -1;

  constructor(
    private readonly store: Pick<ObjectStore, "get" | "list">,
    private readonly o: { refreshMs: number; log: Logger },
  ) {}

  async start(): Promise<void> {
    await this.refreshAll();
    if (this.o.refreshMs > 0) {
      this.timer = setInterval(() => void this.refreshAll().catch((e) => this.o.log.warn({ err: e }, "cluster snapshot refresh failed")), this.o.refreshMs);
      this.timer.unref();
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Every known cluster, deleting ones included, sorted by name. */
  snapshot(): readonly Cluster[] {
    return this.list;
  }

  get(name: string): Cluster | undefined {
    return this.byName.get(name);
  }

  /** Re-reads one cluster; reports what changed (before/after) when its resourceVersion moved. */
  async refresh(name: string): Promise<ClusterChange | undefined> {
    const after = await this.store.get<Cluster>({ gk: GK.cluster, name });
    return this.apply(name, after);
  }

  /**
   * The snapshot as of a list that started at or after `since` (a `performance.now()` value),
   * listing again if needed; concurrent callers share the lists. A decision that found no
   * cluster fitting asks for this before it is written, with the time it read the binding: every
   * cluster committed before the binding was read is then in the snapshot, so a cluster whose
   * wake-up has not arrived yet is not missed (a NoClusterFit is not retried, and a new cluster
   * alone enqueues nothing).
   */
  async snapshotSince(since: number): Promise<readonly Cluster[]> {
    for (;;) {
      if (this.listedAt >= since) return this.list;
      const inflight = this.refreshing;
      if (inflight) await inflight.catch(() => undefined);
      else await this.refreshAll();
    }
  }

  /** Lists every cluster and reports the changes against the snapshot. */
  refreshAll(): Promise<ClusterChange[]> {
    this.refreshing ??= (async () => {
      try {
        const startedAt = performance.now();
        const { items } = await this.store.list<Cluster>(GK.cluster);
        const changes: ClusterChange[] = [];
        const seen = new Set<string>();
        for (const c of items) {
          const name = c.metadata.name ?? "";
          seen.add(name);
          const ch = this.apply(name, c, false);
          if (ch) changes.push(ch);
        }
        for (const name of [...this.byName.keys()]) {
          if (!seen.has(name)) {
            const ch = this.apply(name, undefined, false);
            if (ch) changes.push(ch);
          }
        }
        if (changes.length) this.rebuild();
        this.listedAt = Math.max(this.listedAt, startedAt);
        return changes;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private apply(name: string, after: Cluster | undefined, rebuild = true): ClusterChange | undefined {
    const before = this.byName.get(name);
    if (!after && !before) return undefined;
    // a list that started before a single re-read must not put an older version back
    if (after && before && compareRv(after.metadata.resourceVersion ?? "", before.metadata.resourceVersion ?? "") <= 0) return undefined;
    if (after) this.byName.set(name, Object.freeze(after));
    else this.byName.delete(name);
    if (rebuild) this.rebuild();
    return { name, before, after };
  }

  private rebuild(): void {
    this.list = Object.freeze([...this.byName.values()].sort(byName));
  }
}
