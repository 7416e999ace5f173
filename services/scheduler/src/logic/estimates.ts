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
