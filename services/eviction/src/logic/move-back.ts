import { ConditionReady, findCondition, parseTime, type AnyResourceBinding, type Cluster, type MoveBackConfig } from "@flotilla/api";

/** A placement entry as the move-back annotations keep it. */
export interface Target {
  name: string;
  replicas: number;
}

/** What the move-back needs to know of a cluster to return to. */
export interface ReturnCluster {
  /** Ready=True now. */
  ready: boolean;
  /** When Ready last turned True (ms). */
  readySince?: number;
  /** A NoSchedule or NoExecute taint: no return while it is there. */
  tainted: boolean;
  deleting: boolean;
}

/** The recorded surge: the placement it started from, for the replica count it was started at. */
export interface Surge {
  replicas: number;
  from: Target[];
  startedAt: number;
}

export interface MoveBackInput {
  binding: AnyResourceBinding;
  /** The binding's move-back setting (undefined: the policy does not, or no longer, ask for it). */
  config: MoveBackConfig | undefined;
  /** The placement before the failover, as recorded at the first eviction. */
  before: Target[] | undefined;
  surge: Surge | undefined;
  /** When the last move-back of this binding was given up (its window starts again then). */
  failedAt?: number;
  /** The clusters of `before` (absent: no such cluster). */
  clusters: ReadonlyMap<string, ReturnCluster | undefined>;
  /**
   * The answer to this binding's claim of a move-back slot (the fleet-wide semaphore of
   * `maxConcurrent`), once it asked: granted or not, and how many other bindings held one.
   */
  slot?: SlotClaim;
  /** How long a surge may wait for the returning copy to be healthy before it is given up. */
  surgeTimeoutMs: number;
  /** How long a binding refused a slot waits before it claims again (default RECHECK_MS). */
  slotRecheckMs?: number;
  now: number;
}

/** The fleet's answer to a claim of a move-back slot. */
export interface SlotClaim {
  granted: boolean;
  /** Other bindings holding a slot (moving back, or about to). */
  held: number;
}

export type MoveBackDecision =
  /** Nothing to do until the binding changes. */
  | { kind: "none" }
  /** Drop the record (and any surge): there is nothing to move back, or it no longer makes sense. */
  | { kind: "forget"; why: string }
  /** Look again after `ms` (`slot`: for a move-back slot to be free). */
  | { kind: "wait"; ms: number; why: string; slot?: true }
  /** Everything is ready for the surge: claim one of the fleet's `max` move-back slots, then decide again with the answer. */
  | { kind: "claim"; max: number }
  /** Start: place `clusters` (the old placement and the way back together) and record the surge. */
  | { kind: "surge"; clusters: Target[]; surge: Surge }
  /** The returning copies are healthy: the placement before the failover, and the record goes. */
  | { kind: "finish"; clusters: Target[] }
  /** The surge did not become healthy in time: back to where it started, the window starts again. */
  | { kind: "revert"; clusters: Target[]; why: string };

/** How often a binding waiting for its cluster to turn Ready (or for a free slot) looks again. */
export const RECHECK_MS = 5_000;
/** How often a surge looks at the returning copy's health (binding changes wake it sooner). */
export const SURGE_RECHECK_MS = 2_000;

export function returnCluster(c: Cluster | undefined): ReturnCluster | undefined {
  if (!c) return undefined;
  const r = findCondition(c.status?.conditions, ConditionReady);
  return {
    ready: r?.status === "True",
    readySince: r?.status === "True" ? parseTime(r.lastTransitionTime) : undefined,
    tainted: (c.spec?.taints ?? []).some((t) => t.effect === "NoSchedule" || t.effect === "NoExecute"),
    deleting: !!c.metadata.deletionTimestamp,
  };
}

const sum = (ts: readonly { replicas?: number }[]) => ts.reduce((s, t) => s + (t.replicas ?? 0), 0);

/**
 * Move-back after recovery: replicas a taint evicted from a cluster go back to it once it has
 * been Ready and untainted for the stabilization window, at most `maxConcurrent` bindings at a
 * time across the fleet (a binding ready to start claims a slot, `claim`, and starts only with
 * one granted), the graceful way: first the old placement and the returning copies
 * together (a surge: more replicas than `spec.replicas` for a while), and only once every
 * cluster of the placement before the failover reports its copy Healthy with its replicas
 * ready, that placement alone. A surge that is not healthy within `surgeTimeoutMs` goes back to
 * where it started, and the window starts again.
 *
 * Only Divided placements have something to return (a Duplicated one is scheduled to every
 * fitting cluster again by the scheduler). A change of the replica count, or of the clusters
 * that are left, ends it: the scheduler's answer to the new situation wins.
 */
export function decideMoveBack(i: MoveBackInput): MoveBackDecision {
  const b = i.binding;
  const spec = b.spec ?? {};
  if (!i.before) return i.surge ? { kind: "forget", why: "no placement before the failover is recorded" } : { kind: "none" };
  if (b.metadata.deletionTimestamp) return { kind: "none" };
  if (!i.config) return { kind: "forget", why: "the policy does not ask for move-back" };
  if (spec.placement?.replicaScheduling?.replicaSchedulingType !== "Divided") return { kind: "forget", why: "only Divided placements move back" };
  const replicas = spec.replicas ?? 0;
  const current = new Map((spec.clusters ?? []).map((c) => [c.name ?? "", c.replicas ?? 0]));

  if (i.surge) {
    if (i.surge.replicas !== replicas) return { kind: "forget", why: `the replica count changed during the move-back (${i.surge.replicas} → ${replicas})` };
    const agg = new Map((b.status?.aggregatedStatus ?? []).map((a) => [a.clusterName ?? "", a]));
    const healthy = i.before
      .filter((t) => t.replicas > 0)
      .every((t) => {
        const a = agg.get(t.name);
        if (a?.health !== "Healthy") return false;
        const ready = (a.status as { readyReplicas?: unknown } | undefined)?.readyReplicas;
        return typeof ready !== "number" || ready >= t.replicas;
      });
    if (healthy) return { kind: "finish", clusters: i.before.filter((t) => t.replicas > 0) };
    const left = i.surge.startedAt + i.surgeTimeoutMs - i.now;
    if (left <= 0) return { kind: "revert", clusters: i.surge.from, why: `the returning copies were not healthy within ${Math.round(i.surgeTimeoutMs / 1000)}s` };
    return { kind: "wait", ms: Math.min(SURGE_RECHECK_MS, left), why: "waiting for the returning copies to be healthy" };
  }

  if ((spec.gracefulEvictionTasks?.length ?? 0) > 0) return { kind: "none" };
  if (sum(i.before) !== replicas) return { kind: "forget", why: `the replica count changed since the failover (${sum(i.before)} → ${replicas})` };
  const missing = i.before.filter((t) => t.replicas > (current.get(t.name) ?? 0));
  if (!missing.length) return { kind: "forget", why: "the placement is back already" };
  let since = i.failedAt ?? 0;
  for (const t of missing) {
    const c = i.clusters.get(t.name);
    if (!c || c.deleting) return { kind: "forget", why: `cluster ${t.name} is gone` };
    if (!c.ready || c.tainted) return { kind: "wait", ms: RECHECK_MS, why: `cluster ${t.name} is not Ready and untainted` };
    since = Math.max(since, c.readySince ?? i.now);
  }
  const due = since + i.config.stabilizationSeconds * 1000;
  if (i.now < due) return { kind: "wait", ms: due - i.now, why: "stabilization window" };
  if (!i.slot) return { kind: "claim", max: i.config.maxConcurrent };
  if (!i.slot.granted) return { kind: "wait", ms: i.slotRecheckMs ?? RECHECK_MS, slot: true, why: `${i.slot.held} binding(s) moving back already (maxConcurrent ${i.config.maxConcurrent})` };
  const names = [...new Set([...i.before.map((t) => t.name), ...current.keys()])].sort();
  const beforeOf = new Map(i.before.map((t) => [t.name, t.replicas]));
  const clusters = names.map((n) => ({ name: n, replicas: Math.max(current.get(n) ?? 0, beforeOf.get(n) ?? 0) })).filter((t) => t.replicas > 0);
  const from = [...current.entries()].map(([name, r]) => ({ name, replicas: r })).filter((t) => t.replicas > 0);
  return { kind: "surge", clusters, surge: { replicas, from, startedAt: i.now } };
}
