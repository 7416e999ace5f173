import { EvictionProducerTaintManager, EvictionReasonTaintUntolerated } from "./names.js";
import type { GracefulEvictionTask, ResourceBindingSpec } from "./types.js";

export const PurgeModeDirectly = "Directly";
export const PurgeModeGracefully = "Gracefully";
export const PurgeModeNever = "Never";
export type PurgeMode = typeof PurgeModeDirectly | typeof PurgeModeGracefully | typeof PurgeModeNever;

/** Options of one eviction (upstream's TaskOptions). */
export interface EvictOptions {
  purgeMode: PurgeMode;
  message: string;
  /** Stamped as the task's creationTimestamp (RFC 3339). */
  creationTimestamp?: string;
  /** Default TaintManager. */
  producer?: string;
  /** Default TaintUntolerated. */
  reason?: string;
  /** Gracefully: the task's own timeout. */
  gracePeriodSeconds?: number;
  /** statePreservation: the labels carried to the new cluster's copy. */
  preservedLabelState?: Record<string, string>;
  /** With preservedLabelState: the clusters the workload was on before this failover. */
  clustersBeforeFailover?: string[];
}

/**
 * Upstream's GracefulEvictCluster: a cluster not in `spec.clusters` is a no-op (false).
 * Otherwise it leaves `spec.clusters`; if a task for it exists already, that task is left as
 * it is; else a task is appended with the removed entry's replicas (only when > 0) and the
 * options (producer TaintManager and reason TaintUntolerated unless given). Unlike upstream the
 * task gets its creationTimestamp here (the graceful-eviction controller would otherwise write
 * the binding a second time just to stamp it); purge mode Never also sets suppressDeletion (as
 * upstream's application failover does). Mutates `spec`.
 */
export function gracefulEvictCluster(spec: ResourceBindingSpec, cluster: string, o: EvictOptions): boolean {
  const clusters = spec.clusters ?? [];
  const i = clusters.findIndex((c) => c.name === cluster);
  if (i < 0) return false;
  const [removed] = clusters.splice(i, 1);
  spec.clusters = clusters;
  const tasks = spec.gracefulEvictionTasks ?? [];
  if (tasks.some((t) => t.fromCluster === cluster)) return true;
  const task: GracefulEvictionTask = {
    fromCluster: cluster,
    purgeMode: o.purgeMode,
    ...((removed.replicas ?? 0) > 0 ? { replicas: removed.replicas } : {}),
    reason: o.reason ?? EvictionReasonTaintUntolerated,
    message: o.message,
    producer: o.producer ?? EvictionProducerTaintManager,
    ...(o.purgeMode === PurgeModeGracefully && o.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: o.gracePeriodSeconds } : {}),
    ...(o.purgeMode === PurgeModeNever ? { suppressDeletion: true } : {}),
    ...(o.preservedLabelState ? { preservedLabelState: o.preservedLabelState } : {}),
    ...(o.preservedLabelState && o.clustersBeforeFailover ? { clustersBeforeFailover: o.clustersBeforeFailover } : {}),
    ...(o.creationTimestamp ? { creationTimestamp: o.creationTimestamp } : {}),
  };
  spec.gracefulEvictionTasks = [...tasks, task];
  return true;
}

/** Upstream's RemoveCluster (graceful eviction off): the cluster just leaves `spec.clusters`. Mutates `spec`. */
export function removeCluster(spec: ResourceBindingSpec, cluster: string): boolean {
  const clusters = spec.clusters ?? [];
  const next = clusters.filter((c) => c.name !== cluster);
  if (next.length === clusters.length) return false;
  spec.clusters = next;
  return true;
}

/**
 * The purge mode of a taint eviction: the binding's `failover.cluster.purgeMode` when
 * `failover.cluster` is set ("" → Gracefully), else `fallback` (the taint manager's
 * NO_EXECUTE_TAINT_EVICTION_PURGE_MODE).
 */
export function purgeModeFor(spec: Pick<ResourceBindingSpec, "failover">, fallback: PurgeMode): PurgeMode {
  const cluster = spec.failover?.cluster;
  if (!cluster) return fallback;
  switch (cluster.purgeMode) {
    case PurgeModeDirectly:
      return PurgeModeDirectly;
    case PurgeModeNever:
      return PurgeModeNever;
    default:
      return PurgeModeGracefully;
  }
}
