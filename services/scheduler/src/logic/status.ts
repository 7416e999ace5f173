import { isDeepStrictEqual } from "node:util";
import { PolicyPlacementAnnotation, rfc3339, setCondition, type AnyResourceBinding, type ResourceBindingStatus, type TargetCluster } from "@flotilla/api";
import type { ScheduleResult } from "@flotilla/scheduling";
import { buildDiagnosis, diagnosisOutcome } from "./diagnosis.js";

/** What made the scheduler schedule: the package's triggers plus "a target cluster is gone". */
export type Trigger =
  | "placementChanged"
  | "replicasChanged"
  | "rescheduleTriggered"
  | "alwaysSchedule"
  | "targetClusterDeleting"
  | "targetClusterGone"
  /** Placed but no Scheduled condition: the status write of an earlier decision never happened. */
  | "statusMissing";

export const SCHEDULED = "Scheduled";

function sameTargets(a: readonly TargetCluster[] | undefined, b: readonly TargetCluster[]): boolean {
  const x = a ?? [];
  if (x.length !== b.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i].name !== b[i].name || (x[i].replicas ?? 0) !== (b[i].replicas ?? 0)) return false;
  return true;
}

/**
 * The binding with the decision's `spec.clusters` and the applied-placement annotation (the
 * placement it was computed from), or undefined when the result is not to be written
 * (Unschedulable, SchedulerError) or both are already in place. An empty result clears
 * `spec.clusters`, as Karmada's patch of an empty list does.
 */
export function withScheduleResult<T extends AnyResourceBinding>(binding: T, result: Pick<ScheduleResult, "clusters" | "patchClusters">): T | undefined {
  if (!result.patchClusters) return undefined;
  const placement = JSON.stringify(binding.spec?.placement ?? {});
  const clusters = result.clusters.map((t) => ({ name: t.name, ...(t.replicas ? { replicas: t.replicas } : {}) }));
  if (sameTargets(binding.spec?.clusters, clusters) && binding.metadata.annotations?.[PolicyPlacementAnnotation] === placement) return undefined;
  const spec = { ...binding.spec };
  if (clusters.length) spec.clusters = clusters;
  else delete spec.clusters;
  return { ...binding, metadata: { ...binding.metadata, annotations: { ...binding.metadata.annotations, [PolicyPlacementAnnotation]: placement } }, spec };
}

export interface StatusOptions {
  trigger: Trigger;
  now: Date;
  clustersTotal: number;
  maxFeasible: number;
}

/**
 * The scheduler's part of the status after a decision: the Scheduled condition, and on success
 * `schedulerObservedGeneration` (the binding's generation after the spec write),
 * `lastScheduledTime` and the clusterAffinities term; plus `schedulingDiagnosis`. Everything
 * else in the status (aggregatedStatus, other conditions) is kept as read.
 */
export function statusAfter(binding: AnyResourceBinding, result: ScheduleResult, o: StatusOptions): ResourceBindingStatus {
  const now = rfc3339(o.now);
  const status: ResourceBindingStatus = { ...binding.status };
  const { type: _t, ...cond } = result.condition;
  status.conditions = setCondition(status.conditions, { type: SCHEDULED, ...cond }, o.now);
  if (result.condition.status === "True") {
    status.schedulerObservedGeneration = binding.metadata.generation ?? 0;
    status.lastScheduledTime = now;
  }
  if (result.affinityName !== undefined) status.schedulerObservingAffinityName = result.affinityName;
  status.schedulingDiagnosis = buildDiagnosis(result, { trigger: o.trigger, time: now, clustersTotal: o.clustersTotal, maxFeasible: o.maxFeasible });
  return status;
}

/**
 * Whether writing `next` would only restate the decision already stored in `cur`: the same
 * condition, generation, affinity term and diagnosis, apart from times and cluster capacity.
 * A repeated schedule that changes nothing (Duplicated and non-workload bindings are scheduled
 * on every change, a failure repeats until something changes) is then not written again, so
 * other controllers' writes to a binding do not make the scheduler write back.
 */
export function sameOutcome(cur: ResourceBindingStatus | undefined, next: ResourceBindingStatus): boolean {
  const strip = (s: ResourceBindingStatus | undefined) => {
    const { lastScheduledTime: _l, schedulingDiagnosis, ...rest } = s ?? {};
    return { ...rest, schedulingDiagnosis: diagnosisOutcome(schedulingDiagnosis) };
  };
  // stored JSON comes back from jsonb with its keys reordered: compare structurally
  return isDeepStrictEqual(strip(cur), strip(next));
}

/** Only `schedulerObservedGeneration = generation` (nothing needed scheduling); undefined when already so. */
export function observedOnly(binding: AnyResourceBinding): ResourceBindingStatus | undefined {
  const gen = binding.metadata.generation ?? 0;
  if ((binding.status?.schedulerObservedGeneration ?? 0) === gen) return undefined;
  return { ...binding.status, schedulerObservedGeneration: gen };
}
