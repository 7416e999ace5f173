import { isClusterReady, type Cluster, type Toleration } from "@flotilla/api";
import { toleratesTaint } from "@flotilla/scheduling";

/** What the graceful-eviction controller needs to know about a task's fromCluster. */
export type ClusterState =
  /** Ready and nothing on it would evict the binding again. */
  | "recovered"
  | "unhealthy"
  | "deleting"
  | "gone";

/**
 * A cluster has recovered for a binding when its Ready condition is True and every NoExecute
 * taint on it is tolerated by the binding without tolerationSeconds (so putting the binding
 * back would not evict it again).
 */
export function clusterState(c: Cluster | undefined, tolerations: readonly Toleration[] | undefined): ClusterState {
  if (!c) return "gone";
  if (c.metadata.deletionTimestamp) return "deleting";
  if (!isClusterReady(c)) return "unhealthy";
  for (const taint of c.spec?.taints ?? []) {
    if (taint.effect !== "NoExecute") continue;
    const forever = (tolerations ?? []).some((t) => toleratesTaint(t, taint) && (t.tolerationSeconds === undefined || t.tolerationSeconds === null));
    if (!forever) return "unhealthy";
  }
  return "recovered";
}
