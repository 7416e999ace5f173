import type { Condition } from "./types.js";
import { rfc3339 } from "./time.js";

/** The condition type every member cluster reports (and Pods and Nodes too). */
export const ConditionReady = "Ready";

/** The condition of `type`, or undefined. */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return (conditions ?? []).find((c) => c.type === type);
}

/** Whether a cluster's Ready condition is True. */
export function isClusterReady(c: { status?: { conditions?: readonly Condition[] } } | undefined): boolean {
  return findCondition(c?.status?.conditions, ConditionReady)?.status === "True";
}

/**
 * meta.SetStatusCondition: `c` replaces the condition of its type (or is appended), and the
 * lastTransitionTime moves only when the status changes: to `c`'s own when it has one, else
 * `now`. While the status stays, the old transition time is kept (`now` when the old one had
 * none). Returns a new list; other conditions stay as and where they are.
 */
export function setCondition(conditions: readonly Condition[] | undefined, c: Condition, now: Date): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = prev && prev.status === c.status ? (prev.lastTransitionTime ?? c.lastTransitionTime ?? rfc3339(now)) : (c.lastTransitionTime ?? rfc3339(now));
  const next: Condition = { ...c, lastTransitionTime };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}
