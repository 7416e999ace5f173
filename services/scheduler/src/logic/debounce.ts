import { PolicyPlacementAnnotation, type AnyResourceBinding, type Cluster } from "@flotilla/api";
import { isDeleting } from "@flotilla/scheduling";
import { SCHEDULED, type Trigger } from "./status.js";

/**
 * Why a pass schedules at once although `BINDING_UPDATE_DEBOUNCE` is set:
 * - `off`: no debounce is set;
 * - `notAnUpdate`: nothing the user changed calls for it (a manual reschedule, a Duplicated or
 *   non-workload binding looked at again, a target cluster deleting or gone, a missing status);
 * - `firstSchedule`: the binding was never placed (no applied placement);
 * - `notScheduled`: the last decision did not succeed (Unschedulable, NoClusterFit, an error),
 *   so the binding is retried on its own timer;
 * - `targetsMoved`: `spec.clusters` is not what the last decision wrote (an eviction by the taint
 *   manager or by application failover, or no decision recorded to compare with);
 * - `targetLeaving`: a cluster in `spec.clusters` is being deleted or no longer exists;
 * - `settled`: the update has waited the debounce out.
 */
export type DebounceReason = "off" | "notAnUpdate" | "firstSchedule" | "notScheduled" | "targetsMoved" | "targetLeaving" | "settled";

export type DebounceVerdict =
  | { wait: false; reason: DebounceReason }
  /** Come back after `ms`; `since` is when the wait began (to remember for the next pass). */
  | { wait: true; ms: number; since: number };

export interface DebounceInput {
  binding: AnyResourceBinding;
  /** What calls for scheduling (triggerFor's answer). */
  trigger: Trigger;
  /** The cluster snapshot the pass schedules on. */
  clusters: readonly Cluster[];
  /** When the update that is waiting began to wait (epoch ms, from the binding's UpdatePendingSinceAnnotation); undefined: not waiting yet. */
  since: number | undefined;
  /** Epoch ms. */
  now: number;
  /** `BINDING_UPDATE_DEBOUNCE` in ms; 0 = off. */
  debounceMs: number;
}

/** On a binding whose update waits out the debounce: when the wait began (RFC 3339, microseconds). */
export const UpdatePendingSinceAnnotation = "scheduling.flotilla.io/update-pending-since";

/** The triggers that are a user's update of the binding: its replica count or its policy's placement. */
const UPDATES: ReadonlySet<Trigger> = new Set<Trigger>(["placementChanged", "replicasChanged"]);

/**
 * The clusters and replicas the last decision placed, from `status.schedulingDiagnosis` (it lists
 * every cluster the decision assigned, with its replicas), as sorted "name:replicas"; undefined
 * when no successful decision is recorded.
 */
function lastPlaced(b: AnyResourceBinding): string[] | undefined {
  const d = b.status?.schedulingDiagnosis;
  if (!d || d.result !== "Success") return undefined;
  return (d.feasible ?? [])
    .filter((f) => f.replicas !== undefined)
    .map((f) => `${f.name}:${f.replicas}`)
    .sort();
}

function placedNow(b: AnyResourceBinding): string[] {
  return (b.spec?.clusters ?? []).map((t) => `${t.name}:${t.replicas ?? 0}`).sort();
}

/**
 * Whether a scheduling pass waits (Karmada #7805/#7810): a GitOps tool applies a workload's
 * replica count and its policy's placement (weights) in two calls, and scheduling the pair while
 * only one of them has landed moves replicas twice. With a debounce set, an update of the
 * replicas or the placement of a binding that is placed and healthy waits until `debounceMs`
 * after this scheduler first saw it, and is then scheduled once on whatever has landed by then.
 * The wait is counted from the first update not yet scheduled, not from the last (as upstream's
 * `AddAfter`, whose queue keeps the earliest ready time), so a workload that keeps changing is
 * still scheduled at least once per debounce.
 *
 * Failover is never delayed: an eviction (the taint manager or application failover took a
 * cluster out of `spec.clusters`), a target cluster deleting or gone, a binding whose last
 * decision failed (Unschedulable and friends retry on their own timer), a manual reschedule and
 * a first schedule all go at once, and take any update that is waiting along.
 */
export function debounceUpdate(i: DebounceInput): DebounceVerdict {
  if (!(i.debounceMs > 0)) return { wait: false, reason: "off" };
  if (!UPDATES.has(i.trigger)) return { wait: false, reason: "notAnUpdate" };
  const b = i.binding;
  if (!b.metadata.annotations?.[PolicyPlacementAnnotation]) return { wait: false, reason: "firstSchedule" };
  if (b.status?.conditions?.find((c) => c.type === SCHEDULED)?.status !== "True") return { wait: false, reason: "notScheduled" };
  const placed = lastPlaced(b);
  const current = placedNow(b);
  if (!placed || placed.length !== current.length || placed.some((t, k) => t !== current[k])) return { wait: false, reason: "targetsMoved" };
  const byName = new Map(i.clusters.map((c) => [c.metadata.name, c]));
  const leaving = (name: string | undefined) => {
    const c = name === undefined ? undefined : byName.get(name);
    return !c || isDeleting(c);
  };
  if ((b.spec?.clusters ?? []).some((t) => leaving(t.name))) return { wait: false, reason: "targetLeaving" };
  const since = i.since !== undefined && i.since <= i.now ? i.since : i.now;
  const left = since + i.debounceMs - i.now;
  if (left <= 0) return { wait: false, reason: "settled" };
  return { wait: true, ms: left, since };
}
