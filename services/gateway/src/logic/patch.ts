/** Pure patch application: JSON merge patch (RFC 7386), Kubernetes strategic merge patch, JSON patch (RFC 6902). */
import { BadRequestError } from "@flotilla/api";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown): Json {
  if (!isObj(patch)) return patch as Json;
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * Merge keys of the lists the built-in kinds merge by key (the rest are replaced).
 * Keyed by field name; this covers what kubectl's apply computes for workloads.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  imagePullSecrets: "name",
  hostAliases: "ip",
  topologySpreadConstraints: "topologyKey",
  conditions: "type",
  ownerReferences: "uid",
};

/** Kubernetes strategic merge patch with the directives kubectl emits ($patch, $setElementOrder, $retainKeys, $deleteFromPrimitiveList). */
export function strategicMergePatch(target: unknown, patch: unknown, field = ""): Json {
  if (!isObj(patch)) return patch as Json;
  if (patch.$patch === "delete") return null;
  if (patch.$patch === "replace") {
    const { $patch: _p, ...rest } = patch;
    return rest;
  }
  let out: Obj = isObj(target) ? { ...target } : {};
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  const orders: Record<string, Json[]> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$retainKeys" || k === "$patch") continue;
    if (k.startsWith("$setElementOrder/")) {
      orders[k.slice("$setElementOrder/".length)] = v as Json[];
      continue;
    }
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const f = k.slice("$deleteFromPrimitiveList/".length);
      const drop = new Set((v as Json[]).map((x) => JSON.stringify(x)));
      if (Array.isArray(out[f])) out[f] = (out[f] as Json[]).filter((x) => !drop.has(JSON.stringify(x)));
      continue;
    }
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v) && MERGE_KEYS[k] && v.every(isObj)) {
      out[k] = mergeList(Array.isArray(out[k]) ? (out[k] as Json[]) : [], v as Obj[], MERGE_KEYS[k]!, k);
    } else if (isObj(v)) {
      out[k] = strategicMergePatch(out[k], v, k);
    } else {
      out[k] = v;
    }
  }
  for (const [f, order] of Object.entries(orders)) {
    const key = MERGE_KEYS[f];
    const cur = out[f];
    if (!Array.isArray(cur)) continue;
    if (key) {
      const byKey = new Map(cur.filter(isObj).map((x) => [JSON.stringify(x[key]), x]));
      const ordered = order.filter(isObj).map((o) => byKey.get(JSON.stringify(o[key]))).filter((x): x is Obj => !!x);
      const rest = cur.filter((x) => isObj(x) && !order.some((o) => isObj(o) && JSON.stringify(o[key]) === JSON.stringify(x[key])));
      out[f] = [...ordered, ...rest];
    }
  }
  void field;
  return out;
}

function mergeList(cur: Json[], patch: Obj[], key: string, field: string): Json[] {
  const out = [...cur];
  for (const p of patch) {
    const idx = out.findIndex((x) => isObj(x) && JSON.stringify(x[key]) === JSON.stringify(p[key]));
    if (p.$patch === "delete") {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], p, field);
    else out.push(strategicMergePatch({}, p, field));
  }
  return out;
}

interface Op {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: Json;
  from?: string;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new BadRequestError(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** RFC 6902 JSON patch. */
export function jsonPatch(target: unknown, ops: unknown): Json {
  if (!Array.isArray(ops)) throw new BadRequestError("a JSON patch must be an array of operations");
  let doc = structuredClone(target) as Json;
  const get = (d: Json, segs: string[]): Json | undefined => {
    let cur: Json | undefined = d;
    for (const s of segs) {
      if (Array.isArray(cur)) cur = cur[Number(s)];
      else if (isObj(cur)) cur = cur[s];
      else return undefined;
    }
    return cur;
  };
  const parentOf = (d: Json, segs: string[]): [Json, string] => {
    const parent = get(d, segs.slice(0, -1));
    if (parent === undefined || (typeof parent !== "object" || parent === null)) throw new BadRequestError(`path ${JSON.stringify("/" + segs.join("/"))} does not exist`);
    return [parent, segs[segs.length - 1]!];
  };
  const add = (d: Json, segs: string[], value: Json): Json => {
    if (segs.length === 0) return value;
    const [parent, last] = parentOf(d, segs);
    if (Array.isArray(parent)) {
      const i = last === "-" ? parent.length : Number(last);
      if (!Number.isInteger(i) || i < 0 || i > parent.length) throw new BadRequestError(`index ${last} out of range`);
      parent.splice(i, 0, value);
    } else (parent as Obj)[last] = value;
    return d;
  };
  const remove = (d: Json, segs: string[]): Json => {
    const [parent, last] = parentOf(d, segs);
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else {
      if (!(last in (parent as Obj))) throw new BadRequestError(`path ${JSON.stringify("/" + segs.join("/"))} does not exist`);
      delete (parent as Obj)[last];
    }
    return d;
  };
  for (const raw of ops as Op[]) {
    const segs = pointer(raw.path);
    switch (raw.op) {
      case "add":
        doc = add(doc, segs, structuredClone(raw.value ?? null));
        break;
      case "remove":
        doc = remove(doc, segs);
        break;
      case "replace":
        doc = remove(doc, segs);
        doc = add(doc, segs, structuredClone(raw.value ?? null));
        break;
      case "move": {
        const from = pointer(raw.from ?? "");
        const v = get(doc, from);
        doc = add(remove(doc, from), segs, v ?? null);
        break;
      }
      case "copy":
        doc = add(doc, segs, structuredClone(get(doc, pointer(raw.from ?? "")) ?? null));
        break;
      case "test":
        if (JSON.stringify(get(doc, segs)) !== JSON.stringify(raw.value)) throw new BadRequestError(`test operation failed at ${raw.path}`);
        break;
      default:
        throw new BadRequestError(`unknown JSON patch operation ${JSON.stringify((raw as { op: unknown }).op)}`);
    }
  }
  return doc;
}

export type PatchType = "merge" | "strategic" | "json" | "apply";

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/json-patch+json": "json",
  "application/apply-patch+yaml": "apply",
  "application/apply-patch+json": "apply",
};

export function applyPatch(type: PatchType, target: unknown, patch: unknown): Json {
  switch (type) {
    case "merge":
    case "apply":
      return mergePatch(target, patch);
    case "strategic":
      return strategicMergePatch(target, patch);
    case "json":
      return jsonPatch(target, patch);
  }
}
