import { EvictionReasonApplicationFailure, clusterOfExecutionNamespace, type GracefulEvictionTask, type ResourceBindingSpec, type ResourceBindingStatus, type Work } from "@flotilla/api";

/** The member cluster a Work is for (from its execution namespace). */
export function clusterOfWork(w: Pick<Work, "metadata">): string {
  return clusterOfExecutionNamespace(w.metadata.namespace ?? "") ?? "";
}

/**
 * A Directly task of an application failover whose old copy is the last one running: no other
 * scheduled cluster reports its copy Healthy yet. Deliberately unlike upstream (Karmada #7455:
 * a Directly purge deletes the only copy before anything replaced it, and for good when nothing
 * can be scheduled elsewhere), such a copy is kept until a replacement is healthy; the
 * graceful-eviction controller then drops the task (or at its timeout once a replacement is
 * scheduled) and the Work goes. With a healthy copy elsewhere, Directly deletes at once.
 */
export function lastRunningCopy(task: GracefulEvictionTask, spec: ResourceBindingSpec | undefined, status: ResourceBindingStatus | undefined): boolean {
  if (task.purgeMode !== "Directly" || task.reason !== EvictionReasonApplicationFailure) return false;
  const healthy = new Set((status?.aggregatedStatus ?? []).filter((s) => s.health === "Healthy").map((s) => s.clusterName));
  return !(spec?.clusters ?? []).some((c) => c.name !== task.fromCluster && healthy.has(c.name));
}

/**
 * The clusters whose Works a binding keeps: `spec.clusters` ∪ `requiredBy[].clusters` ∪ the
 * `fromCluster` of every graceful-eviction task whose purgeMode is not Directly (so an evicted
 * cluster keeps its Work until the eviction controller drops the task) ∪ that of a Directly
 * application-failure task holding the last running copy (see lastRunningCopy; needs `status`).
 */
export function keptClusters(spec: ResourceBindingSpec | undefined, status?: ResourceBindingStatus): Set<string> {
  const keep = new Set<string>();
  for (const c of spec?.clusters ?? []) if (c.name) keep.add(c.name);
  for (const snap of spec?.requiredBy ?? []) for (const c of snap.clusters ?? []) if (c.name) keep.add(c.name);
  for (const t of spec?.gracefulEvictionTasks ?? []) if (t.fromCluster && (t.purgeMode !== "Directly" || lastRunningCopy(t, spec, status))) keep.add(t.fromCluster);
  return keep;
}

/** The clusters of Directly-purged eviction tasks whose Works must be gone before the binding syncs again. */
export function directlyPurgedClusters(spec: ResourceBindingSpec | undefined, status?: ResourceBindingStatus): Set<string> {
  const keep = keptClusters(spec, status);
  const out = new Set<string>();
  for (const t of spec?.gracefulEvictionTasks ?? []) if (t.fromCluster && t.purgeMode === "Directly" && !keep.has(t.fromCluster)) out.add(t.fromCluster);
  return out;
}

/** The binding's Works on clusters it no longer keeps and not already being deleted: to delete. */
export function orphanWorks<W extends Pick<Work, "metadata">>(works: readonly W[], spec: ResourceBindingSpec | undefined, status?: ResourceBindingStatus): W[] {
  const keep = keptClusters(spec, status);
  return works.filter((w) => !w.metadata.deletionTimestamp && !keep.has(clusterOfWork(w)));
}

/** Works still present (deleting or not) on Directly-purged clusters: while any exists, the sync waits. */
export function worksBlockingDirectPurge<W extends Pick<Work, "metadata">>(works: readonly W[], spec: ResourceBindingSpec | undefined, status?: ResourceBindingStatus): W[] {
  const directly = directlyPurgedClusters(spec, status);
  if (directly.size === 0) return [];
  return works.filter((w) => directly.has(clusterOfWork(w)));
}
