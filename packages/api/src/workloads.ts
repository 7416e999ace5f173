/**
 * Workload templates (Deployment, StatefulSet, ReplicaSet, DaemonSet, Job, CronJob, Pod): the
 * fields Flotilla reads from them, checked at the door so that a bad value is a 422 naming the
 * field instead of an object every controller fails on later. The binding service's replica
 * interpreter reads the counts (`replicas`, a Job's `parallelism` and `completions`), each
 * container's resource requests and limits and the pod overhead (Kubernetes quantities), and
 * copies the node claim (`nodeSelector`, `tolerations`, required node affinity) into the typed
 * ResourceBinding; Work revisions read the selector and the pod template's labels.
 *
 * Everything else in a template stays opaque: Flotilla is not the member's API server, and the
 * member validates the rest when the Work is applied.
 */
import { LabelSelectorSchema, ObjectMetaSchema, TolerationSchema } from "@flotilla/proto";
import { jsonShapeErrors } from "./decode.js";
import type { FieldError } from "./errors.js";
import { parseQuantity, type Quantity } from "./quantity.js";
import { parseApiVersion } from "./resources.js";
import { fieldInvalid, validateLabelSelector } from "./validate.js";
import type { KubeObject } from "./types.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const child = (p: string, name: string) => (p ? `${p}.${name}` : name);
const MAX_INT32 = 2147483647;

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeInvalid(field: string, v: unknown, want: string): FieldError {
  return { field, reason: "FieldValueTypeInvalid", message: `Invalid value: ${JSON.stringify(v) ?? kindOf(v)}: must be of type ${want}, not ${kindOf(v)}` };
}

/** An optional object: undefined (with an error when it is something else) unless it is one. */
function object(v: unknown, path: string, errs: FieldError[]): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (isObj(v)) return v;
  errs.push(typeInvalid(path, v, "object"));
  return undefined;
}

/** An optional list: [] (with an error when it is something else) unless it is one. */
function list(v: unknown, path: string, errs: FieldError[]): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  errs.push(typeInvalid(path, v, "array"));
  return [];
}

/** An optional non-negative int32 count (replicas, parallelism, completions). */
function count(v: unknown, path: string, errs: FieldError[]): void {
  if (v === undefined || v === null) return;
  if (typeof v !== "number" || !Number.isInteger(v)) errs.push(typeInvalid(path, v, "integer"));
  else if (v < 0) errs.push(fieldInvalid(path, v, "must be greater than or equal to 0"));
  else if (v > MAX_INT32) errs.push(fieldInvalid(path, v, "must be a 32-bit integer"));
}

/** A Kubernetes quantity: a string or a number parseQuantity accepts, finite and not negative. */
export function quantityErrors(v: unknown, path: string): FieldError[] {
  if (typeof v !== "string" && typeof v !== "number") return [typeInvalid(path, v, "string or number (a quantity such as \"100m\" or \"128Mi\")")];
  let q: Quantity;
  try {
    q = parseQuantity(v);
  } catch (e) {
    return [fieldInvalid(path, v, (e as Error).message.replace(/: .*$/s, ""))];
  }
  if (!Number.isFinite(Number(q.num) / 10 ** q.scale)) return [fieldInvalid(path, v, "must be a finite quantity")];
  if (q.num < 0n) return [fieldInvalid(path, v, "must be greater than or equal to 0")];
  return [];
}

/** A ResourceList (`requests`, `limits`, `overhead`): a map of quantities. */
function resourceList(v: unknown, path: string, errs: FieldError[]): void {
  const rl = object(v, path, errs);
  for (const [k, q] of Object.entries(rl ?? {})) errs.push(...quantityErrors(q, `${path}[${k}]`));
}

function container(c: unknown, path: string, errs: FieldError[]): void {
  const o = object(c, path, errs);
  if (!o) {
    if (c === null) errs.push(typeInvalid(path, c, "object"));
    return;
  }
  const resources = object(o.resources, child(path, "resources"), errs);
  if (!resources) return;
  resourceList(resources.requests, child(child(path, "resources"), "requests"), errs);
  resourceList(resources.limits, child(child(path, "resources"), "limits"), errs);
}

function podSpec(v: unknown, path: string, errs: FieldError[]): void {
  const spec = object(v, path, errs);
  if (!spec) return;
  for (const f of ["containers", "initContainers", "ephemeralContainers"]) {
    list(spec[f], child(path, f), errs).forEach((c, i) => container(c, `${child(path, f)}[${i}]`, errs));
  }
  resourceList(spec.overhead, child(path, "overhead"), errs);
  const ns = object(spec.nodeSelector, child(path, "nodeSelector"), errs);
  for (const [k, s] of Object.entries(ns ?? {})) if (typeof s !== "string") errs.push(typeInvalid(`${child(path, "nodeSelector")}[${k}]`, s, "string"));
  list(spec.tolerations, child(path, "tolerations"), errs).forEach((t, i) => errs.push(...jsonShapeErrors(TolerationSchema, t, `${child(path, "tolerations")}[${i}]`)));
  const affinity = object(spec.affinity, child(path, "affinity"), errs);
  const nodeAffinity = object(affinity?.nodeAffinity, child(child(path, "affinity"), "nodeAffinity"), errs);
  object(nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, child(child(child(path, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"), errs);
}

function podTemplate(v: unknown, path: string, errs: FieldError[]): void {
  const t = object(v, path, errs);
  if (!t) return;
  if (t.metadata !== undefined && t.metadata !== null) errs.push(...jsonShapeErrors(ObjectMetaSchema, t.metadata, child(path, "metadata"), { unknownFields: "ignore" }));
  podSpec(t.spec, child(path, "spec"), errs);
}

function selector(v: unknown, path: string, errs: FieldError[]): void {
  if (v === undefined || v === null) return;
  const shape = jsonShapeErrors(LabelSelectorSchema, v, path);
  errs.push(...(shape.length ? shape : validateLabelSelector(v as Obj, path)));
}

function jobSpec(spec: Obj, path: string, errs: FieldError[]): void {
  count(spec.parallelism, child(path, "parallelism"), errs);
  count(spec.completions, child(path, "completions"), errs);
  selector(spec.selector, child(path, "selector"), errs);
  podTemplate(spec.template, child(path, "template"), errs);
}

/**
 * The problems of a workload template's fields that Flotilla reads (see the module comment);
 * [] for kinds that are not workloads. `path` prefixes the fields (a Work's manifest).
 */
export function workloadErrors(obj: Pick<KubeObject, "apiVersion" | "kind"> & { spec?: unknown }, path = ""): FieldError[] {
  if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string") return [];
  const errs: FieldError[] = [];
  const sp = child(path, "spec");
  const gk = `${parseApiVersion(obj.apiVersion).group}/${obj.kind}`;
  switch (gk) {
    case "apps/Deployment":
    case "apps/StatefulSet":
    case "apps/ReplicaSet":
    case "apps/DaemonSet": {
      const spec = object(obj.spec, sp, errs);
      if (!spec) break;
      if (gk !== "apps/DaemonSet") count(spec.replicas, child(sp, "replicas"), errs);
      selector(spec.selector, child(sp, "selector"), errs);
      podTemplate(spec.template, child(sp, "template"), errs);
      break;
    }
    case "batch/Job": {
      const spec = object(obj.spec, sp, errs);
      if (spec) jobSpec(spec, sp, errs);
      break;
    }
    case "batch/CronJob": {
      const spec = object(obj.spec, sp, errs);
      const jt = object(spec?.jobTemplate, child(sp, "jobTemplate"), errs);
      const js = object(jt?.spec, child(child(sp, "jobTemplate"), "spec"), errs);
      if (js) jobSpec(js, child(child(sp, "jobTemplate"), "spec"), errs);
      break;
    }
    case "/Pod":
      podSpec(obj.spec, sp, errs);
      break;
  }
  return errs;
}

/**
 * What a controller checks before it reads a stored template, since a template need not have
 * come through the gateway (written straight to the store, or stored before a check existed):
 * the JSON types of its metadata (labels and annotations map to strings, …) and the workload
 * fields of `workloadErrors`. The same rules as the gateway's admission, minus the value checks
 * (name formats, label syntax) that no controller depends on. [] when the template is readable.
 */
export function storedTemplateErrors(obj: Pick<KubeObject, "apiVersion" | "kind"> & { metadata?: unknown; spec?: unknown }): FieldError[] {
  const errs: FieldError[] = [];
  if (isObj(obj.metadata)) errs.push(...jsonShapeErrors(ObjectMetaSchema, obj.metadata, "metadata", { unknownFields: "ignore" }));
  else errs.push(typeInvalid("metadata", obj.metadata, "object"));
  errs.push(...workloadErrors(obj));
  return errs;
}
