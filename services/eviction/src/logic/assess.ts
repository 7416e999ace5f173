import type { AggregatedStatusItem, GracefulEvictionTask, ResourceBindingSpec, ResourceBindingStatus, TargetCluster } from "@flotilla/api";
import type { ClusterState } from "./cluster-state.js";
import { rfc3339, parseTime } from "@flotilla/api";

export type TaskVerdict =
  /** New task: creationTimestamp stamped, nothing else judged this time (upstream). */
  | { action: "keep"; why: "Stamped" }
  | { action: "keep"; why: "SuppressDeletion" }
  /** Within its timeout and the replacement is not healthy yet. */
  | { action: "keep"; why: "WaitingForReplacement" }
  /** Past its timeout, but nothing (or too little) was scheduled in its place and the cluster has not recovered: the old copy is the last one. */
  | { action: "keep"; why: "NoReplacement" }
  | { action: "drop"; why: "ReplacementHealthy" | "Timeout" | "SuppressDeletionFalse" | "ScheduledAgain" }
  /** Past its timeout, nothing replaced it, and the cluster is back: the cluster returns to spec.clusters (the Work is never orphaned). */
  | { action: "drop"; why: "ClusterRecovered"; restore: TargetCluster };

export interface TaskOutcome {
  task: GracefulEvictionTask;
  verdict: TaskVerdict;
}

export interface AssessInput {
  spec: ResourceBindingSpec;
  status: ResourceBindingStatus | undefined;
  generation: number | undefined;
  /** The state of every task's fromCluster (missing = unhealthy). */
  clusters: ReadonlyMap<string, ClusterState>;
  /** GRACEFUL_EVICTION_TIMEOUT, for tasks without gracePeriodSeconds. */
  timeoutMs: number;
  now: number;
}

export interface Assessment {
  /** The tasks to keep (new ones stamped), in their order. */
  tasks: GracefulEvictionTask[];
  /** `spec.clusters` with any recovered cluster put back. */
  clusters: TargetCluster[];
  outcomes: TaskOutcome[];
  changed: boolean;
  /** Come back after this many ms (undefined: nothing left to wait for). */
  retryMs: number | undefined;
}

function isDuplicated(spec: ResourceBindingSpec): boolean {
  const t = spec.placement?.replicaScheduling?.replicaSchedulingType;
  return !t || t === "Duplicated";
}

function sumReplicas(clusters: readonly TargetCluster[]): number {
  return clusters.reduce((s, c) => s + (c.replicas ?? 0), 0);
}

/**
 * Something was scheduled in the evicted clusters' place: at least one cluster, and for a
 * Divided workload all the desired replicas (a Duplicated workload runs a full copy on each
 * cluster; a non-workload needs any cluster). Upstream counts an empty result as "all
 * healthy" and deletes the last copy (Karmada #7455); here it is not a replacement.
 */
export function replacementScheduled(spec: ResourceBindingSpec): boolean {
  const clusters = spec.clusters ?? [];
  if (clusters.length === 0) return false;
  const desired = spec.replicas ?? 0;
  if (desired <= 0 || isDuplicated(spec)) return true;
  return sumReplicas(clusters) >= desired;
}

/**
 * One scheduled cluster's report shows its share running: Healthy, and — when the reported
 * status counts ready replicas (Deployment, StatefulSet, ReplicaSet) — at least as many ready
 * replicas as the cluster is now scheduled to run. The second part catches a Healthy report that
 * predates the reschedule (the copy there still sized for its old share, its Work not yet updated).
 */
export function clusterReportHealthy(target: TargetCluster, item: AggregatedStatusItem | undefined): boolean {
  if (item?.health !== "Healthy") return false;
  const ready = (item.status as { readyReplicas?: unknown } | undefined)?.readyReplicas;
  const want = target.replicas ?? 0;
  return !(want > 0 && typeof ready === "number" && ready < want);
}

/** The scheduler has caught up with the spec, a replacement is scheduled, and every scheduled cluster reports its share Healthy. */
export function replacementHealthy(spec: ResourceBindingSpec, status: ResourceBindingStatus | undefined, generation: number | undefined): boolean {
  if ((status?.schedulerObservedGeneration ?? 0) !== (generation ?? 0)) return false;
  if (!replacementScheduled(spec)) return false;
  const byCluster = new Map<string, AggregatedStatusItem>();
  for (const s of status?.aggregatedStatus ?? []) if (s.clusterName) byCluster.set(s.clusterName, s);
  return (spec.clusters ?? []).every((c) => clusterReportHealthy(c, byCluster.get(c.name ?? "")));
}

/** A task's timeout: its gracePeriodSeconds, else the controller's. */
export function taskTimeoutMs(task: GracefulEvictionTask, timeoutMs: number): number {
  return task.gracePeriodSeconds !== undefined && task.gracePeriodSeconds !== null ? task.gracePeriodSeconds * 1000 : timeoutMs;
}

/** The entry that puts a recovered cluster back: what is missing of the desired replicas, at most what it had. */
function restoreEntry(spec: ResourceBindingSpec, task: GracefulEvictionTask): TargetCluster {
  const name = task.fromCluster ?? "";
  const desired = spec.replicas ?? 0;
  if (desired <= 0) return task.replicas ? { name, replicas: task.replicas } : { name };
  if (isDuplicated(spec)) return { name, replicas: desired };
  const missing = Math.max(0, desired - sumReplicas(spec.clusters ?? []));
  return { name, replicas: task.replicas ? Math.min(task.replicas, missing) : missing };
}

/**
 * Upstream's assessEvictionTasks, task by task, with two changes: a task is never dropped at
 * its timeout while nothing replaced it and its cluster is still unhealthy (the old Work is
 * the last running copy), and such a task whose cluster recovered is dropped at its timeout
 * with the cluster put back into `spec.clusters`.
 *
 * 1. fromCluster is scheduled again → drop (the Work is in use again).
 * 2. no creationTimestamp → stamp now, keep.
 * 3. suppressDeletion true → keep; false → drop.
 * 4. the replacement is healthy (replacementHealthy: the scheduler caught up, and every scheduled
 *    cluster reports Healthy with its new share of replicas ready) → drop.
 * 5. past created + timeout: a replacement is scheduled, or the cluster is gone or deleting → drop;
 *    the cluster recovered → drop and put it back; else keep.
 * 6. keep.
 */
export function assessTasks(i: AssessInput): Assessment {
  const spec = i.spec;
  const tasks = spec.gracefulEvictionTasks ?? [];
  const scheduled = new Set((spec.clusters ?? []).map((c) => c.name));
  const healthy = replacementHealthy(spec, i.status, i.generation);
  const outcomes: TaskOutcome[] = [];
  const kept: GracefulEvictionTask[] = [];
  const restored: TargetCluster[] = [];
  let changed = false;
  let retryMs: number | undefined;
  const retry = (ms: number) => (retryMs = retryMs === undefined ? ms : Math.min(retryMs, ms));
  const tick = Math.max(1, Math.round(i.timeoutMs / 10));

  for (const task of tasks) {
    const from = task.fromCluster ?? "";
    let verdict: TaskVerdict;
    const created = parseTime(task.creationTimestamp);
    const timeout = taskTimeoutMs(task, i.timeoutMs);
    if (scheduled.has(from)) verdict = { action: "drop", why: "ScheduledAgain" };
    else if (created === undefined) verdict = { action: "keep", why: "Stamped" };
    else if (task.suppressDeletion === true) verdict = { action: "keep", why: "SuppressDeletion" };
    else if (task.suppressDeletion === false) verdict = { action: "drop", why: "SuppressDeletionFalse" };
    else if (healthy) verdict = { action: "drop", why: "ReplacementHealthy" };
    else if (i.now > created + timeout) {
      const state = i.clusters.get(from) ?? "unhealthy";
      const covered = replacementScheduled({ ...spec, clusters: [...(spec.clusters ?? []), ...restored] });
      if (covered || state === "gone" || state === "deleting") verdict = { action: "drop", why: "Timeout" };
      else if (state === "recovered" && !restored.some((r) => r.name === from)) {
        const entry = restoreEntry({ ...spec, clusters: [...(spec.clusters ?? []), ...restored] }, task);
        restored.push(entry);
        verdict = { action: "drop", why: "ClusterRecovered", restore: entry };
      } else verdict = { action: "keep", why: "NoReplacement" };
    } else verdict = { action: "keep", why: "WaitingForReplacement" };

    outcomes.push({ task, verdict });
    if (verdict.action === "drop") {
      changed = true;
      continue;
    }
    if (verdict.why === "Stamped") {
      kept.push({ ...task, creationTimestamp: rfc3339(i.now) });
      changed = true;
      retry(Math.min(tick, timeout));
    } else {
      kept.push(task);
      if (verdict.why === "SuppressDeletion") continue;
      const left = (created ?? i.now) + timeout - i.now;
      retry(left > 0 ? Math.min(tick, left + 1) : tick);
    }
  }
  return { tasks: kept, clusters: [...(spec.clusters ?? []), ...restored], outcomes, changed, retryMs };
}
