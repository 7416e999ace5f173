import type { AnyResourceBinding, Cluster, ClusterAffinity, Placement, ResourceBindingSpec } from "@flotilla/api";
import { MoveBackSurgeAnnotation } from "@flotilla/api";
import { compileAffinity } from "./affinity.js";
import { DIVIDED, DUPLICATED, isDeleting, rescheduleRequired } from "./placement.js";

/** The annotation holding the placement the last schedule applied (JSON). */
export const APPLIED_PLACEMENT_ANNOTATION = "policy.karmada.io/applied-placement";
export const DEFAULT_SCHEDULER_NAME = "default-scheduler";
export const PP_PERMANENT_ID_LABEL = "propagationpolicy.karmada.io/permanent-id";
export const CPP_PERMANENT_ID_LABEL = "clusterpropagationpolicy.karmada.io/permanent-id";
export const MANAGED_BY_LABEL = "binding.karmada.io/managed-by";

/** Why a binding needs scheduling, first match wins (in this order). */
export type ScheduleTrigger =
  | "placementChanged"
  | "replicasChanged"
  | "rescheduleTriggered"
  /** A non-workload (replicas 0) or a Duplicated binding: always scheduled. */
  | "alwaysSchedule"
  | "targetClusterDeleting";

export type TriggerDecision =
  | { schedule: true; trigger: ScheduleTrigger }
  /** Nothing to do but record `schedulerObservedGeneration = generation`. */
  | { schedule: false; error?: string };

/** Reduces a JSON value the way Go's `omitempty` would: empty strings, zeros, false, empty lists/objects vanish. */
function prune(v: unknown): unknown {
  if (v === null || v === undefined || v === "" || v === 0 || v === false) return undefined;
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map((x) => prune(x) ?? null);
  if (typeof v === "object") {
    const out: Record<string, unknown> = {};
    let any = false;
    for (const k of Object.keys(v as object).sort()) {
      const p = prune((v as Record<string, unknown>)[k]);
      if (p !== undefined) {
        out[k] = p;
        any = true;
      }
    }
    return any ? out : undefined;
  }
  return v;
}

/** Deep equality of two API values, treating absent and empty alike (JSON round-trip semantics). */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(prune(a)) === JSON.stringify(prune(b));
}

type Term = NonNullable<Placement["clusterAffinities"]>[number];

function findTerm(terms: readonly Term[] | undefined, name: string): Term | undefined {
  return terms?.find((t) => t.affinityName === name);
}

/**
 * Karmada's placementChanged: an empty annotation → true; equal to the applied one → false;
 * clusterAffinity, tolerations, spreadConstraints or replicaScheduling differ → true; otherwise
 * (only `clusterAffinities` differ) true iff the observed term name is empty or the observed
 * term is missing or different on either side. An undecodable annotation → false.
 */
export function placementChanged(placement: Placement, applied: string | undefined, observedAffinityName: string | undefined): boolean {
  if (!applied) return true;
  let old: Placement;
  try {
    const parsed: unknown = JSON.parse(applied);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
    old = parsed as Placement;
  } catch {
    return false;
  }
  if (semanticEqual(placement, old)) return false;
  if (
    !semanticEqual(placement.clusterAffinity, old.clusterAffinity) ||
    !semanticEqual(placement.clusterTolerations, old.clusterTolerations) ||
    !semanticEqual(placement.spreadConstraints, old.spreadConstraints) ||
    !semanticEqual(placement.replicaScheduling, old.replicaScheduling)
  ) {
    return true;
  }
  if (!observedAffinityName) return true;
  const now = findTerm(placement.clusterAffinities, observedAffinityName);
  const before = findTerm(old.clusterAffinities, observedAffinityName);
  if (!now || !before) return true;
  return !semanticEqual(now, before);
}

/**
 * Karmada's IsBindingReplicasChanged: no replica scheduling → false; Duplicated → some target's
 * replicas differ from `spec.replicas`; Divided → the targets' sum differs.
 */
export function replicasChanged(spec: ResourceBindingSpec): boolean {
  const rs = spec.placement?.replicaScheduling;
  if (!rs) return false;
  const replicas = spec.replicas ?? 0;
  if (rs.replicaSchedulingType === DUPLICATED) return (spec.clusters ?? []).some((t) => (t.replicas ?? 0) !== replicas);
  if (rs.replicaSchedulingType === DIVIDED) {
    let total = 0;
    for (const t of spec.clusters ?? []) total += t.replicas ?? 0;
    return total !== replicas;
  }
  return false;
}

/**
 * Whether the scheduler should look at the binding at all: it carries a (C)PP permanent-id or
 * managed-by label, names this scheduler (empty = default) and is not suspended for scheduling.
 */
export function isResponsibleFor(binding: AnyResourceBinding, schedulerName = DEFAULT_SCHEDULER_NAME): boolean {
  const labels = binding.metadata.labels ?? {};
  if (!labels[PP_PERMANENT_ID_LABEL] && !labels[CPP_PERMANENT_ID_LABEL] && !labels[MANAGED_BY_LABEL]) return false;
  const spec = binding.spec ?? {};
  if ((spec.schedulerName || DEFAULT_SCHEDULER_NAME) !== schedulerName) return false;
  return spec.suspension?.scheduling !== true;
}

/**
 * Which trigger, if any, calls for scheduling the binding now (Karmada's doScheduleBinding):
 * placement changed, replicas changed, a manual reschedule, a non-workload or Duplicated
 * binding (always), or a cluster in `spec.clusters` being deleted. Time only enters through
 * the two stored timestamps, so no clock is needed.
 */
export function needsSchedule(binding: AnyResourceBinding, clusters: readonly Cluster[]): TriggerDecision {
  const spec = binding.spec ?? {};
  const placement = spec.placement;
  if (!placement) {
    return { schedule: false, error: `failed to get placement from resourceBinding(${binding.metadata.namespace ?? ""}/${binding.metadata.name ?? ""})` };
  }
  const applied = binding.metadata.annotations?.[APPLIED_PLACEMENT_ANNOTATION];
  if (placementChanged(placement, applied, binding.status?.schedulerObservingAffinityName)) return { schedule: true, trigger: "placementChanged" };
  // a move-back surge (Flotilla's, opt-in) places more replicas than spec.replicas on purpose,
  // until the returning copy is healthy; only a new replica count ends it early
  if (inMoveBackSurge(binding)) return { schedule: false };
  if (replicasChanged(spec)) return { schedule: true, trigger: "replicasChanged" };
  if (rescheduleRequired(spec, binding.status)) return { schedule: true, trigger: "rescheduleTriggered" };
  if ((spec.replicas ?? 0) === 0 || (placement.replicaScheduling?.replicaSchedulingType || DUPLICATED) === DUPLICATED) {
    return { schedule: true, trigger: "alwaysSchedule" };
  }
  const targets = new Set((spec.clusters ?? []).map((t) => t.name));
  if (clusters.some((c) => targets.has(c.metadata.name) && isDeleting(c))) return { schedule: true, trigger: "targetClusterDeleting" };
  return { schedule: false };
}

/** The affinities a binding currently schedules with: `clusterAffinity`, or the observed term and its overflow terms. */
function currentAffinities(binding: AnyResourceBinding): ClusterAffinity[] | undefined | "unobserved" {
  const placement = binding.spec?.placement;
  if (placement?.clusterAffinity) return [placement.clusterAffinity];
  const terms = placement?.clusterAffinities;
  if (!terms?.length) return undefined;
  const observed = binding.status?.schedulerObservingAffinityName;
  const term = observed ? findTerm(terms, observed) : undefined;
  return term ? [term, ...(term.overflowAffinities ?? [])] : "unobserved";
}

/**
 * A Cluster change worth reacting to: labels or generation changed, or deletion started.
 * (A new cluster alone does not enqueue bindings.)
 */
export function clusterChangeMatters(before: Cluster, after: Cluster): boolean {
  if (!isDeleting(before) && isDeleting(after)) return true;
  if ((before.metadata.generation ?? 0) !== (after.metadata.generation ?? 0)) return true;
  return !semanticEqual(before.metadata.labels ?? {}, after.metadata.labels ?? {});
}

/**
 * Whether a changed cluster should enqueue the binding: it has no affinity, its affinity list is
 * not observed yet, or its current affinity matches the cluster (before or after the change).
 */
export function bindingAffectedByCluster(binding: AnyResourceBinding, ...versions: Cluster[]): boolean {
  const affinities = currentAffinities(binding);
  if (affinities === undefined || affinities === "unobserved") return true;
  const matchers = affinities.map(compileAffinity);
  return versions.some((c) => matchers.some((m) => m(c)));
}

/** Whether the binding is in a move-back surge for its current replica count (see @flotilla/api move-back.ts). */
export function inMoveBackSurge(binding: AnyResourceBinding): boolean {
  const v = binding.metadata.annotations?.[MoveBackSurgeAnnotation];
  if (v === undefined) return false;
  try {
    return (JSON.parse(v) as { replicas?: unknown }).replicas === (binding.spec?.replicas ?? 0);
  } catch {
    return false;
  }
}
