import { parseApiVersion, rfc3339, setCondition, jsonClean, jsonEqual, type AggregatedStatusItem, type AnyResourceBinding, type Condition, type KubeObject, type ResourceBindingStatus, type Work } from "@flotilla/api";
import { clusterOfWork, keptClusters } from "./orphans.js";
import { templateGroupKind } from "./replicas.js";

export const FullyApplied = "FullyApplied";
export const FullyAppliedSuccessReason = "FullyAppliedSuccess";
export const FullyAppliedFailedReason = "FullyAppliedFailed";
export const FullyAppliedSuccessMessage = "All works have been successfully applied";
export const FullyAppliedFailedMessage = "Failed to apply all works, see status.aggregatedStatus for details";
export const WorkApplied = "Applied";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

interface ResourceRef {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
}

/** helper.GetManifestIndex: the position of the template among a Work's manifests, or -1. */
function manifestIndex(w: Work, r: ResourceRef): number {
  const manifests = (w.spec?.workload?.manifests ?? []) as Obj[];
  return manifests.findIndex((m) => {
    const meta = isObj(m.metadata) ? m.metadata : {};
    return m.apiVersion === r.apiVersion && m.kind === r.kind && (meta.namespace ?? "") === (r.namespace ?? "") && meta.name === r.name;
  });
}

/**
 * assembleWorkStatus: one item per Work not being deleted, sorted by cluster. Without
 * `Applied=True` the item says applied false, the condition's message, health Unknown;
 * otherwise status and health come from the manifest status whose identifier is the template
 * (health Unknown when none is).
 */
export function aggregatedStatusItems(works: readonly Work[], resource: ResourceRef): AggregatedStatusItem[] {
  const gv = parseApiVersion(resource.apiVersion ?? "");
  const items: AggregatedStatusItem[] = [];
  for (const w of works) {
    if (w.metadata.deletionTimestamp) continue;
    const clusterName = clusterOfWork(w);
    const applied = (w.status?.conditions ?? []).find((c) => c.type === WorkApplied);
    if (applied?.status !== "True") {
      const item: AggregatedStatusItem = { clusterName, applied: false, health: "Unknown" };
      if (applied?.message) item.appliedMessage = applied.message;
      items.push(item);
      continue;
    }
    const item: AggregatedStatusItem = { clusterName, applied: true, health: "Unknown" };
    const ordinal = manifestIndex(w, resource);
    const ms = (w.status?.manifestStatuses ?? []).find((s) => {
      const id = s.identifier ?? {};
      return (
        ordinal >= 0 &&
        (id.ordinal ?? 0) === ordinal &&
        (id.group ?? "") === gv.group &&
        (id.version ?? "") === gv.version &&
        id.kind === resource.kind &&
        (id.namespace ?? "") === (resource.namespace ?? "") &&
        id.name === resource.name
      );
    });
    if (ms) {
      if (ms.status !== undefined) item.status = ms.status;
      item.health = ms.health || "Unknown";
    }
    items.push(item);
  }
  return items.sort((a, b) => ((a.clusterName ?? "") < (b.clusterName ?? "") ? -1 : (a.clusterName ?? "") > (b.clusterName ?? "") ? 1 : 0));
}

/**
 * generateFullyAppliedCondition: True iff the items cover exactly the clusters the binding
 * keeps (a non-empty set) and every item is applied.
 */
export function fullyAppliedCondition(b: Pick<AnyResourceBinding, "spec" | "status">, items: readonly AggregatedStatusItem[]): Condition {
  const targets = keptClusters(b.spec, b.status);
  const ok = targets.size > 0 && targets.size === items.length && items.every((i) => i.applied && targets.has(i.clusterName ?? ""));
  return ok
    ? { type: FullyApplied, status: "True", reason: FullyAppliedSuccessReason, message: FullyAppliedSuccessMessage }
    : { type: FullyApplied, status: "False", reason: FullyAppliedFailedReason, message: FullyAppliedFailedMessage };
}

/**
 * The binding's status after aggregating its Works (aggregatedStatus + FullyApplied), or
 * undefined when nothing changes. Bindings not yet scheduled (no lastScheduledTime) are left alone.
 */
export function bindingStatusUpdate(b: AnyResourceBinding, works: readonly Work[], now: Date): ResourceBindingStatus | undefined {
  const status = b.status ?? {};
  if (!status.lastScheduledTime) return undefined;
  const items = aggregatedStatusItems(works, b.spec?.resource ?? {});
  const next: ResourceBindingStatus = { ...status, aggregatedStatus: items, conditions: setCondition(status.conditions, fullyAppliedCondition(b, items), now) };
  if (items.length === 0) delete next.aggregatedStatus;
  const clean = jsonClean(next);
  return jsonEqual(clean, status) ? undefined : clean;
}

// ---- the template's status (the AggregateStatus interpreter) ----

const int = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Sums the given integer fields over the items' statuses; observedGeneration becomes the template's generation. */
function sumStatus(t: KubeObject, items: readonly AggregatedStatusItem[], fields: readonly string[]): Obj {
  const old: Obj = isObj(t.status) ? t.status : {};
  const sums: Record<string, number> = {};
  let seen = false;
  for (const item of items) {
    if (!isObj(item.status)) continue;
    seen = true;
    for (const f of fields) sums[f] = (sums[f] ?? 0) + int(item.status[f]);
  }
  const next: Obj = { ...old };
  for (const f of [...fields, "observedGeneration"]) delete next[f];
  if (seen && (t.metadata.generation ?? 0) > 0) next.observedGeneration = t.metadata.generation;
  for (const f of fields) if (sums[f]) next[f] = sums[f];
  return next;
}

type Hostnamed = { hostname?: string; [k: string]: unknown };

/** A LoadBalancer's ingress points from every cluster, each naming its cluster when it has no hostname (the status is replaced). */
function loadBalancerStatus(items: readonly AggregatedStatusItem[]): Obj {
  const ingress: Hostnamed[] = [];
  for (const item of items) {
    if (!isObj(item.status)) continue;
    const lb = isObj(item.status.loadBalancer) ? item.status.loadBalancer : {};
    for (const i of Array.isArray(lb.ingress) ? lb.ingress : []) {
      if (!isObj(i)) continue;
      ingress.push({ ...i, hostname: (i.hostname as string | undefined) || item.clusterName });
    }
  }
  return { loadBalancer: ingress.length ? { ingress } : {} };
}

function conditionTrue(status: Obj, type: string): boolean {
  return Array.isArray(status.conditions) && status.conditions.some((c) => isObj(c) && c.type === type && c.status === "True");
}

/**
 * A Job: active, succeeded and failed summed; Complete once every cluster's Job completed,
 * Failed as soon as one failed; the earliest start and the latest completion. A finished Job
 * is never rewritten.
 */
function jobStatus(t: KubeObject, items: readonly AggregatedStatusItem[], now: Date): Obj | undefined {
  const old: Obj = isObj(t.status) ? t.status : {};
  if (conditionTrue(old, "Complete") || conditionTrue(old, "Failed")) return undefined;
  const next: Obj = { ...old };
  let active = 0;
  let succeeded = 0;
  let failed = 0;
  let completed = 0;
  let failedClusters: string[] = [];
  let start: string | undefined;
  let completion: string | undefined;
  for (const item of items) {
    if (!isObj(item.status)) continue;
    const s = item.status;
    active += int(s.active);
    succeeded += int(s.succeeded);
    failed += int(s.failed);
    if (conditionTrue(s, "Complete")) completed++;
    if (conditionTrue(s, "Failed")) failedClusters.push(item.clusterName ?? "");
    if (typeof s.startTime === "string" && (!start || s.startTime < start)) start = s.startTime;
    if (typeof s.completionTime === "string" && (!completion || s.completionTime > completion)) completion = s.completionTime;
  }
  for (const f of ["active", "succeeded", "failed", "startTime", "completionTime", "conditions"]) delete next[f];
  if (active) next.active = active;
  if (succeeded) next.succeeded = succeeded;
  if (failed) next.failed = failed;
  if (start) next.startTime = start;
  const at = rfc3339(now);
  failedClusters = failedClusters.sort();
  if (failedClusters.length) {
    next.conditions = [{ type: "Failed", status: "True", lastProbeTime: at, lastTransitionTime: at, reason: "JobFailed", message: `Job executed failed in member cluster(s) ${failedClusters.join(",")}` }];
  } else if (items.length > 0 && completed === items.length) {
    next.conditions = [{ type: "Complete", status: "True", lastProbeTime: at, lastTransitionTime: at, reason: "Completed", message: "Job completed" }];
    if (completion) next.completionTime = completion;
  } else if (Array.isArray(old.conditions) && old.conditions.length) {
    next.conditions = old.conditions;
  }
  return next;
}

const SUMMED: Record<string, readonly string[]> = {
  "apps/Deployment": ["replicas", "readyReplicas", "updatedReplicas", "availableReplicas", "unavailableReplicas"],
  "apps/StatefulSet": ["replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"],
  "apps/ReplicaSet": ["replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
  "apps/DaemonSet": ["currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberMisscheduled", "numberReady", "updatedNumberScheduled", "numberUnavailable"],
};

/**
 * The template's status aggregated from the clusters (the AggregateStatus interpreter), or
 * undefined when the kind has none or the status would not change. Workloads sum their
 * counters and report the template's generation as observed; a LoadBalancer Service and an
 * Ingress collect ingress points; a Job sums its pods and completes when every cluster did.
 */
export function templateStatusUpdate(t: KubeObject, items: readonly AggregatedStatusItem[], now: Date): Obj | undefined {
  const gk = templateGroupKind(t);
  let next: Obj | undefined;
  const fields = SUMMED[gk];
  if (fields) next = sumStatus(t, items, fields);
  else if (gk === "/Service") next = isObj(t.spec) && t.spec.type === "LoadBalancer" ? loadBalancerStatus(items) : undefined;
  else if (gk === "networking.k8s.io/Ingress") next = loadBalancerStatus(items);
  else if (gk === "batch/Job") next = jobStatus(t, items, now);
  if (!next) return undefined;
  const clean = jsonClean(next);
  const old = isObj(t.status) ? t.status : {};
  if (gk === "batch/Job" && jsonEqual(stripTimes(clean), stripTimes(old))) return undefined;
  return jsonEqual(clean, old) ? undefined : clean;
}

/** A Job's rebuilt conditions carry fresh timestamps; compare without them. */
function stripTimes(s: Obj): Obj {
  if (!Array.isArray(s.conditions)) return s;
  return { ...s, conditions: s.conditions.map((c) => (isObj(c) ? { ...c, lastProbeTime: undefined, lastTransitionTime: undefined } : c)) };
}
