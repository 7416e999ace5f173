/** Pure patch application: JSON merge patch (RFC 7386), Kubernetes strategic merge patch, JSON patch (RFC 6902). */
import { BadRequestError, FORBIDDEN_KEYS, PATCH_FORBIDDEN_SEGMENTS, forbiddenKeyError, isJsonObject, mergePatch, type DocumentFormat, type FieldError, type Json, type JsonObject } from "@flotilla/api";


/** Patch documents reach here checked (documentErrors); a forbidden key is refused again rather than assigned. */
function ownKey(k: string): string {
  if (FORBIDDEN_KEYS.has(k)) throw new BadRequestError(`${JSON.stringify(k)} may not be used as a field name`, [forbiddenKeyError(k, k)]);
  return k;
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
const mergeKey = (field: string): string | undefined => (Object.hasOwn(MERGE_KEYS, field) ? MERGE_KEYS[field] : undefined);

/** Kubernetes strategic merge patch with the directives kubectl emits ($patch, $setElementOrder, $retainKeys, $deleteFromPrimitiveList). */
export function strategicMergePatch(target: unknown, patch: unknown, field = ""): Json {
  if (!isJsonObject(patch)) return patch as Json;
  if (patch.$patch === "delete") return null;
  if (patch.$patch === "replace") {
    const { $patch: _p, ...rest } = patch;
    return rest;
  }
  let out: JsonObject = isJsonObject(target) ? { ...target } : {};
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  const orders: Record<string, Json[]> = {};
  for (const [k, v] of Object.entries(patch)) {
    ownKey(k);
    if (k === "$retainKeys" || k === "$patch") continue;
    if (k.startsWith("$setElementOrder/") || k.startsWith("$deleteFromPrimitiveList/")) {
      if (!Array.isArray(v)) throw new BadRequestError(`the strategic merge patch directive ${JSON.stringify(k)} must be a list`);
    }
    if (k.startsWith("$setElementOrder/")) {
      orders[ownKey(k.slice("$setElementOrder/".length))] = v as Json[];
      continue;
    }
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const f = ownKey(k.slice("$deleteFromPrimitiveList/".length));
      const drop = new Set((v as Json[]).map((x) => JSON.stringify(x)));
      if (Array.isArray(out[f])) out[f] = (out[f] as Json[]).filter((x) => !drop.has(JSON.stringify(x)));
      continue;
    }
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v) && mergeKey(k) && v.every(isJsonObject)) {
      out[k] = mergeList(Array.isArray(out[k]) ? (out[k] as Json[]) : [], v as JsonObject[], mergeKey(k)!, k);
    } else if (isJsonObject(v)) {
      out[k] = strategicMergePatch(out[k], v, k);
    } else {
      out[k] = v;
    }
  }
  for (const [f, order] of Object.entries(orders)) {
    const key = mergeKey(f);
    const cur = out[f];
    if (!Array.isArray(cur)) continue;
    if (key) {
      const byKey = new Map(cur.filter(isJsonObject).map((x) => [JSON.stringify(x[key]), x]));
      const ordered = order.filter(isJsonObject).map((o) => byKey.get(JSON.stringify(o[key]))).filter((x): x is JsonObject => !!x);
      const rest = cur.filter((x) => isJsonObject(x) && !order.some((o) => isJsonObject(o) && JSON.stringify(o[key]) === JSON.stringify(x[key])));
      out[f] = [...ordered, ...rest];
    }
  }
  void field;
  return out;
}

function mergeList(cur: Json[], patch: JsonObject[], key: string, field: string): Json[] {
  const out = [...cur];
  for (const p of patch) {
    const idx = out.findIndex((x) => isJsonObject(x) && JSON.stringify(x[key]) === JSON.stringify(p[key]));
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

const OPS = ["add", "remove", "replace", "move", "copy", "test"];

/** The reference tokens of a JSON pointer (RFC 6901); undefined when it is not one. */
function pointer(path: string): string[] | undefined {
  if (path === "") return [];
  if (!path.startsWith("/")) return undefined;
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function pointerErrors(v: unknown, field: string): FieldError[] {
  if (typeof v !== "string") return [{ field, reason: v === undefined ? "FieldValueRequired" : "FieldValueTypeInvalid", message: v === undefined ? "Required value: a JSON pointer" : "must be a JSON pointer string" }];
  const segs = pointer(v);
  if (!segs) return [{ field, reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(v)}: a JSON pointer is empty or starts with "/"` }];
  const bad = segs.find((s) => PATCH_FORBIDDEN_SEGMENTS.has(s));
  return bad === undefined ? [] : [{ ...forbiddenKeyError(field, bad), message: `Forbidden: ${JSON.stringify(v)}: ${JSON.stringify(bad)} may not be used as a field name` }];
}

/**
 * What is wrong with a JSON patch document before it is applied: not a list of operations, an
 * unknown `op`, a `path` or `from` that is not a JSON pointer or goes through `__proto__`,
 * `constructor` or `prototype`, a missing `value`. Fields name the place in the patch
 * (`[0].path`). Empty when the patch can be applied (it may still fail against the object).
 */
export function jsonPatchErrors(ops: unknown): FieldError[] {
  if (!Array.isArray(ops)) return [{ field: "", reason: "FieldValueTypeInvalid", message: "a JSON patch must be an array of operations" }];
  const errs: FieldError[] = [];
  ops.forEach((raw, i) => {
    const at = `[${i}]`;
    if (!isJsonObject(raw)) {
      errs.push({ field: at, reason: "FieldValueTypeInvalid", message: "an operation must be an object" });
      return;
    }
    if (typeof raw.op !== "string" || !OPS.includes(raw.op)) {
      errs.push({ field: `${at}.op`, reason: "FieldValueNotSupported", message: `Unsupported value: ${JSON.stringify(raw.op) ?? "null"}: supported values: ${OPS.map((o) => JSON.stringify(o)).join(", ")}` });
      return;
    }
    errs.push(...pointerErrors(raw.path, `${at}.path`));
    if (raw.op === "move" || raw.op === "copy") errs.push(...pointerErrors(raw.from, `${at}.from`));
    if ((raw.op === "add" || raw.op === "replace" || raw.op === "test") && !("value" in raw)) errs.push({ field: `${at}.value`, reason: "FieldValueRequired", message: "Required value" });
  });
  return errs;
}

/** An array index token: "0", "12" (no sign, no leading zero), or "-" (the end) where allowed. */
function arrayIndex(token: string, length: number, end: boolean): number {
  if (end && token === "-") return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new BadRequestError(`${JSON.stringify(token)} is not an array index`);
  const i = Number(token);
  if (i > (end ? length : length - 1)) throw new BadRequestError(`index ${token} out of range`);
  return i;
}

/** RFC 6902 JSON patch. Checked with jsonPatchErrors first; only own properties are followed. */
export function jsonPatch(target: unknown, ops: unknown): Json {
  const errs = jsonPatchErrors(ops);
  if (errs.length) throw new BadRequestError(`the JSON patch is malformed: ${errs.map((e) => `${e.field}: ${e.message}`).join(", ")}`, errs);
  let doc = structuredClone(target) as Json;
  const at = (segs: string[]) => JSON.stringify("/" + segs.join("/"));
  const get = (d: Json, segs: string[]): Json | undefined => {
    let cur: Json | undefined = d;
    for (const s of segs) {
      if (Array.isArray(cur)) cur = /^(0|[1-9][0-9]*)$/.test(s) ? cur[Number(s)] : undefined;
      else if (isJsonObject(cur)) cur = Object.hasOwn(cur, s) ? cur[s] : undefined;
      else return undefined;
    }
    return cur;
  };
  const parentOf = (d: Json, segs: string[]): [Json, string] => {
    const parent = get(d, segs.slice(0, -1));
    if (parent === undefined || typeof parent !== "object" || parent === null) throw new BadRequestError(`path ${at(segs)} does not exist`);
    return [parent, segs[segs.length - 1]!];
  };
  const add = (d: Json, segs: string[], value: Json): Json => {
    if (segs.length === 0) return value;
    const [parent, last] = parentOf(d, segs);
    if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value);
    else (parent as JsonObject)[last] = value;
    return d;
  };
  const remove = (d: Json, segs: string[]): Json => {
    if (segs.length === 0) throw new BadRequestError("the whole object cannot be removed");
    const [parent, last] = parentOf(d, segs);
    if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false), 1);
    else {
      if (!Object.hasOwn(parent as JsonObject, last)) throw new BadRequestError(`path ${at(segs)} does not exist`);
      delete (parent as JsonObject)[last];
    }
    return d;
  };
  for (const raw of ops as Op[]) {
    const segs = pointer(raw.path)!;
    switch (raw.op) {
      case "add":
        doc = add(doc, segs, structuredClone(raw.value ?? null));
        break;
      case "remove":
        doc = remove(doc, segs);
        break;
      case "replace":
        doc = segs.length === 0 ? structuredClone(raw.value ?? null) : add(remove(doc, segs), segs, structuredClone(raw.value ?? null));
        break;
      case "move": {
        const from = pointer(raw.from!)!;
        const v = get(doc, from);
        if (v === undefined) throw new BadRequestError(`path ${at(from)} does not exist`);
        doc = add(remove(doc, from), segs, v);
        break;
      }
      case "copy": {
        const v = get(doc, pointer(raw.from!)!);
        if (v === undefined) throw new BadRequestError(`path ${JSON.stringify(raw.from)} does not exist`);
        doc = add(doc, segs, structuredClone(v));
        break;
      }
      case "test":
        if (JSON.stringify(get(doc, segs)) !== JSON.stringify(raw.value)) throw new BadRequestError(`test operation failed at ${raw.path}`);
        break;
    }
  }
  return doc;
}

export type PatchType = "merge" | "strategic" | "json" | "apply";

/** The patch media types PATCH accepts, with the patch type and the format its body is read in. */
export const PATCH_MEDIA_TYPES: ReadonlyMap<string, { type: PatchType; format: DocumentFormat }> = new Map([
  ["application/merge-patch+json", { type: "merge", format: "json" }],
  ["application/strategic-merge-patch+json", { type: "strategic", format: "json" }],
  ["application/json-patch+json", { type: "json", format: "json" }],
  ["application/apply-patch+yaml", { type: "apply", format: "yaml" }],
  ["application/apply-patch+json", { type: "apply", format: "json" }],
]);

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
