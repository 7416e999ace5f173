import {
  InvalidError,
  fieldInvalid,
  formatBinarySI,
  formatDecimal,
  formatMilliDecimal,
  parseApiVersion,
  quantityMilliValueBig,
  quantityValueBig,
  tryParseQuantity,
  type FieldError,
  type KubeObject,
  type Quantity,
  type ReplicaRequirements,
} from "@flotilla/api";

/** What the resource interpreter's GetReplicas gives for a template. */
export interface ReplicaInfo {
  replicas: number;
  requirements?: ReplicaRequirements;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const MAX_INT32 = 2147483647;

/** JSON's name for a value's type, for messages. */
function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** An optional object field: undefined when unset, an error when it is something else. */
function object(v: unknown, path: string, errs: FieldError[]): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (isObj(v)) return v;
  errs.push(fieldInvalid(path, v, `must be an object, not ${typeName(v)}`));
  return undefined;
}

/** An optional list field: [] when unset, an error when it is something else. */
function list(v: unknown, path: string, errs: FieldError[]): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  errs.push(fieldInvalid(path, v, `must be a list, not ${typeName(v)}`));
  return [];
}

/** An optional count (replicas, parallelism, completions): a non-negative int32, or undefined when unset. */
export function readCount(v: unknown, path: string, errs: FieldError[]): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) errs.push(fieldInvalid(path, v, `must be an integer, not ${typeName(v)}`));
  else if (v < 0) errs.push(fieldInvalid(path, v, "must be greater than or equal to 0"));
  else if (v > MAX_INT32) errs.push(fieldInvalid(path, v, "must be a 32-bit integer"));
  else return v;
  return undefined;
}

/** A resource quantity ("100m", "128Mi", 2): its exact value, or undefined with an error naming the field. */
export function readQuantity(v: unknown, path: string, errs: FieldError[]): Quantity | undefined {
  if (typeof v !== "string" && typeof v !== "number") {
    errs.push(fieldInvalid(path, v, `must be a quantity (a string such as "100m" or "128Mi", or a number), not ${typeName(v)}`));
    return undefined;
  }
  const q = tryParseQuantity(v);
  if (!q) errs.push(fieldInvalid(path, v, "must be a quantity such as \"100m\" or \"128Mi\""));
  else if (q.num < 0n) errs.push(fieldInvalid(path, v, "must be greater than or equal to 0"));
  else return q;
  return undefined;
}

/** The InvalidError of a template whose fields cannot be read. */
export function invalidTemplate(t: Pick<KubeObject, "apiVersion" | "kind" | "metadata">, errs: FieldError[]): InvalidError {
  const name = typeof t.metadata?.name === "string" ? t.metadata.name : undefined;
  return new InvalidError({ group: parseApiVersion(typeof t.apiVersion === "string" ? t.apiVersion : "").group, kind: String(t.kind), name }, errs);
}

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
 * Throws an InvalidError naming every field it reads that is not what Kubernetes allows there
 * (a count that is no non-negative integer, a request that is no quantity, …): the template was
 * stored without the gateway's checks, and guessing would place the workload wrongly. The node
 * claim (tolerations, affinity) is copied as it is: `storedTemplateErrors` checks it first.
 */
export function interpretReplicas(t: KubeObject): ReplicaInfo | undefined {
  const field = replicaField(t);
  if (!field) return undefined;
  const errs: FieldError[] = [];
  const spec = object(t.spec, "spec", errs) ?? {};
  let replicas = readCount(spec[field], `spec.${field}`, errs) ?? 1;
  if (field === "parallelism") {
    const completions = readCount(spec.completions, "spec.completions", errs) ?? replicas;
    if (replicas > completions) replicas = completions;
  }
  const podTemplate = object(spec.template, "spec.template", errs) ?? {};
  const requirements = replicaRequirements(podTemplate, "spec.template", errs);
  if (errs.length) throw invalidTemplate(t, errs);
  return { replicas, requirements };
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

/** One resource amount as written, with the field it came from. */
type Amount = [name: string, raw: unknown, path: string];

/** The entries of a ResourceList (`requests`, `limits`, `overhead`). */
function resourceList(v: unknown, path: string, errs: FieldError[]): Amount[] {
  return Object.entries(object(v, path, errs) ?? {}).map(([k, raw]): Amount => [k, raw, `${path}[${k}]`]);
}

/** The effective requests of one container: limits stand in for requests they lack (API defaulting). */
function containerRequests(c: unknown, path: string, errs: FieldError[]): Amount[] {
  if (c === null || !isObj(c)) {
    errs.push(fieldInvalid(path, c, `must be an object, not ${typeName(c)}`));
    return [];
  }
  const resources = object(c.resources, `${path}.resources`, errs);
  if (!resources) return [];
  const requests = resourceList(resources.requests, `${path}.resources.requests`, errs);
  const named = new Set(requests.map(([k]) => k));
  return [...requests, ...resourceList(resources.limits, `${path}.resources.limits`, errs).filter(([k]) => !named.has(k))];
}

function amounts(list: readonly Amount[], errs: FieldError[]): Sums {
  const s = emptySums();
  for (const [name, raw, path] of list) {
    const q = readQuantity(raw, path, errs);
    if (!q) continue;
    switch (name) {
      case "cpu":
        s.milliCpu += quantityMilliValueBig(q);
        break;
      case "memory":
        s.memory += quantityValueBig(q);
        break;
      case "ephemeral-storage":
        s.ephemeral += quantityValueBig(q);
        break;
      case "pods":
        s.pods += quantityValueBig(q);
        break;
      default:
        s.scalar.set(name, (s.scalar.get(name) ?? 0n) + quantityValueBig(q));
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
 * undefined when nothing is requested. Fields that cannot be read go to `errs` (at `path`).
 */
export function podRequests(podSpec: Obj, path: string, errs: FieldError[]): Record<string, string> | undefined {
  const total = emptySums();
  list(podSpec.containers, `${path}.containers`, errs).forEach((c, i) => add(total, amounts(containerRequests(c, `${path}.containers[${i}]`, errs), errs)));
  list(podSpec.initContainers, `${path}.initContainers`, errs).forEach((c, i) => max(total, amounts(containerRequests(c, `${path}.initContainers[${i}]`, errs), errs)));
  add(total, amounts(resourceList(podSpec.overhead, `${path}.overhead`, errs), errs));
  const out: Record<string, string> = {};
  if (total.milliCpu > 0n) out.cpu = formatMilliDecimal(total.milliCpu);
  if (total.memory > 0n) out.memory = formatBinarySI(total.memory);
  if (total.ephemeral > 0n) out["ephemeral-storage"] = formatBinarySI(total.ephemeral);
  if (total.pods > 0n) out.pods = formatDecimal(total.pods);
  for (const [k, v] of [...total.scalar].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (v > 0n) out[k] = k.startsWith("hugepages-") ? formatBinarySI(v) : formatDecimal(v);
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * `helper.GenerateReplicaRequirements(podTemplate)`: the node claim (nodeSelector, tolerations,
 * required node affinity) and the resource request of one replica; undefined when both are empty.
 * Fields that cannot be read go to `errs` (at `path`).
 */
export function replicaRequirements(podTemplate: Obj, path: string, errs: FieldError[]): ReplicaRequirements | undefined {
  const podSpec = object(podTemplate.spec, `${path}.spec`, errs) ?? {};
  const nodeClaim: NonNullable<ReplicaRequirements["nodeClaim"]> = {};
  const nodeSelector = object(podSpec.nodeSelector, `${path}.spec.nodeSelector`, errs);
  for (const [k, v] of Object.entries(nodeSelector ?? {})) if (typeof v !== "string") errs.push(fieldInvalid(`${path}.spec.nodeSelector[${k}]`, v, `must be a string, not ${typeName(v)}`));
  if (nodeSelector) nodeClaim.nodeSelector = nodeSelector as Record<string, string>;
  if (Array.isArray(podSpec.tolerations) && podSpec.tolerations.length > 0) nodeClaim.tolerations = podSpec.tolerations as NonNullable<typeof nodeClaim.tolerations>;
  const required = isObj(podSpec.affinity) && isObj(podSpec.affinity.nodeAffinity) ? podSpec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution : undefined;
  if (isObj(required)) nodeClaim.hardNodeAffinity = required as NonNullable<typeof nodeClaim.hardNodeAffinity>;
  const resourceRequest = podRequests(podSpec, `${path}.spec`, errs);
  const hasClaim = nodeClaim.nodeSelector !== undefined || nodeClaim.hardNodeAffinity !== undefined || nodeClaim.tolerations !== undefined;
  if (!hasClaim && !resourceRequest) return undefined;
  const out: ReplicaRequirements = {};
  if (hasClaim) out.nodeClaim = nodeClaim;
  if (resourceRequest) out.resourceRequest = resourceRequest;
  return out;
}
