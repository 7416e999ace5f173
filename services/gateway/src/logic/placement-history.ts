/**
 * A binding's placement history as the API serves it (GET .../resourcebindings/{name}/history,
 * .../clusterresourcebindings/{name}/history, gRPC ObjectService.History): each change of
 * `spec.clusters` the store recorded, with what caused it named from the facts its write carried.
 * Pure: the records come from the store.
 */
import { KARMADA, type ResourceType } from "@flotilla/api";

/** The kinds with a placement history: ResourceBinding and ClusterResourceBinding, through one path. */
export const hasPlacementHistory = (t: Pick<ResourceType, "group" | "kind">): boolean =>
  t.group === KARMADA.resourceBinding.group && (t.kind === KARMADA.resourceBinding.kind || t.kind === KARMADA.clusterResourceBinding.kind);

export const PLACEMENT_HISTORY_API_VERSION = "scheduling.flotilla.io/v1alpha1";
export const PLACEMENT_HISTORY_KIND = "PlacementChangeList";

/** A cluster and its replicas, as in `spec.clusters`. */
export interface Target {
  name?: string;
  replicas?: number;
}

interface Task {
  fromCluster?: string;
  reason?: string;
  message?: string;
  producer?: string;
}

/** One recorded change (the store's PlacementHistoryRecord, its time as RFC 3339). */
export interface ChangeRecord {
  resourceVersion: string;
  time: string;
  actor?: string;
  from: Target[];
  to: Target[];
  cause: {
    addedTasks?: Task[];
    removedTasks?: Task[];
    diagnosis?: { trigger?: string; result?: string };
    scheduled?: { reason?: string; message?: string };
  };
}

export interface Actor {
  /** Service (a Flotilla service's own write), User (through the gateway), or Unknown. */
  kind: "Service" | "User" | "Unknown";
  name: string;
}

export interface PlacementChange {
  time: string;
  /** The binding's resourceVersion the change made. */
  resourceVersion: string;
  /**
   * What caused it: the scheduler's trigger (placementChanged, replicasChanged,
   * rescheduleTriggered, alwaysSchedule, targetClusterDeleting, targetClusterGone, statusMissing);
   * `eviction` (a cluster left into a graceful-eviction task); `evictionReverted` (an evicted
   * cluster that recovered with nothing in its place was put back); `update` (any other write,
   * e.g. a user's edit of spec.clusters).
   */
  trigger: string;
  /** The scheduler's result (Success, NoClusterFit), or the eviction task's reason (TaintUntolerated, ApplicationFailure, …). */
  reason?: string;
  message?: string;
  /** Who asked for an eviction (the task's producer: TaintManager, …). */
  producer?: string;
  actor?: Actor;
  from: Target[];
  to: Target[];
}

const names = (ts: readonly Target[]) => new Set(ts.map((t) => t.name ?? ""));
const unique = (xs: Array<string | undefined>) => [...new Set(xs.filter((x): x is string => !!x))];
const joined = (xs: Array<string | undefined>) => unique(xs).join("; ") || undefined;

/** `service:scheduler` → {Service, scheduler}; `user:alice` → {User, alice}. */
export function actorOf(raw: string | undefined): Actor | undefined {
  if (!raw) return undefined;
  const i = raw.indexOf(":");
  const [prefix, name] = i < 0 ? ["", raw] : [raw.slice(0, i), raw.slice(i + 1)];
  if (prefix === "service") return { kind: "Service", name };
  if (prefix === "user") return { kind: "User", name };
  return { kind: "Unknown", name: raw };
}

/** Names the trigger, reason, message and producer of one change from what its write carried. */
export function describeChange(r: ChangeRecord): PlacementChange {
  const before = names(r.from);
  const after = names(r.to);
  const evictions = (r.cause.addedTasks ?? []).filter((t) => before.has(t.fromCluster ?? "") && !after.has(t.fromCluster ?? ""));
  const restored = (r.cause.removedTasks ?? []).filter((t) => after.has(t.fromCluster ?? "") && !before.has(t.fromCluster ?? ""));
  let why: Pick<PlacementChange, "trigger" | "reason" | "message" | "producer">;
  if (evictions.length) {
    why = { trigger: "eviction", reason: joined(evictions.map((t) => t.reason)), message: joined(evictions.map((t) => t.message)), producer: joined(evictions.map((t) => t.producer)) };
  } else if (restored.length) {
    why = {
      trigger: "evictionReverted",
      reason: "ClusterRecovered",
      message: `${restored.map((t) => t.fromCluster).join(", ")} recovered with nothing scheduled in its place: put back into the placement`,
      producer: joined(restored.map((t) => t.producer)),
    };
  } else if (r.cause.diagnosis?.trigger) {
    why = { trigger: r.cause.diagnosis.trigger, reason: r.cause.diagnosis.result ?? r.cause.scheduled?.reason, message: r.cause.scheduled?.message || undefined };
  } else {
    why = { trigger: "update" };
  }
  const actor = actorOf(r.actor);
  return {
    time: r.time,
    resourceVersion: r.resourceVersion,
    trigger: why.trigger,
    ...(why.reason ? { reason: why.reason } : {}),
    ...(why.message ? { message: why.message } : {}),
    ...(why.producer ? { producer: why.producer } : {}),
    ...(actor ? { actor } : {}),
    from: r.from.map(target),
    to: r.to.map(target),
  };
}

const target = (t: Target): Target => ({ name: t.name ?? "", ...(t.replicas ? { replicas: t.replicas } : {}) });

/** The answer: a Kubernetes-style List of the changes, oldest first, naming the binding it belongs to. */
export function placementHistoryList(t: Pick<ResourceType, "group" | "version" | "kind">, binding: { namespace: string; name: string; uid: string }, records: readonly ChangeRecord[]) {
  return {
    apiVersion: PLACEMENT_HISTORY_API_VERSION,
    kind: PLACEMENT_HISTORY_KIND,
    metadata: {},
    binding: { apiVersion: `${t.group}/${t.version}`, kind: t.kind, ...(binding.namespace ? { namespace: binding.namespace } : {}), name: binding.name, uid: binding.uid },
    items: records.map(describeChange),
  };
}

export type PlacementHistoryList = ReturnType<typeof placementHistoryList>;
