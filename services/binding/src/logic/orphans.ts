import { clusterOfExecutionNamespace, type ResourceBindingSpec, type Work } from "@flotilla/api";

/** The member cluster a Work is for (from its execution namespace). */
export function clusterOfWork(w: Pick<Work, "metadata">): string {
  return clusterOfExecutionNamespace(w.metadata.namespace ?? "") ?? "";
}

/**
 * The clusters whose Works a binding keeps: `spec.clusters` ∪ `requiredBy[].clusters` ∪ the
 * `fromCluster` of every graceful-eviction task whose purgeMode is not Directly (so an evicted
 * cluster keeps its Work until the eviction controller drops the task).
 */
export function keptClusters(spec: ResourceBindingSpec | undefined): Set<string> {
  const keep = new Set<string>();
  for (const c of spec?.clusters ?? []) if (c.name) keep.add(c.name);
  for (const snap of spec?.requiredBy ?? []) for (const c of snap.clusters ?? []) if (c.name) keep.add(c.name);
  for (const t of spec?.gracefulEvictionTasks ?? []) if (t.fromCluster && t.purgeMode !== "Directly") keep.add(t.fromCluster);
  return keep;
}

/** The clusters of Directly-purged eviction tasks whose Works must be gone before the binding syncs again. */
export function directlyPurgedClusters(spec: ResourceBindingSpec | undefined): Set<string> {
  const keep = keptClusters(spec);
  const out = new Set<string>();
  for (const t of spec?.gracefulEvictionTasks ?? []) if (t.fromCluster && t.purgeMode === "Directly" && !keep.has(t.fromCluster)) out.add(t.fromCluster);
  return out;
}

/** The binding's Works on clusters it no longer keeps and not already being deleted: to delete. */
export function orphanWorks<W extends Pick<Work, "metadata">>(works: readonly W[], spec: ResourceBindingSpec | undefined): W[] {
  const keep = keptClusters(spec);
  return works.filter((w) => !w.metadata.deletionTimestamp && !keep.has(clusterOfWork(w)));
}

/** Works still present (deleting or not) on Directly-purged clusters: while any exists, the sync waits. */
export function worksBlockingDirectPurge<W extends Pick<Work, "metadata">>(works: readonly W[], spec: ResourceBindingSpec | undefined): W[] {
  const directly = directlyPurgedClusters(spec);
  if (directly.size === 0) return [];
  return works.filter((w) => directly.has(clusterOfWork(w)));
}
