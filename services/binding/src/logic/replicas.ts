import type { KubeObject, ReplicaRequirements } from "@flotilla/api";
import { formatBinary, formatDecimal, formatMilliDecimal, parseQuantity, quantityMilliValue, quantityValue } from "./quantity.js";

/** What the resource interpreter's GetReplicas gives for a template. */
export interface ReplicaInfo {
  replicas: number;
  requirements?: ReplicaRequirements;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/**
 * The kinds with an InterpretReplica / ReviseReplica hook and the field that holds the count.
 * Upstream's default interpreter covers Deployment, StatefulSet and Job; ReplicaSet is added
 * here (same shape as a Deployment).
 */
const REPLICA_FIELD: Record<string, "replicas" | "parallelism"> = {
  "apps/Deployment": "replicas",
  "apps/StatefulSet": "replicas",
  "apps/ReplicaSet": "replicas",
  "batch/Job": "parallelism",
};

function groupOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf("/");
  return i < 0 ? "" : apiVersion.slice(0, i);
}

export function templateGroupKind(t: Pick<KubeObject, "apiVersion" | "kind">): string {
  return `${groupOf(t.apiVersion)}/${t.kind}`;
}

/** The spec field the ReviseReplica hook writes (`replicas`, `parallelism` for a Job), or undefined. */
export function replicaField(t: Pick<KubeObject, "apiVersion" | "kind">): "replicas" | "parallelism" | undefined {
  return REPLICA_FIELD[templateGroupKind(t)];
}

/**
 * GetReplicas: the replica count and per-replica requirements of a workload template, or
 * undefined for kinds without the hook (ConfigMaps, Services, ...: replicas stay 0).
 * Absent counts take the API server's default of 1, as the template upstream reads is defaulted.
 * A Job runs min(parallelism, completions) pods at once.
 */
export function interpretReplicas(t: KubeObject): ReplicaInfo | undefined {
  const field = replicaField(t);
  if (!field) return undefined;
  const spec: Obj = isObj(t.spec) ? t.spec : {};
  let replicas = num(spec[field]) ?? 1;
  if (field === "parallelism") {
    const completions = num(spec.completions) ?? replicas;
    if (replicas > completions) replicas = completions;
  }
  const podTemplate = isObj(spec.template) ? spec.template : {};
  return { replicas: Math.max(0, Math.trunc(replicas)), requirements: replicaRequirements(podTemplate) };
}

interface Sums {
  milliCpu: bigint;
  memory: bigint;
  ephemeral: bigint;
  pods: bigint;
  scalar: Map<string, bigint>;
}

function emptySums(): Sums {
  return { milliCpu: 0n, memory: 0n, ephemeral: 0n, pods: 0n, scalar: new Map() };
}

/** The effective requests of one container: limits stand in for requests they lack (API defaulting). */
function containerRequests(c: unknown): Obj {
  if (!isObj(c) || !isObj(c.resources)) return {};
  const requests: Obj = isObj(c.resources.requests) ? { ...c.resources.requests } : {};
  if (isObj(c.resources.limits)) for (const [k, v] of Object.entries(c.resources.limits)) if (!(k in requests)) requests[k] = v;
  return requests;
}

function amounts(list: Obj): Sums {
  const s = emptySums();
  for (const [name, raw] of Object.entries(list)) {
    const q = parseQuantity(raw);
    if (!q) continue;
    switch (name) {
      case "cpu":
        s.milliCpu += quantityMilliValue(q);
        break;
      case "memory":
        s.memory += quantityValue(q);
        break;
      case "ephemeral-storage":
        s.ephemeral += quantityValue(q);
        break;
      case "pods":
        s.pods += quantityValue(q);
        break;
      default:
        s.scalar.set(name, (s.scalar.get(name) ?? 0n) + quantityValue(q));
    }
  }
  return s;
}

function add(a: Sums, b: Sums): void {
  a.milliCpu += b.milliCpu;
  a.memory += b.memory;
  a.ephemeral += b.ephemeral;
  a.pods += b.pods;
  for (const [k, v] of b.scalar) a.scalar.set(k, (a.scalar.get(k) ?? 0n) + v);
}

function max(a: Sums, b: Sums): void {
  const m = (x: bigint, y: bigint) => (x > y ? x : y);
  a.milliCpu = m(a.milliCpu, b.milliCpu);
  a.memory = m(a.memory, b.memory);
  a.ephemeral = m(a.ephemeral, b.ephemeral);
  a.pods = m(a.pods, b.pods);
  for (const [k, v] of b.scalar) a.scalar.set(k, m(a.scalar.get(k) ?? 0n, v));
}

/**
 * `util.EmptyResource().AddPodTemplateRequest(podSpec).ResourceList()`: containers summed, each
 * init container's requests taken as a floor, plus the pod overhead; only positive amounts,
 * undefined when nothing is requested.
 */
export function podRequests(podSpec: Obj): Record<string, string> | undefined {
  const total = emptySums();
  for (const c of Array.isArray(podSpec.containers) ? podSpec.containers : []) add(total, amounts(containerRequests(c)));
  for (const c of Array.isArray(podSpec.initContainers) ? podSpec.initContainers : []) max(total, amounts(containerRequests(c)));
  if (isObj(podSpec.overhead)) add(total, amounts(podSpec.overhead));
  const out: Record<string, string> = {};
  if (total.milliCpu > 0n) out.cpu = formatMilliDecimal(total.milliCpu);
  if (total.memory > 0n) out.memory = formatBinary(total.memory);
  if (total.ephemeral > 0n) out["ephemeral-storage"] = formatBinary(total.ephemeral);
  if (total.pods > 0n) out.pods = formatDecimal(total.pods);
  for (const [k, v] of [...total.scalar].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (v > 0n) out[k] = k.startsWith("hugepages-") ? formatBinary(v) : formatDecimal(v);
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * `helper.GenerateReplicaRequirements(podTemplate)`: the node claim (nodeSelector, tolerations,
 * required node affinity) and the resource request of one replica; undefined when both are empty.
 */
export function replicaRequirements(podTemplate: Obj): ReplicaRequirements | undefined {
  const podSpec: Obj = isObj(podTemplate.spec) ? podTemplate.spec : {};
  const nodeClaim: NonNullable<ReplicaRequirements["nodeClaim"]> = {};
  if (isObj(podSpec.nodeSelector)) nodeClaim.nodeSelector = podSpec.nodeSelector as Record<string, string>;
  if (Array.isArray(podSpec.tolerations) && podSpec.tolerations.length > 0) nodeClaim.tolerations = podSpec.tolerations as NonNullable<typeof nodeClaim.tolerations>;
  const required = isObj(podSpec.affinity) && isObj(podSpec.affinity.nodeAffinity) ? podSpec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution : undefined;
  if (isObj(required)) nodeClaim.hardNodeAffinity = required as NonNullable<typeof nodeClaim.hardNodeAffinity>;
  const resourceRequest = podRequests(podSpec);
  const hasClaim = nodeClaim.nodeSelector !== undefined || nodeClaim.hardNodeAffinity !== undefined || nodeClaim.tolerations !== undefined;
  if (!hasClaim && !resourceRequest) return undefined;
  const out: ReplicaRequirements = {};
  if (hasClaim) out.nodeClaim = nodeClaim;
  if (resourceRequest) out.resourceRequest = resourceRequest;
  return out;
}
