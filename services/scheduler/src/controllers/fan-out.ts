import { GK, bindingKey, type AnyResourceBinding } from "@flotilla/api";
import { bindingClusterIndex, type ObjectStore } from "@flotilla/store";
import { affectedBy, clusterChangeFansOut, mayUnpark } from "../logic/cluster-change.js";
import type { ClusterCache } from "./cluster-cache.js";
import type { BindingTracker } from "./tracker.js";

export interface FanOutDeps {
  clusters: ClusterCache;
  store: Pick<ObjectStore, "list">;
  tracker: BindingTracker;
  schedulerName: string;
}

/**
 * Maps a Cluster wake-up to the bindings to schedule again. The cluster is re-read first, so the
 * snapshot those bindings are scheduled against already holds the change. A change of labels or
 * generation, or a deletion, re-schedules the bindings it concerns (`affectedBy`); any change
 * that may free capacity also retries the bindings parked as Unschedulable. Bindings are listed
 * from the store (both kinds) only when the change fans out, which is rare.
 */
export function clusterKeys(d: FanOutDeps): (name: string) => Promise<string[]> {
  return async (name) => {
    const ch = await d.clusters.refresh(name);
    if (!ch) return [];
    const keys = mayUnpark(ch.before, ch.after) ? d.tracker.drainParked() : [];
    if (!clusterChangeFansOut(ch.before, ch.after)) return keys;
    // a cluster that is gone concerns only the bindings that target it (the store's standard index)
    const opts = ch.after ? {} : { index: bindingClusterIndex(name) };
    for (const gk of [GK.resourceBinding, GK.clusterResourceBinding]) {
      const { items } = await d.store.list<AnyResourceBinding>(gk, opts);
      for (const b of items) if (affectedBy(b, name, ch.before, ch.after, d.schedulerName)) keys.push(bindingKey(b));
    }
    return keys;
  };
}
