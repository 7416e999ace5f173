/**
 * Cluster resource models (Karmada's `spec.resourceModels`): grades of node capacity, each a
 * range `[min, max)` per resource. The member's status collection counts its nodes per grade
 * (`status.resourceSummary.allocatableModelings`), and the scheduler's general estimator sizes
 * `count` virtual nodes per grade at the grade's minimums. Validation is `validateResourceModels`
 * (validate.ts); the gateway standardizes and (behind CLUSTER_RESOURCE_MODELING_DEFAULTS)
 * defaults them through `defaultCluster` (defaults.ts).
 */
import type { ResourceModel } from "./types.js";

/** The resources a model may describe (upstream's supportedResourceNames). */
export const RESOURCE_MODEL_NAMES = ["cpu", "ephemeral-storage", "memory", "storage"] as const;

/** `math.MaxInt64` as a quantity, the way upstream serializes the last grade's maximum. */
export const MAX_INT64_QUANTITY = "9223372036854775807";
export const MAX_INT64 = 9223372036854775807n;

const CPU_BOUNDS = ["0", "1", "2", "4", "8", "16", "32", "64", "128", MAX_INT64_QUANTITY];
const MEMORY_BOUNDS = ["0", "4Gi", "16Gi", "32Gi", "64Gi", "128Gi", "256Gi", "512Gi", "1024Gi", MAX_INT64_QUANTITY];

/**
 * The nine grades upstream's SetDefaultClusterResourceModels gives a Cluster created without
 * models (feature gate CustomizedClusterResourceModeling): cpu [0,1) [1,2) [2,4) … [128,∞),
 * memory [0,4Gi) [4Gi,16Gi) [16Gi,32Gi) … [1024Gi,∞). A fresh copy each call.
 */
export function defaultResourceModels(): ResourceModel[] {
  return CPU_BOUNDS.slice(0, -1).map((_, grade) => ({
    grade,
    ranges: [
      { name: "cpu", min: CPU_BOUNDS[grade], max: CPU_BOUNDS[grade + 1] },
      { name: "memory", min: MEMORY_BOUNDS[grade], max: MEMORY_BOUNDS[grade + 1] },
    ],
  }));
}

/**
 * Upstream's StandardizeClusterResourceModels (mutates `models`): sorted by grade (stably), every
 * minimum of the first grade set to 0 and every maximum of the last grade to MaxInt64, so the
 * grades cover everything from nothing up.
 */
export function standardizeResourceModels(models: ResourceModel[]): void {
  if (models.length === 0) return;
  const sorted = models.map((m, i) => [m, i] as const).sort(([a, i], [b, j]) => (a.grade ?? 0) - (b.grade ?? 0) || i - j);
  sorted.forEach(([m], i) => (models[i] = m));
  for (const r of models[0]!.ranges ?? []) r.min = "0";
  for (const r of models[models.length - 1]!.ranges ?? []) r.max = MAX_INT64_QUANTITY;
}
