import { parseTime, type Taint, type Toleration } from "@flotilla/api";
import { toleratesTaint } from "./taint-toleration.js";

const NO_EXECUTE = "NoExecute";

export type EvictionDecision =
  /** The cluster has no NoExecute taint: nothing to decide. */
  | { kind: "none" }
  /** Evict now: `taint` is not tolerated, or its toleration ran out. */
  | { kind: "evict"; taint: Taint; expired: boolean }
  /** Tolerated until `at` (ms since the epoch), the earliest expiry over the tolerated taints. */
  | { kind: "wait"; at: number; taint: Taint }
  /** Every NoExecute taint is tolerated without tolerationSeconds. */
  | { kind: "never" };

/**
 * Whether a binding with `tolerations` must leave a cluster with `taints`, and when (Karmada's
 * taint manager, after Kubernetes' getMinTolerationTime):
 * - only NoExecute taints count; none → `none`;
 * - a NoExecute taint no toleration tolerates → evict now;
 * - otherwise every toleration in use (tolerating at least one NoExecute taint) that has
 *   tolerationSeconds gives, for each taint it tolerates that has a timeAdded, the expiry
 *   timeAdded + seconds (seconds ≤ 0 expire at once); the earliest expiry wins: past → evict,
 *   future → wait until it; no expiry at all → never.
 * Shared by the taint manager (which acts on it) and the scheduler's failure simulation.
 */
export function evictionDecision(taints: readonly Taint[] | undefined, tolerations: readonly Toleration[] | undefined, now: number): EvictionDecision {
  const noExecute = (taints ?? []).filter((t) => t.effect === NO_EXECUTE);
  if (noExecute.length === 0) return { kind: "none" };
  const tols = tolerations ?? [];
  let earliest: { at: number; taint: Taint } | undefined;
  for (const taint of noExecute) {
    const matching = tols.filter((t) => toleratesTaint(t, taint));
    if (matching.length === 0) return { kind: "evict", taint, expired: false };
  }
  for (const tol of tols) {
    if (tol.tolerationSeconds === undefined || tol.tolerationSeconds === null) continue;
    for (const taint of noExecute) {
      if (!toleratesTaint(tol, taint)) continue;
      const added = parseTime(taint.timeAdded);
      if (added === undefined) continue;
      const at = added + Math.max(0, tol.tolerationSeconds) * 1000;
      if (!earliest || at < earliest.at) earliest = { at, taint };
    }
  }
  if (!earliest) return { kind: "never" };
  if (earliest.at <= now) return { kind: "evict", taint: earliest.taint, expired: true };
  return { kind: "wait", at: earliest.at, taint: earliest.taint };
}
