import type { Condition } from "@flotilla/api";
import { rfc3339, parseTime } from "@flotilla/api";

export const ConditionReady = "Ready";
export const ReasonClusterStatusUnknown = "ClusterStatusUnknown";
export const ReasonClusterStatusNeverUpdated = "ClusterStatusNeverUpdated";
export const MessageClusterStatusUnknown = "Cluster status controller stopped posting cluster status.";
export const MessageClusterStatusNeverUpdated = "Cluster status controller never posted cluster status.";

export function readyCondition(conditions: readonly Condition[] | undefined): Condition | undefined {
  return (conditions ?? []).find((c) => c.type === ConditionReady);
}

export interface MonitorInput {
  ready: Condition | undefined;
  /**
   * When this controller first saw the Ready condition's current `lastHeartbeatTime` (see
   * HeartbeatObserver): the grace period counts from then, not from the heartbeat's own clock,
   * so a control plane that was down for longer than the grace period does not find every
   * member stale when it comes back (upstream keeps the same observed probe times).
   */
  observedAt?: number;
  /**
   * Pull clusters: when this controller last saw the renewTime of the Lease
   * `karmada-cluster/<cluster>` change (the same observer, fed with the renewTime). A renewal is
   * a sign of life as a new heartbeat is (upstream's probe timestamp advances on either), so the
   * grace period counts from the later of the two.
   */
  leaseObservedAt?: number;
  creationTimestamp: string | undefined;
  deleting: boolean;
  /** CLUSTER_MONITOR_GRACE_PERIOD: how long a reported Ready condition stays believable without a heartbeat. */
  graceMs: number;
  /** CLUSTER_STARTUP_GRACE_PERIOD: how long a new cluster may go without any Ready condition. */
  startupGraceMs: number;
  now: number;
}

export type MonitorDecision =
  /** Nothing to do now; look again at `recheckAt` (ms since the epoch) when set. */
  | { kind: "fresh"; recheckAt?: number }
  /** The status is stale: replace the Ready condition with this one. */
  | { kind: "stale"; condition: Condition };

/**
 * The health monitor (upstream's monitorClusterHealth): nobody has reported on the cluster for
 * the grace period, so its Ready condition is set to Unknown. "Reported" is a new value of the
 * Ready condition's `lastHeartbeatTime`, which the execution service stamps on every probe, and
 * the grace period counts from when this controller first saw that value (`observedAt`); for a
 * Pull cluster a renewal of its Lease seen by this controller (`leaseObservedAt`) counts as well,
 * and the later of the two wins. A condition with neither is not judged (there is no way to tell
 * a quiet reporter from a dead one). A cluster that never got a Ready condition gets
 * Unknown/ClusterStatusNeverUpdated after the startup grace period from its creation, or from the
 * last lease renewal seen when that is later. Unknown stays Unknown; deleting clusters are left alone.
 */
export function monitorHealth(i: MonitorInput): MonitorDecision {
  if (i.deleting) return { kind: "fresh" };
  const r = i.ready;
  if (!r) {
    const created = latest(parseTime(i.creationTimestamp), i.leaseObservedAt);
    if (created === undefined) return { kind: "fresh" };
    const due = created + i.startupGraceMs;
    if (i.now <= due) return { kind: "fresh", recheckAt: due + 1 };
    return {
      kind: "stale",
      condition: { type: ConditionReady, status: "Unknown", reason: ReasonClusterStatusNeverUpdated, message: MessageClusterStatusNeverUpdated, lastTransitionTime: rfc3339(i.now) },
    };
  }
  if (r.status === "Unknown") return { kind: "fresh" };
  const beat = parseTime(r.lastHeartbeatTime);
  const probe = latest(beat === undefined ? undefined : (i.observedAt ?? beat), i.leaseObservedAt);
  if (probe === undefined) return { kind: "fresh" };
  const due = probe + i.graceMs;
  if (i.now <= due) return { kind: "fresh", recheckAt: due + 1 };
  return {
    kind: "stale",
    condition: {
      type: ConditionReady,
      status: "Unknown",
      reason: ReasonClusterStatusUnknown,
      message: MessageClusterStatusUnknown,
      lastTransitionTime: rfc3339(i.now),
      ...(r.lastHeartbeatTime ? { lastHeartbeatTime: r.lastHeartbeatTime } : {}),
    },
  };
}

function latest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/** The conditions with the Ready condition replaced by `ready`. */
export function withReady(conditions: readonly Condition[] | undefined, ready: Condition): Condition[] {
  const out = (conditions ?? []).filter((c) => c.type !== ConditionReady);
  out.push(ready);
  return out;
}
