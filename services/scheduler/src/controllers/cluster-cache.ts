import { GK, type Cluster } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { Informer } from "@flotilla/runtime";
import type { ObjectStore } from "@flotilla/store";

export interface ClusterChange {
  name: string;
  before?: Cluster;
  after?: Cluster;
}

const byName = (a: Cluster, b: Cluster) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1);

/**
 * This replica's snapshot of the Clusters, which every scheduling decision reads: kept by an
 * informer (listed at start, then current from the watch, listed again after a watch error),
 * and re-read for one cluster whenever its wake-up arrives (so the bindings a cluster change fans
 * out to are scheduled against the change even when the watch has not brought it yet). Cluster
 * objects are frozen and replaced, never changed in place, and the snapshot array keeps its
 * identity until something changes: the scheduling package caches what it derives from both by
 * identity.
 *
 * The changes `refresh` and `refreshAll` report are against what the previous of those reads
 * reported (the fan-out's view), not against the informer, which may have brought the change
 * before the wake-up did.
 */
export class ClusterCache {
  private readonly informer: Informer<Cluster>;
  private list: readonly Cluster[] = Object.freeze([]);
  /** The informer changed something since `list` was built. */
  private changed = true;
  /** Each cluster as the last `refresh` of it (or `refreshAll`, or the start) reported it. */
  private readonly reported = new Map<string, Cluster>();
  private refreshing?: Promise<ClusterChange[]>;
  /** When the last completed full list started (performance.now()). */
  private listedAt = -1;

  constructor(
    private readonly store: Pick<ObjectStore, "get" | "list" | "watch">,
    o: { log: Logger },
  ) {
    this.informer = new Informer<Cluster>({
      store,
      gk: GK.cluster,
      transform: (c) => Object.freeze(c) as Cluster,
      onEvent: () => {
        this.changed = true;
      },
      log: o.log,
    });
  }

  async start(): Promise<void> {
    const startedAt = performance.now();
    await this.informer.start();
    this.listedAt = Math.max(this.listedAt, startedAt);
    this.reportAll();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  /** Every known cluster, deleting ones included, sorted by name. */
  snapshot(): readonly Cluster[] {
    if (this.changed) {
      this.changed = false;
      this.list = Object.freeze([...this.informer.entries()].map(([, c]) => c).sort(byName));
    }
    return this.list;
  }

  get(name: string): Cluster | undefined {
    return this.informer.get(name);
  }

  /** Re-reads one cluster; reports what changed (before/after) since the last report of it. */
  async refresh(name: string): Promise<ClusterChange | undefined> {
    await this.informer.refresh(name, () => this.store.get<Cluster>({ gk: GK.cluster, name }));
    return this.report(name);
  }

  /**
   * The snapshot as of a list that started at or after `since` (a `performance.now()` value),
   * listing again if needed; concurrent callers share the lists. A decision that found no
   * cluster fitting asks for this before it is written, with the time it read the binding: every
   * cluster committed before the binding was read is then in the snapshot, so a cluster whose
   * wake-up (and watch event) has not arrived yet is not missed (a NoClusterFit is not retried,
   * and a new cluster alone enqueues nothing).
   */
  async snapshotSince(since: number): Promise<readonly Cluster[]> {
    for (;;) {
      if (this.listedAt >= since) return this.snapshot();
      const inflight = this.refreshing;
      if (inflight) await inflight.catch(() => undefined);
      else await this.refreshAll();
    }
  }

  /** Lists every cluster afresh and reports the changes since the last reports. */
  refreshAll(): Promise<ClusterChange[]> {
    this.refreshing ??= (async () => {
      try {
        const startedAt = performance.now();
        await this.informer.resync();
        this.listedAt = Math.max(this.listedAt, startedAt);
        return this.reportAll();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** What changed for one cluster since it was last reported; it is reported as it is now. */
  private report(name: string): ClusterChange | undefined {
    const before = this.reported.get(name);
    const after = this.informer.get(name);
    if (before === after) return undefined;
    if (after) this.reported.set(name, after);
    else this.reported.delete(name);
    return { name, before, after };
  }

  private reportAll(): ClusterChange[] {
    const changes: ClusterChange[] = [];
    for (const name of new Set([...this.reported.keys(), ...[...this.informer.entries()].map(([n]) => n)])) {
      const ch = this.report(name);
      if (ch) changes.push(ch);
    }
    return changes;
  }
}
