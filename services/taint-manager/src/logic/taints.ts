import { TaintClusterNotReady, TaintClusterTerminating, TaintClusterUnreachable, type Cluster, type Condition, type Taint } from "@flotilla/api";
import { rfc3339, parseTime } from "@flotilla/api";

export const NO_SCHEDULE = "NoSchedule";
export const NO_EXECUTE = "NoExecute";

/** The taints the cluster controller owns (identity is key + effect); every other taint is a user's and left alone. */
export const NotReadyNoSchedule: Taint = { key: TaintClusterNotReady, effect: NO_SCHEDULE };
export const UnreachableNoSchedule: Taint = { key: TaintClusterUnreachable, effect: NO_SCHEDULE };
export const NotReadyNoExecute: Taint = { key: TaintClusterNotReady, effect: NO_EXECUTE };
export const UnreachableNoExecute: Taint = { key: TaintClusterUnreachable, effect: NO_EXECUTE };
export const TerminatingNoExecute: Taint = { key: TaintClusterTerminating, effect: NO_EXECUTE };

export function sameTaint(a: Taint, b: Taint): boolean {
  return (a.key ?? "") === (b.key ?? "") && (a.effect ?? "") === (b.effect ?? "");
}

export function hasTaint(taints: readonly Taint[] | undefined, t: Taint): boolean {
  return (taints ?? []).some((x) => sameTaint(x, t));
}

export function taintString(t: Taint): string {
  return t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`;
}

export interface TaintPlanInput {
  /** The cluster's Ready condition, if it has one. */
  ready: Condition | undefined;
  deleting: boolean;
  /** FAILOVER and ENABLE_CLUSTER_NO_EXECUTE_TAINTS: add the NoExecute taints after the failover-eviction timeout. */
  failover: boolean;
  failoverEvictionTimeoutMs: number;
  now: number;
}

export interface TaintPlan {
  add: Taint[];
  remove: Taint[];
  /** When the plan can next change by the passing of time alone (a NoExecute taint falls due), in ms since the epoch. */
  recheckAt?: number;
}

/**
 * Since when a cluster has not been Ready, for the failover-eviction timeout: a False cluster
 * since its Ready condition's last transition; an Unknown one since its last heartbeat (the last
 * time anyone reported on it), or the transition when there is no heartbeat — upstream's
 * readyTransitionTimestamp and probeTimestamp.
 */
export function notReadySince(ready: Condition): number | undefined {
  if (ready.status === "False") return parseTime(ready.lastTransitionTime);
  if (ready.status === "Unknown") return parseTime(ready.lastHeartbeatTime) ?? parseTime(ready.lastTransitionTime);
  return undefined;
}

/**
 * The cluster controller's taints from the Ready condition (Karmada v1.3–v1.5):
 * - deleting → terminating:NoExecute (nothing else changes);
 * - no Ready condition → not-ready:NoSchedule;
 * - False → not-ready:NoSchedule (unreachable:NoSchedule goes), and once not Ready for the
 *   failover-eviction timeout, not-ready:NoExecute (unreachable:NoExecute goes);
 * - Unknown → the same with unreachable and not-ready swapped;
 * - True → all four go.
 * With failover (or the automatic NoExecute taints) off no NoExecute taint is added (existing ones
 * still go on True). The caller spares the taints a ClusterTaintPolicy added (sparePolicyTaints).
 */
export function planTaints(i: TaintPlanInput): TaintPlan {
  if (i.deleting) return { add: [TerminatingNoExecute], remove: [] };
  const r = i.ready;
  if (!r) return { add: [NotReadyNoSchedule], remove: [] };
  switch (r.status) {
    case "True":
      return { add: [], remove: [NotReadyNoSchedule, UnreachableNoSchedule, NotReadyNoExecute, UnreachableNoExecute] };
    case "False":
    case "Unknown": {
      const unknown = r.status === "Unknown";
      const plan: TaintPlan = {
        add: [unknown ? UnreachableNoSchedule : NotReadyNoSchedule],
        remove: [unknown ? NotReadyNoSchedule : UnreachableNoSchedule],
      };
      if (!i.failover) return plan;
      const since = notReadySince(r) ?? i.now;
      const due = since + i.failoverEvictionTimeoutMs;
      if (i.now >= due) {
        plan.add.push(unknown ? UnreachableNoExecute : NotReadyNoExecute);
        plan.remove.push(unknown ? NotReadyNoExecute : UnreachableNoExecute);
      } else {
        plan.recheckAt = due;
      }
      return plan;
    }
    default:
      // an unrecognised status is treated as not reported yet
      return { add: [NotReadyNoSchedule], remove: [] };
  }
}

/**
 * The taints after applying `plan`: taints to add that are missing are appended with
 * `timeAdded = now`; existing ones keep theirs; taints to remove go; everything else (users'
 * taints) stays as it is. Returns undefined when nothing changes.
 */
export function applyTaintPlan(taints: readonly Taint[] | undefined, plan: TaintPlan, now: number): { taints: Taint[]; added: Taint[]; removed: Taint[] } | undefined {
  const cur = [...(taints ?? [])];
  const removed = cur.filter((t) => plan.remove.some((r) => sameTaint(r, t)) && !plan.add.some((a) => sameTaint(a, t)));
  const kept = cur.filter((t) => !removed.includes(t));
  const added: Taint[] = [];
  for (const a of plan.add) {
    if (!kept.some((t) => sameTaint(t, a)) && !added.some((t) => sameTaint(t, a))) added.push({ ...a, timeAdded: rfc3339(now) });
  }
  if (added.length === 0 && removed.length === 0) return undefined;
  return { taints: [...kept, ...added], added, removed };
}

/**
 * What about a cluster the taint manager acts on: its NoExecute taints (with when each was added),
 * or that it is gone. A wake-up of a cluster whose signature is unchanged (a heartbeat, a status
 * update) need not reach the controller: the pass it planned comes back on its durable timer.
 */
export function noExecuteSignature(c: Cluster | undefined): string {
  if (!c) return "gone";
  return JSON.stringify((c.spec?.taints ?? []).filter((t) => t.effect === NO_EXECUTE).map((t) => [t.key, t.value ?? "", t.timeAdded ?? ""]).sort());
}
