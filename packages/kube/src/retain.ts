import { isDeepStrictEqual } from "node:util";
import { ManagedAnnotation, ManagedLabels, RetainReplicasLabel, type KubeObject } from "@flotilla/api";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function managedKeys(observed: KubeObject, annotation: string): Set<string> {
  const raw = observed.metadata.annotations?.[annotation];
  return new Set((raw ?? "").split(",").map((s) => s.trim()).filter(Boolean));
}

/**
 * Labels or annotations of an update: the member's own keys are kept, the desired keys win,
 * and keys Karmada put there before (listed in the observed managed-labels/-annotations) but
 * left out now are dropped (util.RetainLabels / RetainAnnotations).
 */
function retainMap(desired: Record<string, string> | undefined, observed: Record<string, string> | undefined, managed: Set<string>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(observed ?? {})) if (!managed.has(k)) out[k] = v;
  Object.assign(out, desired ?? {});
  return Object.keys(out).length ? out : undefined;
}

function getPath(o: unknown, path: string[]): unknown {
  let cur = o;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

function setPath(o: Obj, path: string[], v: unknown): void {
  let cur: Obj = o;
  for (const p of path.slice(0, -1)) {
    if (!isObj(cur[p])) cur[p] = {};
    cur = cur[p] as Obj;
  }
  cur[path[path.length - 1]!] = v;
}

/** Keeps the member's value at `path` when the desired object leaves it empty. */
function keepIfUnset(desired: Obj, observed: Obj, path: string[]): void {
  const ov = getPath(observed, path);
  const dv = getPath(desired, path);
  if (ov !== undefined && (dv === undefined || dv === "" || dv === null)) setPath(desired, path, structuredClone(ov));
}

/** The default interpreter's Retain hook: fields member-side controllers own, per kind. */
function retainKindFields(desired: Obj, observed: Obj, kind: string): void {
  switch (kind) {
    case "Pod":
      keepIfUnset(desired, observed, ["spec", "nodeName"]);
      keepIfUnset(desired, observed, ["spec", "serviceAccountName"]);
      break;
    case "Service": {
      keepIfUnset(desired, observed, ["spec", "clusterIP"]);
      keepIfUnset(desired, observed, ["spec", "clusterIPs"]);
      keepIfUnset(desired, observed, ["spec", "healthCheckNodePort"]);
      const dPorts = getPath(desired, ["spec", "ports"]);
      const oPorts = getPath(observed, ["spec", "ports"]);
      if (Array.isArray(dPorts) && Array.isArray(oPorts)) {
        for (const dp of dPorts) {
          if (!isObj(dp) || dp.nodePort) continue;
          const op = oPorts.find((p) => isObj(p) && p.port === dp.port && (p.protocol ?? "TCP") === (dp.protocol ?? "TCP"));
          if (isObj(op) && op.nodePort) dp.nodePort = op.nodePort;
        }
      }
      break;
    }
    case "ServiceAccount":
      keepIfUnset(desired, observed, ["secrets"]);
      break;
    case "PersistentVolumeClaim":
      keepIfUnset(desired, observed, ["spec", "volumeName"]);
      break;
    case "PersistentVolume":
      keepIfUnset(desired, observed, ["spec", "claimRef"]);
      break;
    case "Job":
      keepIfUnset(desired, observed, ["spec", "selector"]);
      {
        const ol = getPath(observed, ["spec", "template", "metadata", "labels"]);
        if (isObj(ol)) {
          const dl = (getPath(desired, ["spec", "template", "metadata", "labels"]) as Obj | undefined) ?? {};
          setPath(desired, ["spec", "template", "metadata", "labels"], { ...ol, ...dl });
        }
      }
      break;
  }
  // Workloads labelled retain-replicas keep the member's replica count (e.g. an HPA there owns it).
  const labels = getPath(desired, ["metadata", "labels"]);
  if (isObj(labels) && labels[RetainReplicasLabel] === "true") {
    const r = getPath(observed, ["spec", "replicas"]);
    if (r !== undefined) setPath(desired, ["spec", "replicas"], r);
  }
}

/**
 * The object to write over `observed` for `desired` (Karmada's RetainClusterFields plus the
 * default Retain hook): the member's resourceVersion, finalizers and ownerReferences, its
 * own labels and annotations, and the fields its controllers own. `desired` is not changed.
 */
export function retainClusterFields(desired: KubeObject, observed: KubeObject): KubeObject {
  const out = structuredClone(desired) as KubeObject;
  const m = { ...out.metadata };
  m.resourceVersion = observed.metadata.resourceVersion;
  if (observed.metadata.finalizers?.length) m.finalizers = [...observed.metadata.finalizers];
  else delete m.finalizers;
  if (observed.metadata.ownerReferences?.length) m.ownerReferences = structuredClone(observed.metadata.ownerReferences);
  else delete m.ownerReferences;
  const labels = retainMap(desired.metadata.labels, observed.metadata.labels, managedKeys(observed, ManagedLabels));
  const annotations = retainMap(desired.metadata.annotations, observed.metadata.annotations, managedKeys(observed, ManagedAnnotation));
  if (labels) m.labels = labels;
  else delete m.labels;
  if (annotations) m.annotations = annotations;
  else delete m.annotations;
  out.metadata = m;
  retainKindFields(out as Obj, observed as Obj, desired.kind);
  return out;
}

/** Metadata fields the server owns; never part of a comparison. */
const VOLATILE_META = new Set(["resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"]);

/**
 * Whether `have` already carries everything in `want`: objects compare key by key over the
 * keys of `want` (the member may add defaulted fields), arrays element by element with the
 * same length, scalars by value. Status and server-owned metadata are ignored.
 */
export function coveredBy(want: KubeObject, have: KubeObject): boolean {
  for (const [k, v] of Object.entries(want)) {
    if (k === "status") continue;
    if (k === "metadata") {
      for (const [mk, mv] of Object.entries(want.metadata)) {
        if (VOLATILE_META.has(mk)) continue;
        if (!subset(mv, (have.metadata as Obj)[mk])) return false;
      }
      continue;
    }
    if (!subset(v, have[k])) return false;
  }
  return true;
}

function subset(want: unknown, have: unknown): boolean {
  if (isObj(want)) {
    if (!isObj(have)) return Object.keys(want).length === 0 && have === undefined;
    for (const [k, v] of Object.entries(want)) {
      if (v === undefined || v === null) continue;
      if (!subset(v, have[k])) return false;
    }
    return true;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(have)) return want.length === 0 && have === undefined;
    if (want.length !== have.length) return false;
    return want.every((w, i) => subset(w, have[i]));
  }
  if (want === undefined || want === null) return true;
  return isDeepStrictEqual(want, have);
}
