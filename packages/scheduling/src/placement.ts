import type { AnyResourceBinding, Cluster, Placement, ResourceBindingSpec, ResourceBindingStatus } from "@flotilla/api";

export const DUPLICATED = "Duplicated";
export const DIVIDED = "Divided";
export const AGGREGATED = "Aggregated";
export const WEIGHTED = "Weighted";

/** How replicas are assigned once clusters are selected. */
export type AssignStrategy = "Duplicated" | "Aggregated" | "StaticWeight" | "DynamicWeight";

/** `replicaScheduling` absent (or its type empty) means Duplicated. */
export function replicaSchedulingType(placement: Placement | undefined): string {
  const t = placement?.replicaScheduling?.replicaSchedulingType;
  return !t ? DUPLICATED : t;
}

/** The assignment strategy, or `undefined` when the placement names an unsupported one. */
export function assignStrategy(placement: Placement | undefined): AssignStrategy | undefined {
  const type = replicaSchedulingType(placement);
  if (type === DUPLICATED) return "Duplicated";
  if (type !== DIVIDED) return undefined;
  const rs = placement!.replicaScheduling!;
  switch (rs.replicaDivisionPreference) {
    case AGGREGATED:
      return "Aggregated";
    case WEIGHTED:
      return rs.weightPreference?.dynamicWeight ? "DynamicWeight" : "StaticWeight";
    default:
      return undefined;
  }
}

/**
 * Divided by a static weight list (or by no preference at all): spread constraints are ignored
 * and every feasible cluster is a candidate.
 */
export function isStaticWeight(placement: Placement): boolean {
  const rs = placement.replicaScheduling;
  if (!rs || rs.replicaSchedulingType !== DIVIDED || rs.replicaDivisionPreference !== WEIGHTED) return false;
  const wp = rs.weightPreference;
  return !wp || ((wp.staticWeightList?.length ?? 0) > 0 && !wp.dynamicWeight);
}

/** Duplicated (or no replica scheduling): the selection ignores available replicas. */
export function ignoresAvailableResource(placement: Placement): boolean {
  return replicaSchedulingType(placement) === DUPLICATED;
}

/**
 * Karmada's `ResourceBindingSpec.IsWorkload()`: replicas > 0, or `replicaRequirements` set (a
 * Deployment scaled to 0 whose pods request resources is still a workload). It decides whether
 * a `clusterAffinities` term's overflow terms are in force. Replica estimation, division and
 * the "always schedule" trigger look at `hasReplicas` instead, as upstream checks
 * `spec.Replicas` there.
 */
export function isWorkload(spec: ResourceBindingSpec): boolean {
  return (spec.replicas ?? 0) > 0 || spec.replicaRequirements !== undefined;
}

/**
 * `spec.replicas > 0`: there are replicas to estimate room for and to divide. With 0 (a
 * ConfigMap, or a workload scaled to 0) every feasible cluster is a target with 0 replicas.
 */
export function hasReplicas(spec: ResourceBindingSpec): boolean {
  return (spec.replicas ?? 0) > 0;
}

export function isDeleting(obj: { metadata?: { deletionTimestamp?: string } }): boolean {
  return !!obj.metadata?.deletionTimestamp;
}

/** `spec.zones`, or the legacy single `spec.zone` when `zones` is empty. */
export function clusterZones(cluster: Cluster): readonly string[] {
  const zones = cluster.spec?.zones;
  if (zones && zones.length > 0) return zones;
  const zone = cluster.spec?.zone;
  return zone ? [zone] : [];
}

/** `spec.clusters` as name → replicas. */
export function scheduledReplicas(spec: ResourceBindingSpec): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of spec.clusters ?? []) if (t.name) m.set(t.name, t.replicas ?? 0);
  return m;
}

/** Names of clusters some graceful-eviction task is evicting from. */
export function evictingClusters(spec: ResourceBindingSpec): Set<string> {
  const s = new Set<string>();
  for (const t of spec.gracefulEvictionTasks ?? []) if (t.fromCluster) s.add(t.fromCluster);
  return s;
}

function time(ts: string | undefined): number | undefined {
  if (!ts) return undefined;
  const t = Date.parse(ts);
  return Number.isNaN(t) ? undefined : t;
}

/** `rescheduleTriggeredAt > lastScheduledTime`, both set: the user asked for a fresh schedule. */
export function rescheduleRequired(spec: ResourceBindingSpec, status: ResourceBindingStatus | undefined): boolean {
  const triggered = time(spec.rescheduleTriggeredAt);
  const last = time(status?.lastScheduledTime);
  return triggered !== undefined && last !== undefined && triggered > last;
}

/**
 * The index of the `clusterAffinities` term to start from: the observed one, or 0 when it is
 * unset, unknown, or a manual reschedule asks for a fresh start.
 */
export function startAffinityIndex(binding: AnyResourceBinding): number {
  const spec = binding.spec ?? {};
  const terms = spec.placement?.clusterAffinities ?? [];
  const observed = binding.status?.schedulerObservingAffinityName;
  if (!observed || rescheduleRequired(spec, binding.status)) return 0;
  const i = terms.findIndex((t) => t.affinityName === observed);
  return i < 0 ? 0 : i;
}
