import {
  BadRequestError,
  InvalidError,
  PurgeModeGracefully,
  TaintClusterNotReady,
  TaintClusterUnreachable,
  fieldDuplicate,
  fieldInvalid,
  fieldNotFound,
  fieldRequired,
  gracefulEvictCluster,
  purgeModeFor,
  rfc3339,
  type AnyResourceBinding,
  type Cluster,
  type Condition,
  type FieldError,
  type PurgeMode,
  type Taint,
} from "@flotilla/api";
import {
  clusterFacts,
  compileRequest,
  evictionDecision,
  hasReplicas,
  isDeleting,
  isResponsibleFor,
  needsSchedule,
  schedule,
  type AssumedLoad,
  type ScheduleResult,
} from "@flotilla/scheduling";
import { SIMULATION_API_VERSION, SIMULATION_GROUP } from "./simulation.js";

export const FAILURE_SIMULATION_KIND = "FailureSimulation";

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A validated FailureSimulation request: the clusters to fail, by name. */
export interface FailureSimulation {
  /** The object as posted (echoed back with `status`). */
  request: Json;
  clusters: string[];
}

/** A cluster and its replicas, as in `spec.clusters`. */
export interface Placed {
  name: string;
  replicas: number;
}

/**
 * What would happen to one binding:
 * - `Rescheduled`: evicted from the failed clusters it does not tolerate, and placed again (`clusters`);
 * - `NoClusterFit`: evicted, but no cluster fits: the scheduler clears its placement and the
 *   graceful-eviction task keeps the copy where it runs (`message` is the FitError);
 * - `Unschedulable`: evicted, but the survivors lack the room: the scheduler keeps the remaining
 *   placement, the evicted replicas are not replaced (`message` says why);
 * - `SchedulerError`: scheduling failed otherwise (`message`);
 * - `NotRescheduled`: evicted, and the scheduler would not place it again (another scheduler's,
 *   scheduling suspended, or no trigger fires; `message` says which);
 * - `Tolerated`: it tolerates every failed cluster's NoExecute taints without a time limit, and stays.
 */
export type FailureOutcome = "Rescheduled" | "NoClusterFit" | "Unschedulable" | "SchedulerError" | "NotRescheduled" | "Tolerated";

export interface BindingEviction {
  cluster: string;
  /** The binding's replicas there. */
  replicas: number;
  /** Evicted only once its toleration runs out, this many seconds after the taint (absent: at once). */
  afterSeconds?: number;
  /** The taint that evicts it. */
  taint: string;
  /** The graceful-eviction task's purge mode (the binding's failover.cluster.purgeMode, else Gracefully). */
  purgeMode: PurgeMode;
}

export interface BindingOutcome {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  result: FailureOutcome;
  /** The binding's placement now. */
  before: Placed[];
  /** Its placement after the failure: the scheduler's answer (empty on NoClusterFit, as it would write). */
  after: Placed[];
  /** The failed clusters it would be evicted from. */
  evictions: BindingEviction[];
  /** The failed clusters it tolerates without a time limit (it stays there). */
  tolerated: string[];
  message: string;
}

export interface ResourcesLeft {
  pods: number;
  cpu?: string;
  memory?: string;
}

export interface CapacityLeft {
  name: string;
  failed: boolean;
  /** Replicas the moves would add here. */
  receives: number;
  /** What the cluster's resourceSummary leaves (less the load assigned and not yet reported), now. */
  before: ResourcesLeft;
  /** The same after the moves (absent for a failed cluster). */
  after?: ResourcesLeft;
}

export interface FailureSimulationStatus {
  failedClusters: string[];
  bindings: BindingOutcome[];
  capacity: CapacityLeft[];
  /** When the taints are taken to be added. */
  time: string;
}

/**
 * Checks a FailureSimulation request. `known` are the names of the current clusters: an unknown
 * one is refused, naming `spec.clusters[i]`, as are duplicates and an empty list. Throws
 * BadRequestError for a body that is not an object, one InvalidError listing every bad field otherwise.
 */
export function parseFailureSimulation(body: unknown, known: ReadonlySet<string>): FailureSimulation {
  if (!isObj(body)) throw new BadRequestError("the request body must be a FailureSimulation object", [{ field: "", reason: "FieldValueTypeInvalid", message: "expected an object" }]);
  const name = isObj(body.metadata) && typeof body.metadata.name === "string" ? body.metadata.name : undefined;
  const errs: FieldError[] = [];
  if (body.apiVersion === undefined || body.apiVersion === "") errs.push(fieldRequired("apiVersion", `must be "${SIMULATION_API_VERSION}"`));
  else if (body.apiVersion !== SIMULATION_API_VERSION) errs.push(fieldInvalid("apiVersion", body.apiVersion, `must be "${SIMULATION_API_VERSION}"`));
  if (body.kind === undefined || body.kind === "") errs.push(fieldRequired("kind", `must be "${FAILURE_SIMULATION_KIND}"`));
  else if (body.kind !== FAILURE_SIMULATION_KIND) errs.push(fieldInvalid("kind", body.kind, `must be "${FAILURE_SIMULATION_KIND}"`));
  if (body.metadata !== undefined && !isObj(body.metadata)) errs.push(fieldInvalid("metadata", body.metadata, "must be an object"));
  for (const k of Object.keys(body)) {
    if (!["apiVersion", "kind", "metadata", "spec", "status"].includes(k)) errs.push({ field: k, reason: "FieldValueUnknown", message: `unknown field "${k}"` });
  }
  const clusters: string[] = [];
  const spec = body.spec;
  if (spec === undefined || spec === null) errs.push(fieldRequired("spec"));
  else if (!isObj(spec)) errs.push(fieldInvalid("spec", spec, "must be an object"));
  else {
    for (const k of Object.keys(spec)) if (k !== "clusters") errs.push({ field: `spec.${k}`, reason: "FieldValueUnknown", message: `unknown field "${k}"` });
    const list = spec.clusters;
    if (list === undefined || list === null) errs.push(fieldRequired("spec.clusters", "the names of the clusters to fail"));
    else if (!Array.isArray(list)) errs.push(fieldInvalid("spec.clusters", list, "must be a list of cluster names"));
    else if (list.length === 0) errs.push(fieldRequired("spec.clusters", "at least one cluster to fail"));
    else {
      list.forEach((c: unknown, i: number) => {
        const p = `spec.clusters[${i}]`;
        if (typeof c !== "string" || c === "") return void errs.push(fieldInvalid(p, c, "must be a cluster name"));
        if (clusters.includes(c)) return void errs.push(fieldDuplicate(p, c));
        if (!known.has(c)) return void errs.push(fieldNotFound(p, c, "no such cluster"));
        clusters.push(c);
      });
    }
  }
  if (errs.length) throw new InvalidError({ group: SIMULATION_GROUP, kind: FAILURE_SIMULATION_KIND, name }, errs);
  return { request: body, clusters };
}

const sameTaint = (a: Taint, b: Taint) => (a.key ?? "") === (b.key ?? "") && (a.effect ?? "") === (b.effect ?? "");

/**
 * The cluster as the cluster controller leaves an unreachable member once the failover-eviction
 * timeout has passed: Ready Unknown, `cluster.karmada.io/unreachable` NoSchedule and NoExecute
 * (added at `now`; ones it already has keep their timeAdded), the not-ready ones gone, every other
 * taint kept. A new object: the snapshot's is not touched.
 */
export function failedCluster(c: Cluster, now: Date): Cluster {
  const at = rfc3339(now);
  const wanted: Taint[] = [
    { key: TaintClusterUnreachable, effect: "NoSchedule" },
    { key: TaintClusterUnreachable, effect: "NoExecute" },
  ];
  const dropped: Taint[] = [
    { key: TaintClusterNotReady, effect: "NoSchedule" },
    { key: TaintClusterNotReady, effect: "NoExecute" },
  ];
  const kept = (c.spec?.taints ?? []).filter((t) => !dropped.some((d) => sameTaint(d, t)));
  const taints = [...kept, ...wanted.filter((w) => !kept.some((t) => sameTaint(t, w))).map((w) => ({ ...w, timeAdded: at }))];
  const ready: Condition = { type: "Ready", status: "Unknown", reason: "ClusterStatusUnknown", message: "Cluster status controller stopped posting cluster status (simulated failure).", lastTransitionTime: at };
  const conditions = [...(c.status?.conditions ?? []).filter((x) => x.type !== "Ready"), ready];
  return { ...c, spec: { ...c.spec, taints }, status: { ...c.status, conditions } };
}

export interface FailureInput {
  failed: readonly string[];
  /** The current clusters. */
  clusters: readonly Cluster[];
  /** Every ResourceBinding and ClusterResourceBinding. */
  bindings: readonly AnyResourceBinding[];
  /** The load assigned and not yet reported per cluster (the scheduler's assumed ledger), if any. */
  assumed?: ReadonlyMap<string, AssumedLoad>;
  /** The scheduler's plugin selection. */
  plugins?: string;
  schedulerName?: string;
  now: Date;
}

const placedOf = (b: AnyResourceBinding): Placed[] => (b.spec?.clusters ?? []).map((t) => ({ name: t.name ?? "", replicas: t.replicas ?? 0 }));
const refOf = (b: AnyResourceBinding) => `${b.kind === "ClusterResourceBinding" ? "" : (b.metadata.namespace ?? "")}/${b.metadata.name ?? ""}`;

interface Candidate {
  binding: AnyResourceBinding;
  evictions: BindingEviction[];
  tolerated: string[];
  /** When it would be evicted, ms after the failure (the latest of its evictions). */
  dueMs: number;
}

function addLoad(loads: Map<string, { pods: number; resources: Record<string, number> }>, cluster: string, replicas: number, request: ReturnType<typeof compileRequest>): void {
  let l = loads.get(cluster);
  if (!l) loads.set(cluster, (l = { pods: 0, resources: {} }));
  l.pods += replicas;
  for (const r of request) l.resources[r.key] = (l.resources[r.key] ?? 0) + replicas * r.amount;
}

function formatCpu(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

function formatBytes(n: number): string {
  for (const [suffix, f] of [["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]] as const) if (n !== 0 && n % f === 0) return `${n / f}${suffix}`;
  return String(n);
}

function left(c: Cluster, load: AssumedLoad | undefined): ResourcesLeft {
  const f = clusterFacts(c);
  const out: ResourcesLeft = { pods: Math.max(0, f.allowedPods - (load?.pods ?? 0)) };
  const cpu = f.free("cpu");
  if (cpu >= 0) out.cpu = formatCpu(Math.max(0, cpu - (load?.resources.cpu ?? 0)));
  const mem = f.free("memory");
  if (mem >= 0) out.memory = formatBytes(Math.max(0, mem - (load?.resources.memory ?? 0)));
  return out;
}

function outcomeOf(result: ScheduleResult, kept: Placed[]): { result: FailureOutcome; after: Placed[]; message: string } {
  const after = result.clusters.map((t) => ({ name: t.name ?? "", replicas: t.replicas ?? 0 }));
  switch (result.error?.kind) {
    case undefined:
      return { result: "Rescheduled", after, message: result.condition.message };
    case "FitError":
      return { result: "NoClusterFit", after, message: `no cluster fits, so it keeps running where it is until one does: ${result.condition.message}` };
    case "Unschedulable":
      return { result: "Unschedulable", after: result.patchClusters ? after : kept, message: `the evicted replicas are not placed elsewhere: ${result.condition.message}` };
    default:
      return { result: "SchedulerError", after: result.patchClusters ? after : kept, message: result.condition.message };
  }
}

/**
 * Blast radius of failing `failed`, computed as the control plane would act, writing nothing:
 * 1. each failed cluster gets the taints of an unreachable member (`failedCluster`);
 * 2. each binding placed on one is judged as the taint manager judges it (`evictionDecision`):
 *    tolerated without a limit → it stays; otherwise it is evicted (at once, or after its
 *    tolerationSeconds) into a graceful-eviction task with the purge mode the taint manager uses
 *    (graceful eviction on, NO_EXECUTE_TAINT_EVICTION_PURGE_MODE at its default Gracefully);
 * 3. the evicted bindings are scheduled again with `schedule()` against the changed fleet, in a
 *    fixed order (eviction time, then ClusterResourceBindings before ResourceBindings, then
 *    namespace/name), each one's added replicas counted as assumed load against the next
 *    (capacity comes from the clusters' resourceSummary and that load; no member estimator is asked);
 * 4. the capacity left per cluster is what the summaries leave less the current assumed load and the moves.
 * Deleting bindings are left out (they are going).
 */
export function simulateFailure(i: FailureInput): FailureSimulationStatus {
  const failed = new Set(i.failed);
  const now = i.now.getTime();
  const clusters = i.clusters.map((c) => (failed.has(c.metadata.name ?? "") ? failedCluster(c, i.now) : c));
  const byName = new Map(clusters.map((c) => [c.metadata.name ?? "", c]));

  const candidates: Candidate[] = [];
  for (const b of i.bindings) {
    if (isDeleting(b)) continue;
    const on = (b.spec?.clusters ?? []).filter((t) => failed.has(t.name ?? ""));
    if (on.length === 0) continue;
    const c: Candidate = { binding: b, evictions: [], tolerated: [], dueMs: 0 };
    const purgeMode = purgeModeFor(b.spec ?? {}, PurgeModeGracefully);
    for (const t of on) {
      const name = t.name ?? "";
      const dec = evictionDecision(byName.get(name)?.spec?.taints, b.spec?.placement?.clusterTolerations, now);
      if (dec.kind === "never" || dec.kind === "none") {
        c.tolerated.push(name);
        continue;
      }
      const taint = dec.taint.value ? `${dec.taint.key}=${dec.taint.value}:${dec.taint.effect}` : `${dec.taint.key}:${dec.taint.effect}`;
      const e: BindingEviction = { cluster: name, replicas: t.replicas ?? 0, taint, purgeMode };
      if (dec.kind === "wait") {
        e.afterSeconds = Math.ceil((dec.at - now) / 1000);
        c.dueMs = Math.max(c.dueMs, dec.at - now);
      }
      c.evictions.push(e);
    }
    candidates.push(c);
  }
  const kindRank = (b: AnyResourceBinding) => (b.kind === "ClusterResourceBinding" ? 0 : 1);
  candidates.sort((a, b) => {
    if (a.dueMs !== b.dueMs) return a.dueMs - b.dueMs;
    const k = kindRank(a.binding) - kindRank(b.binding);
    if (k) return k;
    const x = refOf(a.binding);
    const y = refOf(b.binding);
    return x < y ? -1 : x > y ? 1 : 0;
  });

  // the assumed load: what the scheduler's ledger holds now, plus each move in turn
  const loads = new Map<string, { pods: number; resources: Record<string, number> }>();
  for (const [name, l] of i.assumed ?? []) loads.set(name, { pods: l.pods, resources: { ...l.resources } });
  const before = new Map(clusters.map((c) => [c.metadata.name ?? "", left(c, loads.get(c.metadata.name ?? ""))]));
  const receives = new Map<string, number>();

  const outcomes: BindingOutcome[] = [];
  for (const c of candidates) {
    const b = c.binding;
    const out: BindingOutcome = {
      apiVersion: b.apiVersion ?? "work.karmada.io/v1alpha2",
      kind: b.kind ?? "ResourceBinding",
      ...(b.kind !== "ClusterResourceBinding" && b.metadata.namespace ? { namespace: b.metadata.namespace } : {}),
      name: b.metadata.name ?? "",
      result: "Tolerated",
      before: placedOf(b),
      after: placedOf(b),
      evictions: c.evictions,
      tolerated: c.tolerated,
      message: "",
    };
    outcomes.push(out);
    if (c.evictions.length === 0) {
      out.message = `tolerates the NoExecute taints of ${c.tolerated.join(", ")} without a time limit: stays`;
      continue;
    }
    const evicted = structuredClone(b);
    evicted.spec ??= {};
    for (const e of c.evictions) gracefulEvictCluster(evicted.spec, e.cluster, { purgeMode: e.purgeMode, message: `taint {${e.taint}} is not tolerated`, creationTimestamp: rfc3339(i.now) });
    const kept = placedOf(evicted);
    if (!isResponsibleFor(evicted, i.schedulerName)) {
      Object.assign(out, { result: "NotRescheduled", after: kept, message: "evicted; this scheduler does not place it again (another scheduler's, scheduling suspended, or not a policy's binding)" });
      continue;
    }
    const trigger = needsSchedule(evicted, clusters);
    if (!trigger.schedule) {
      Object.assign(out, { result: "NotRescheduled", after: kept, message: `evicted; the scheduler would not place it again${"error" in trigger && trigger.error ? `: ${trigger.error}` : " (no scheduling trigger fires)"}` });
      continue;
    }
    const result = schedule({ binding: evicted, clusters, assumed: loads, enabled: i.plugins });
    Object.assign(out, outcomeOf(result, kept));
    if (out.result !== "Rescheduled" || !hasReplicas(evicted.spec)) continue;
    const request = compileRequest(evicted.spec.replicaRequirements?.resourceRequest);
    const had = new Map(kept.map((p) => [p.name, p.replicas]));
    for (const p of out.after) {
      const added = p.replicas - (had.get(p.name) ?? 0);
      if (added <= 0) continue;
      addLoad(loads, p.name, added, request);
      receives.set(p.name, (receives.get(p.name) ?? 0) + added);
    }
  }

  const capacity: CapacityLeft[] = clusters
    .filter((c) => !isDeleting(c))
    .map((c) => {
      const name = c.metadata.name ?? "";
      const isFailed = failed.has(name);
      return {
        name,
        failed: isFailed,
        receives: receives.get(name) ?? 0,
        before: before.get(name)!,
        ...(isFailed ? {} : { after: left(c, loads.get(name)) }),
      };
    });
  return { failedClusters: [...i.failed], bindings: outcomes, capacity, time: rfc3339(i.now) };
}

/** The request echoed back with its status. */
export function failureSimulationResponse(sim: FailureSimulation, status: FailureSimulationStatus): Json {
  return { ...sim.request, status };
}
