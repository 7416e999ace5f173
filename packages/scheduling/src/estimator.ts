import type { Cluster, ReplicaRequirements, ResourceBindingSpec } from "@flotilla/api";
import { isWorkload } from "./placement.js";
import { clusterFacts, resourceAmount, type ClusterFacts } from "./cluster-facts.js";
import { floorDiv, quantityValue, tryParseQuantity, type Quantity } from "./quantity.js";
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

function summaryBound(facts: ClusterFacts, request: readonly CompiledRequest[]): number {
  if (!facts.cluster.status?.resourceSummary) return 0;
  let max = Infinity;
  for (const r of request) {
    const free = facts.free(r.key);
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

function estimateCompiled(facts: ClusterFacts, request: readonly CompiledRequest[] | undefined): number {
  const cluster = facts.cluster;
  const summary = cluster.status?.resourceSummary;
  if (!summary) return 0;
  const pods = facts.allowedPods;
  if (pods <= 0) return 0;
  if (!request) return Math.min(pods, MAX_INT32);
  if (summary.allocatableModelings?.length) {
    const byModels = modelsBound(cluster, request);
    if (byModels !== undefined) return Math.min(pods, byModels, MAX_INT32);
  }
  return Math.min(pods, summaryBound(facts, request), MAX_INT32);
}

/** Estimator inputs besides the clusters. */
export interface EstimateOptions {
  /** Per-cluster estimates from an external (accurate) estimator; a negative value means "no answer". */
  estimates?: ReadonlyMap<string, number>;
  /** Use the general estimator on `resourceSummary` (default true). */
  general?: boolean;
}

/**
 * Replicas each cluster can still take for this binding (Karmada's `calAvailableReplicas`):
 * MaxInt32 for a non-workload; otherwise the minimum over the estimators, with a cluster no
 * estimator bounds set to `spec.replicas`. Result is parallel to `clusters`.
 */
export function allocatableReplicas(
  clusters: readonly Cluster[],
  spec: ResourceBindingSpec,
  o: EstimateOptions = {},
  facts: readonly ClusterFacts[] = clusters.map(clusterFacts),
): number[] {
  const out = new Array<number>(clusters.length).fill(MAX_INT32);
  if (!isWorkload(spec)) return out;
  const general = o.general !== false;
  const external = o.estimates;
  const request = spec.replicaRequirements ? compileRequest(spec.replicaRequirements.resourceRequest) : undefined;
  for (let i = 0; i < clusters.length; i++) {
    const c = clusters[i];
    let v = MAX_INT32;
    if (general) v = Math.min(v, estimateCompiled(facts[i], request));
    const e = external?.get(c.metadata.name ?? "");
    if (e !== undefined && e >= 0 && e < v) v = Math.floor(e);
    out[i] = v === MAX_INT32 ? (spec.replicas ?? 0) : v;
  }
  return out;
}
