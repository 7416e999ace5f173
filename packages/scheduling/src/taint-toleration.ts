import type { Taint, Toleration } from "@flotilla/api";
import { fit, unfit, type FilterPlugin } from "./types.js";

/** Kubernetes' `Toleration.ToleratesTaint`. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? "") {
    case "":
    case "Equal":
      return (t.value ?? "") === (taint.value ?? "");
    case "Exists":
      return true;
    default:
      return false;
  }
}

/** The first taint passing `applies` that no toleration tolerates. */
export function findUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  applies: (t: Taint) => boolean,
): Taint | undefined {
  if (!taints) return undefined;
  for (const taint of taints) {
    if (!applies(taint)) continue;
    if (!tolerations?.some((t) => toleratesTaint(t, taint))) return taint;
  }
  return undefined;
}

/** Kubernetes' `Taint.ToString()`: `key=value:Effect`, `key:Effect` without a value. */
export function taintToString(t: Taint): string {
  const key = t.key ?? "";
  const value = t.value ?? "";
  const effect = t.effect ?? "";
  if (!effect) return value ? `${key}=${value}:` : key;
  return value ? `${key}=${value}:${effect}` : `${key}:${effect}`;
}

const schedulingEffects = (t: Taint): boolean => t.effect === "NoSchedule" || t.effect === "NoExecute";

/**
 * NoSchedule and NoExecute taints must be tolerated by `placement.clusterTolerations`.
 * A cluster already in `spec.clusters` passes: the taint manager decides about evicting it.
 */
export const TaintToleration = {
  name: "TaintToleration",
  filter(i) {
    const taints = i.cluster.spec?.taints;
    if (!taints?.length) return fit;
    if (i.scheduled.has(i.cluster.metadata.name ?? "")) return fit;
    const taint = findUntoleratedTaint(taints, i.placement.clusterTolerations, schedulingEffects);
    return taint ? unfit(`cluster(s) had untolerated taint {${taintToString(taint)}}`) : fit;
  },
} satisfies FilterPlugin;
