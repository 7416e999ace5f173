import type { Cluster, ReplicaRequirements, ResourceBindingSpec } from "@flotilla/api";
import { hasReplicas } from "./placement.js";
import { clusterFacts, resourceAmount, type ClusterFacts } from "./cluster-facts.js";
import { floorDiv, quantityValue, tryParseQuantity, type Quantity } from "@flotilla/api";
import { MAX_INT32 } from "./types.js";

type ResourceList = { readonly [name: string]: string } | undefined;

/** Pods a model-grade virtual node can hold (Kubernetes' default per-node limit). */
export const MAX_PODS_PER_MODEL_NODE = 110;

/** `allocatable − allocated − allocating` pods, floored at 0. */
export function allowedPods(cluster: Cluster): number {
  return clusterFacts(cluster).allowedPods;
}

/** A per-replica request in the unit compared: millicores for cpu, whole units otherwise. */
export interface CompiledRequest {
  readonly key: string;
  readonly quantity: Quantity;
  readonly amount: number;
}

/** The requested resources (> 0) of a binding, compiled once per scheduling attempt. */
export function compileRequest(request: ResourceList): CompiledRequest[] {
  const out: CompiledRequest[] = [];
  for (const key in request) {
    const q = tryParseQuantity(request[key]);
    if (q && quantityValue(q) > 0) out.push({ key, quantity: q, amount: resourceAmount(key, q) });
  }
  return out;
}

/**
 * What a cluster has been promised and has not reported yet: replicas the scheduler assigned
 * there whose pods the member's capacity reports do not count (see the scheduler's assumed
 * ledger). `pods` is a pod count; `resources` are in the estimator's unit (millicores for cpu,
 * whole units otherwise), per resource name.
 */
export interface AssumedLoad {
  readonly pods: number;
  readonly resources: Readonly<Record<string, number>>;
}

/**
 * How many replicas of this request an assumed load takes away from an estimate made without
 * it: the most over its pods and each requested resource (rounded up).
 */
export function assumedReplicas(load: AssumedLoad | undefined, request: readonly CompiledRequest[] | undefined): number {
  if (!load) return 0;
  let n = load.pods > 0 ? load.pods : 0;
  for (const r of request ?? []) {
    const used = load.resources[r.key];
    if (used && used > 0) {
      const k = Math.ceil(used / r.amount);
      if (k > n) n = k;
    }
  }
  return n;
}

function summaryBound(facts: ClusterFacts, request: readonly CompiledRequest[], load?: AssumedLoad): number {
  if (!facts.cluster.status?.resourceSummary) return 0;
  let max = Infinity;
  for (const r of request) {
    let free = facts.free(r.key);
    if (free > 0 && load) free -= load.resources[r.key] ?? 0;
    if (free <= 0) return 0;
    const bound = floorDiv(free, r.amount);
    if (bound < max) max = bound;
  }
  return max;
}

/**
 * Replicas the cluster's resource summary can still take: for each requested resource (> 0),
 * `(allocatable − allocated − allocating) / request`; a resource missing from allocatable, or
 * none left of it, gives 0. `Infinity` when nothing is requested.
 */
export function estimateBySummary(cluster: Cluster, request: ResourceList): number {
  return summaryBound(clusterFacts(cluster), compileRequest(request));
}

/**
 * Replicas the cluster's resource models can take, or `undefined` when the models do not apply
 * (no models, or a negative node count). Each grade contributes `count` virtual nodes sized at
 * the grade's range minimums plus 110 pods; replicas are packed first-fit onto them.
 */
export function estimateByResourceModels(cluster: Cluster, request: ResourceList): number | undefined {
  return modelsBound(cluster, compileRequest(request));
}

function modelsBound(cluster: Cluster, requested: readonly CompiledRequest[]): number | undefined {
  const models = cluster.spec?.resourceModels;
  const modelings = cluster.status?.resourceSummary?.allocatableModelings;
  if (!models?.length || !modelings) return undefined;

  const countByGrade = new Map<number, number>();
  for (const m of modelings) {
    const count = m.count ?? 0;
    if (count < 0) return undefined;
    countByGrade.set(m.grade ?? 0, (countByGrade.get(m.grade ?? 0) ?? 0) + count);
  }

  const grades = models
    .map((m) => ({ grade: m.grade ?? 0, ranges: m.ranges ?? [] }))
    .sort((a, b) => a.grade - b.grade);
  const seen = new Set<number>();
  let total = 0;
  for (const { grade, ranges } of grades) {
    if (seen.has(grade)) continue;
    seen.add(grade);
    const count = countByGrade.get(grade) ?? 0;
    if (count === 0) continue;
    // Identical nodes: first-fit packing fills each one with as many replicas as fit.
    let perNode = MAX_PODS_PER_MODEL_NODE;
    for (const { key, amount: need } of requested) {
      if (key === "pods") {
        perNode = Math.min(perNode, floorDiv(MAX_PODS_PER_MODEL_NODE, need));
        continue;
      }
      const min = ranges.find((r) => r.name === key)?.min;
      const cap = tryParseQuantity(min);
      const fits = cap ? Math.max(0, floorDiv(resourceAmount(key, cap), need)) : 0;
      if (fits < perNode) perNode = fits;
    }
    total += count * perNode;
  }
  return total;
}

/**
 * The general estimator: replicas the cluster can take according to its `resourceSummary`
 * (and resource models when it reports `allocatableModelings`), bounded by the pods left.
 */
export function generalEstimate(cluster: Cluster, requirements: ReplicaRequirements | undefined): number {
  return estimateCompiled(clusterFacts(cluster), requirements ? compileRequest(requirements.resourceRequest) : undefined);
}

function estimateCompiled(facts: ClusterFacts, request: readonly CompiledRequest[] | undefined, load?: AssumedLoad): number {
  const cluster = facts.cluster;
  const summary = cluster.status?.resourceSummary;
  if (!summary) return 0;
  const pods = facts.allowedPods - (load && load.pods > 0 ? load.pods : 0);
  if (pods <= 0) return 0;
  if (!request) return Math.min(pods, MAX_INT32);
  if (summary.allocatableModelings?.length) {
    // the models describe whole nodes: the assumed load takes replicas off their answer
    const byModels = modelsBound(cluster, request);
    if (byModels !== undefined) return Math.max(0, Math.min(pods, byModels - assumedReplicas(load, request), MAX_INT32));
  }
  return Math.min(pods, summaryBound(facts, request, load), MAX_INT32);
}

/** Estimator inputs besides the clusters. */
export interface EstimateOptions {
  /** Per-cluster estimates from an external (accurate) estimator; a negative value means "no answer". */
  estimates?: ReadonlyMap<string, number>;
  /** Use the general estimator on `resourceSummary` (default true). */
  general?: boolean;
  /**
   * Per-cluster load assigned but not yet in the member's reports: subtracted from every
   * estimate (from the summary per resource, from an external answer as replicas of this
   * binding's request). Absent or empty: upstream's estimate exactly.
   */
  assumed?: ReadonlyMap<string, AssumedLoad>;
}

/**
 * Replicas each cluster can still take for this binding (Karmada's `calAvailableReplicas`):
 * MaxInt32 without replicas (`spec.replicas` 0, as upstream checks); otherwise the minimum over the estimators, with a cluster no
 * estimator bounds set to `spec.replicas`. Result is parallel to `clusters`.
 */
export function allocatableReplicas(
  clusters: readonly Cluster[],
  spec: ResourceBindingSpec,
  o: EstimateOptions = {},
  facts: readonly ClusterFacts[] = clusters.map(clusterFacts),
): number[] {
  const out = new Array<number>(clusters.length).fill(MAX_INT32);
  if (!hasReplicas(spec)) return out;
  const general = o.general !== false;
  const external = o.estimates;
  const request = spec.replicaRequirements ? compileRequest(spec.replicaRequirements.resourceRequest) : undefined;
  const assumed = o.assumed?.size ? o.assumed : undefined;
  for (let i = 0; i < clusters.length; i++) {
    const c = clusters[i];
    const load = assumed?.get(c.metadata.name ?? "");
    let v = MAX_INT32;
    if (general) v = Math.min(v, estimateCompiled(facts[i], request, load));
    let e = external?.get(c.metadata.name ?? "");
    if (e !== undefined && e >= 0 && load) e = Math.max(0, e - assumedReplicas(load, request));
    if (e !== undefined && e >= 0 && e < v) v = Math.floor(e);
    out[i] = v === MAX_INT32 ? (spec.replicas ?? 0) : v;
  }
  return out;
}
