import type { AnyResourceBinding } from "@flotilla/api";
import { assignStrategy, hasReplicas } from "@flotilla/scheduling";

/**
 * Whether the estimator's answer can change this binding's schedule: it must have replicas, and
 * capacity must matter to the selection (spread constraints sort and pick by available replicas)
 * or to the division (dynamic weight, Aggregated). Duplicated without spread constraints, and
 * static weights, give every feasible cluster a share regardless of capacity, so the estimator
 * is not asked for them (the general estimator on `resourceSummary` still fills the diagnosis).
 */
export function wantsEstimates(binding: AnyResourceBinding): boolean {
  const spec = binding.spec ?? {};
  if (!hasReplicas(spec)) return false;
  const placement = spec.placement ?? {};
  const strategy = assignStrategy(placement);
  if (strategy === "DynamicWeight" || strategy === "Aggregated") return true;
  if (strategy === "StaticWeight") return false;
  return (placement.spreadConstraints?.length ?? 0) > 0;
}

/** The cache key of an estimate: the per-replica requirements (one answer serves every binding shaped alike). */
export function requirementsKey(binding: AnyResourceBinding): string {
  return JSON.stringify(binding.spec?.replicaRequirements ?? null);
}

/**
 * The replica estimator's answer for one replica shape: per cluster the replicas it can still
 * take (-1: no answer), and when the member snapshot behind each answer was taken (ms since the
 * epoch, on this process's clock: the call's start less the snapshot's age).
 */
export interface EstimatorAnswer {
  readonly replicas: ReadonlyMap<string, number>;
  readonly takenAt: ReadonlyMap<string, number>;
}

/**
 * The answers a decision may use against the assumed ledger: an answer from a snapshot taken
 * before the replicas the ledger already let go of on that cluster (`settledThrough`) may not
 * count them, so it counts as no answer (-1) and the resource summary decides for that cluster.
 */
export function usableEstimates(answer: EstimatorAnswer | undefined, settledThrough?: (cluster: string) => number): ReadonlyMap<string, number> | undefined {
  if (!answer || !settledThrough) return answer?.replicas;
  let out: Map<string, number> | undefined;
  for (const [name, n] of answer.replicas) {
    if (n < 0) continue;
    const at = answer.takenAt.get(name);
    if (at !== undefined && at >= settledThrough(name)) continue;
    (out ??= new Map(answer.replicas)).set(name, -1);
  }
  return out ?? answer.replicas;
}
