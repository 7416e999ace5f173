import {
  EvictionReasonApplicationFailure,
  PurgeModeDirectly,
  PurgeModeGracefully,
  PurgeModeNever,
  DEFAULT_APPLICATION_FAILOVER_TOLERATION_SECONDS,
  type AggregatedStatusItem,
  type EvictOptions,
  type PurgeMode,
  type ResourceBindingSpec,
  type ResourceBindingStatus,
} from "@flotilla/api";
import { evalJsonPath } from "./jsonpath.js";

/** The producer of application-failure tasks: upstream's controller name (the CRB controller's for a ClusterResourceBinding). */
export const RBApplicationFailoverProducer = "resource-binding-application-failover-controller";
export const CRBApplicationFailoverProducer = "cluster-resource-binding-application-failover-controller";

/**
 * Where the controller keeps, per cluster, when it first saw the application Unhealthy there:
 * an annotation on the binding (JSON `{cluster: RFC 3339}`), so the toleration survives a
 * restart and is shared by replicas (upstream keeps it in memory and starts over).
 */
export const UnhealthySinceAnnotation = "applicationfailover.flotilla.io/unhealthy-since";

export type UnhealthySince = Record<string, number>;

/** The annotation's value read back; anything unreadable counts as nothing recorded. */
export function parseUnhealthySince(v: string | undefined): UnhealthySince {
  if (!v) return {};
  try {
    const o = JSON.parse(v) as unknown;
    if (!o || typeof o !== "object" || Array.isArray(o)) return {};
    const out: UnhealthySince = {};
    for (const [k, t] of Object.entries(o)) {
      const ms = typeof t === "string" ? Date.parse(t) : NaN;
      if (Number.isFinite(ms)) out[k] = ms;
    }
    return out;
  } catch {
    return {};
  }
}

/** The annotation's value (keys sorted), or undefined when nothing is recorded. */
export function formatUnhealthySince(s: UnhealthySince): string | undefined {
  const keys = Object.keys(s).sort();
  if (!keys.length) return undefined;
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, new Date(s[k]!).toISOString()])));
}

/** The policy's purge mode (legacy spellings mapped; empty = Gracefully). */
export function applicationPurgeMode(mode: string | undefined): PurgeMode {
  switch (mode) {
    case PurgeModeDirectly:
    case "Immediately":
      return PurgeModeDirectly;
    case PurgeModeNever:
      return PurgeModeNever;
    default:
      return PurgeModeGracefully;
  }
}

export interface StatePreservationRule {
  aliasLabelName?: string;
  jsonPath?: string;
}

/**
 * BuildPreservedLabelState: each rule's JSONPath evaluated over the cluster's reported status
 * (the resource's `.status`, so `{ .readyReplicas }`, not `{ .status.readyReplicas }`), keyed by
 * its aliasLabelName. Throws when the status was not collected yet or a path does not resolve.
 */
export function preservedLabelState(rules: readonly StatePreservationRule[], cluster: string, item: AggregatedStatusItem | undefined): Record<string, string> {
  if (!item || item.status === undefined || item.status === null) throw new Error(`the application status has not yet been collected from Cluster(${cluster})`);
  const out: Record<string, string> = {};
  for (const r of rules) {
    try {
      out[r.aliasLabelName ?? ""] = evalJsonPath(r.jsonPath ?? "", item.status);
    } catch (e) {
      throw new Error(`statePreservation rule ${r.aliasLabelName ?? ""} (jsonPath ${JSON.stringify(r.jsonPath ?? "")}) on Cluster(${cluster}): ${(e as Error).message}`);
    }
  }
  return out;
}

export interface FailoverInput {
  spec: ResourceBindingSpec | undefined;
  status: ResourceBindingStatus | undefined;
  /** What the annotation recorded. */
  since: UnhealthySince;
  /** Carry statePreservation into the tasks (upstream's StatefulFailoverInjection gate). */
  statefulInjection: boolean;
  producer: string;
  now: number;
}

export interface Eviction {
  cluster: string;
  options: EvictOptions;
}

export interface FailoverDecision {
  /** False: the binding has no application failover or no status yet; the record is forgotten. */
  active: boolean;
  /** Clusters to evict now, in spec.clusters order. */
  evict: Eviction[];
  /** Clusters past their toleration that cannot be evicted yet (their state cannot be read), with why. */
  failed: { cluster: string; message: string }[];
  /** The record after this decision (evicted clusters and clusters that are Healthy or no longer scheduled drop out). */
  since: UnhealthySince;
  /** Come back after this many ms (undefined: nothing to wait for). */
  retryMs: number | undefined;
}

/**
 * Upstream's application failover decision for one binding:
 * - Active only with `failover.application` and a non-empty aggregatedStatus. (Upstream also
 *   requires an InterpretHealth hook for the kind; kinds without one always report Healthy here,
 *   so they never fail over either.)
 * - A scheduled cluster reporting Unhealthy and not already in a graceful-eviction task starts
 *   its toleration when first seen; once `now` is past `since + tolerationSeconds` it is
 *   evicted with reason ApplicationFailure, the policy's purge mode (Gracefully with its
 *   gracePeriodSeconds, Never with suppressDeletion) and, with statePreservation rules, the
 *   values read from that cluster's status plus the clusters before the failover.
 * - Healthy resets a cluster's toleration. Unknown keeps it as it is (upstream: a gap in status
 *   collection does not restart the clock). A cluster no longer scheduled is forgotten.
 * - A cluster whose state cannot be read yet is not evicted; it is tried again (upstream
 *   fails the whole reconcile and retries).
 */
export function decideApplicationFailover(i: FailoverInput): FailoverDecision {
  const app = i.spec?.failover?.application;
  const items = i.status?.aggregatedStatus ?? [];
  if (!app || items.length === 0) return { active: false, evict: [], failed: [], since: {}, retryMs: undefined };
  const tolMs = Math.max(0, app.decisionConditions?.tolerationSeconds ?? DEFAULT_APPLICATION_FAILOVER_TOLERATION_SECONDS) * 1000;
  const scheduled = (i.spec?.clusters ?? []).map((c) => c.name ?? "");
  const inTask = new Set((i.spec?.gracefulEvictionTasks ?? []).map((t) => t.fromCluster ?? ""));
  const byCluster = new Map(items.map((s) => [s.clusterName ?? "", s]));
  const since: UnhealthySince = {};
  for (const c of scheduled) if (i.since[c] !== undefined) since[c] = i.since[c]!;

  const purgeMode = applicationPurgeMode(app.purgeMode);
  const rules = i.statefulInjection ? (app.statePreservation?.rules ?? []) : [];
  const evict: Eviction[] = [];
  const failed: { cluster: string; message: string }[] = [];
  let retryMs: number | undefined;
  const retry = (ms: number) => (retryMs = Math.max(1, retryMs === undefined ? ms : Math.min(retryMs, ms)));

  for (const cluster of scheduled) {
    const health = byCluster.get(cluster)?.health;
    if (health === "Healthy" || inTask.has(cluster)) {
      delete since[cluster];
      continue;
    }
    if (health !== "Unhealthy") {
      // Unknown or not reported: the clock neither starts nor resets; come back when it ends
      if (since[cluster] !== undefined) retry(Math.max(1, since[cluster]! + tolMs - i.now + 1));
      continue;
    }
    const first = since[cluster] ?? (since[cluster] = i.now);
    if (!(i.now > first + tolMs)) {
      retry(first + tolMs - i.now + 1);
      continue;
    }
    const options: EvictOptions = {
      purgeMode,
      producer: i.producer,
      reason: EvictionReasonApplicationFailure,
      message: `the application was unhealthy on cluster ${cluster} for more than ${tolMs / 1000}s`,
      ...(purgeMode === PurgeModeGracefully && app.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: app.gracePeriodSeconds } : {}),
    };
    if (rules.length) {
      try {
        options.preservedLabelState = preservedLabelState(rules, cluster, byCluster.get(cluster));
        options.clustersBeforeFailover = [...scheduled];
      } catch (e) {
        failed.push({ cluster, message: (e as Error).message });
        retry(Math.max(1000, Math.min(tolMs, 10_000)));
        continue;
      }
    }
    evict.push({ cluster, options });
    delete since[cluster];
  }
  return { active: true, evict, failed, since, retryMs };
}
