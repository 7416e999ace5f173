import { ConditionReady, findCondition, type Condition } from "@flotilla/api";

export const ConditionCompleteAPIEnablements = "CompleteAPIEnablements";

/** Upstream's reasons and messages (pkg/controllers/status/cluster_status_controller.go). */
export const ReadyReasons = {
  ready: "ClusterReady",
  notReady: "ClusterNotReady",
  notReachable: "ClusterNotReachable",
  collectionFailed: "StatusCollectionFailed",
} as const;

export const ReadyMessages = {
  ready: "cluster is healthy and ready to accept workloads",
  notReady: "cluster is reachable but health endpoint responded without ok",
  notReachable: "cluster is not reachable",
} as const;

export type ObservedReady = Pick<Condition, "type" | "status" | "reason" | "message">;

/** The Ready condition a probe observed: unreachable → False/ClusterNotReachable, not 200 → False/ClusterNotReady, 200 → True. */
export function generateReadyCondition(online: boolean, healthy: boolean): ObservedReady {
  if (!online) return { type: ConditionReady, status: "False", reason: ReadyReasons.notReachable, message: ReadyMessages.notReachable };
  if (!healthy) return { type: ConditionReady, status: "False", reason: ReadyReasons.notReady, message: ReadyMessages.notReady };
  return { type: ConditionReady, status: "True", reason: ReadyReasons.ready, message: ReadyMessages.ready };
}

interface Observation {
  status: string;
  /** When the observed status last changed; undefined for the first observation. */
  since?: number;
}

/**
 * Upstream's clusterConditionStore.thresholdAdjustedReadyCondition: remembers per cluster the
 * last observed Ready status and when it changed. A flip into True is published only after it
 * held for `successThresholdMs`, a flip out of True only after `failureThresholdMs`; until then
 * the cluster's current condition is kept. The first observation of a cluster, or a cluster
 * without a Ready condition, publishes what was observed at once. In memory, as upstream.
 */
export class ReadyThresholds {
  private readonly saved = new Map<string, Observation>();

  constructor(private readonly cfg: { successThresholdMs: number; failureThresholdMs: number }) {}

  /** The condition to publish for `observed`, given the cluster's current conditions, at `now` (ms). */
  adjust(cluster: string, current: Condition[] | undefined, observed: ObservedReady, now: number): ObservedReady {
    const saved = this.saved.get(cluster);
    if (!saved) {
      this.saved.set(cluster, { status: observed.status ?? "" });
      return observed;
    }
    const cur = findCondition(current, ConditionReady);
    if (!cur) return observed;
    let s = saved;
    if (s.status !== observed.status) {
      s = { status: observed.status ?? "", since: now };
      this.saved.set(cluster, s);
    }
    const threshold = observed.status === "True" ? this.cfg.successThresholdMs : this.cfg.failureThresholdMs;
    const flipping = (observed.status === "True") !== (cur.status === "True");
    if (flipping && now < (s.since ?? 0) + threshold) {
      return { type: cur.type, status: cur.status, reason: cur.reason, message: cur.message };
    }
    return observed;
  }

  /** How long until a pending flip would be published (ms), or undefined when none is pending. */
  pendingFlipMs(cluster: string, current: Condition[] | undefined, now: number): number | undefined {
    const s = this.saved.get(cluster);
    const cur = findCondition(current, ConditionReady);
    if (!s || !cur || s.since === undefined) return undefined;
    if ((s.status === "True") === (cur.status === "True")) return undefined;
    const threshold = s.status === "True" ? this.cfg.successThresholdMs : this.cfg.failureThresholdMs;
    return Math.max(0, s.since + threshold - now);
  }

  /**
   * Starts from what the cluster's Ready condition says, as if this process had observed it: a
   * later observation that differs waits out its threshold instead of being published at once.
   * For a member taken over from another process that was smoothing it (member sharding), not
   * for one seen for the first time.
   */
  continueFrom(cluster: string, current: Condition[] | undefined): void {
    const cur = findCondition(current, ConditionReady);
    if (cur && !this.saved.has(cluster)) this.saved.set(cluster, { status: cur.status ?? "" });
  }

  forget(cluster: string): void {
    this.saved.delete(cluster);
  }
}
