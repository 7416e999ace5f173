import { fromJson, toJson, ScalarType, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import {
  ClusterSchema,
  ClusterOverridePolicySchema,
  ClusterTaintPolicySchema,
  ClusterPropagationPolicySchema,
  ClusterResourceBindingSchema,
  OverridePolicySchema,
  PropagationPolicySchema,
  ResourceBindingSchema,
  WorkSchema,
} from "@flotilla/proto";
import { InvalidError, type FieldError } from "./errors.js";
import { KARMADA, apiVersionOf, groupKind, type ResourceType } from "./resources.js";
import type { KubeObject } from "./types.js";

const SCHEMAS = new Map<string, DescMessage>([
  [groupKind(KARMADA.cluster), ClusterSchema],
  [groupKind(KARMADA.propagationPolicy), PropagationPolicySchema],
  [groupKind(KARMADA.clusterPropagationPolicy), ClusterPropagationPolicySchema],
  [groupKind(KARMADA.overridePolicy), OverridePolicySchema],
  [groupKind(KARMADA.clusterOverridePolicy), ClusterOverridePolicySchema],
  [groupKind(KARMADA.clusterTaintPolicy), ClusterTaintPolicySchema],
  [groupKind(KARMADA.resourceBinding), ResourceBindingSchema],
  [groupKind(KARMADA.clusterResourceBinding), ClusterResourceBindingSchema],
  [groupKind(KARMADA.work), WorkSchema],
]);

/** The generated message schema of a typed kind, or undefined for opaque templates. */
export function schemaFor(r: Pick<ResourceType, "group" | "kind">): DescMessage | undefined {
  return SCHEMAS.get(groupKind(r));
}

/**
 * Fields Karmada serializes without `omitempty`, where 0 is a meaningful value (grade 0 is the first
 * resource-model grade, ordinal 0 the first manifest). proto3 drops implicit zeros, so they are put back.
 */
const KEEP_ZERO = new Set([
  "flotilla.cluster.v1.ResourceModel.grade",
  "flotilla.cluster.v1.AllocatableModeling.grade",
  "flotilla.cluster.v1.AllocatableModeling.count",
  "flotilla.work.v1.ResourceIdentifier.ordinal",
  "flotilla.policy.v1.StaticClusterWeight.weight",
]);

/** RFC 3339 as protobuf's JSON mapping accepts it (upper-case T and Z, optional fraction and offset). */
const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:Z|([+-][0-9][0-9]:[0-9][0-9]))$/;
const MIN_TIME = Date.parse("0001-01-01T00:00:00Z");
const MAX_TIME = Date.parse("9999-12-31T23:59:59Z");
const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

const child = (path: string, name: string) => (path ? `${path}.${name}` : name);

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function typeError(field: string, v: unknown, want: string): FieldError {
  return { field, reason: "FieldValueTypeInvalid", message: `Invalid value: ${JSON.stringify(v) ?? describe(v)}: must be of type ${want}, not ${describe(v)}` };
}

const fieldsByJsonName = new WeakMap<DescMessage, Map<string, DescField>>();
function jsonFields(desc: DescMessage): Map<string, DescField> {
  let m = fieldsByJsonName.get(desc);
  if (!m) {
    m = new Map(desc.fields.map((f) => [f.jsonName, f]));
    fieldsByJsonName.set(desc, m);
  }
  return m;
}

function scalarError(t: ScalarType, v: unknown, path: string): FieldError | undefined {
  switch (t) {
    case ScalarType.STRING:
      return typeof v === "string" ? undefined : typeError(path, v, "string");
    case ScalarType.BOOL:
      return typeof v === "boolean" ? undefined : typeError(path, v, "boolean");
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      if (typeof v !== "number" || !Number.isInteger(v)) return typeError(path, v, "integer");
      return v < -2147483648 || v > 2147483647
        ? { field: path, reason: "FieldValueInvalid", message: `Invalid value: ${v}: must be a 32-bit integer` }
        : undefined;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      if (typeof v !== "number" || !Number.isInteger(v)) return typeError(path, v, "integer");
      return v < 0 || v > 4294967295
        ? { field: path, reason: "FieldValueInvalid", message: `Invalid value: ${v}: must be an unsigned 32-bit integer` }
        : undefined;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      if (typeof v === "number" && Number.isSafeInteger(v)) return undefined;
      if (typeof v === "string" && /^-?[0-9]+$/.test(v)) return undefined;
      return typeError(path, v, "integer");
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return typeof v === "number" ? undefined : typeError(path, v, "number");
    case ScalarType.BYTES:
      return typeof v === "string" && BASE64.test(v) ? undefined : typeError(path, v, "base64 string");
  }
}

/** What to do with a field the schema does not know: `holder[key]` is at `path`. */
type OnUnknown = (path: string, holder: Record<string, unknown>, key: string) => void;

function checkValue(field: DescField, kind: "scalar" | "enum" | "message", v: unknown, path: string, errs: FieldError[], onUnknown: OnUnknown): void {
  if (kind === "message") {
    checkMessage(field.message!, v, path, errs, onUnknown);
  } else if (kind === "enum") {
    if (typeof v !== "string" && typeof v !== "number") errs.push(typeError(path, v, "string"));
  } else {
    const e = scalarError(field.scalar!, v, path);
    if (e) errs.push(e);
  }
}

function checkTimestamp(v: unknown, path: string, errs: FieldError[]): void {
  if (typeof v !== "string") {
    errs.push(typeError(path, v, "string"));
    return;
  }
  const m = RFC3339.exec(v);
  const ms = m ? Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[8] ?? "Z"}`) : NaN;
  if (Number.isNaN(ms) || ms < MIN_TIME || ms > MAX_TIME) {
    errs.push({ field: path, reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(v)}: must be an RFC 3339 date-time, e.g. "2006-01-02T15:04:05Z"` });
  }
}

function checkMessage(desc: DescMessage, v: unknown, path: string, errs: FieldError[], onUnknown: OnUnknown): void {
  if (v === null) return; // JSON null: the field is unset
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return checkTimestamp(v, path, errs);
    case "google.protobuf.Struct":
      if (!isObject(v)) errs.push(typeError(path, v, "object"));
      return;
    case "google.protobuf.Value":
      return;
    case "google.protobuf.ListValue":
      if (!Array.isArray(v)) errs.push(typeError(path, v, "array"));
      return;
  }
  if (desc.typeName.startsWith("google.protobuf.")) {
    try {
      fromJson(desc, v as JsonValue);
    } catch (e) {
      errs.push({ field: path, reason: "FieldValueInvalid", message: e instanceof Error ? e.message : String(e) });
    }
    return;
  }
  if (!isObject(v)) {
    errs.push(typeError(path, v, "object"));
    return;
  }
  const fields = jsonFields(desc);
  for (const [name, value] of Object.entries(v)) {
    const p = child(path, name);
    const f = fields.get(name);
    if (!f) {
      onUnknown(p, v, name);
      continue;
    }
    if (value === null || value === undefined) continue; // unset
    switch (f.fieldKind) {
      case "scalar":
      case "enum":
      case "message":
        checkValue(f, f.fieldKind, value, p, errs, onUnknown);
        break;
      case "list":
        if (!Array.isArray(value)) {
          errs.push(typeError(p, value, "array"));
          break;
        }
        value.forEach((item, i) => {
          const ip = `${p}[${i}]`;
          if (item === null) errs.push({ field: ip, reason: "FieldValueInvalid", message: "Invalid value: null: list items must not be null" });
          else checkValue(f, f.listKind, item, ip, errs, onUnknown);
        });
        break;
      case "map":
        if (!isObject(value)) {
          errs.push(typeError(p, value, "object"));
          break;
        }
        for (const [k, item] of Object.entries(value)) {
          const kp = `${p}[${k}]`;
          if (f.mapKey !== ScalarType.STRING && !/^-?[0-9]+$|^true$|^false$/.test(k)) {
            errs.push({ field: kp, reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(k)}: invalid map key` });
          }
          if (item === null) errs.push({ field: kp, reason: "FieldValueInvalid", message: "Invalid value: null: map values must not be null" });
          else checkValue(f, f.mapKind, item, kp, errs, onUnknown);
        }
        break;
    }
  }
}

/**
 * Every way `json` fails to be the JSON form of `schema`: unknown fields (only JSON names are accepted),
 * wrong types, out-of-range integers, malformed timestamps. Paths look like `spec.resourceSelectors[0].kind`
 * and `metadata.labels[app]`. An empty list means `fromJson` will accept the value.
 * `unknownFields: "ignore"` checks only the fields the schema knows (for objects Kubernetes
 * defines more fields of than Flotilla reads, such as a template's ObjectMeta).
 */
export function jsonShapeErrors(schema: DescMessage, json: unknown, path = "", opts: { unknownFields?: "reject" | "ignore" } = {}): FieldError[] {
  const errs: FieldError[] = [];
  const onUnknown: OnUnknown = opts.unknownFields === "ignore" ? () => undefined : (p) => errs.push({ field: p, reason: "FieldValueUnknown", message: `unknown field "${p}"` });
  if (!isObject(json)) errs.push(typeError(path, json, "object"));
  else checkMessage(schema, json, path, errs, onUnknown);
  return errs;
}

/**
 * A copy of `json` without the fields `schema` does not know, and their paths (Kubernetes'
 * `fieldValidation=Warn|Ignore`: unknown fields are dropped instead of refused). Everything
 * else is left to decodeTyped, which still refuses wrong types.
 */
export function dropUnknownFields(schema: DescMessage, json: unknown): { value: unknown; dropped: string[] } {
  const value: unknown = structuredClone(json);
  const dropped: string[] = [];
  if (isObject(value)) {
    checkMessage(schema, value, "", [], (p, holder, key) => {
      delete holder[key];
      dropped.push(p);
    });
  }
  return { value, dropped };
}

/** Puts back Karmada's meaningful zeros and writes timestamps at second precision, as metav1.Time does. */
function normalize(desc: DescMessage, out: Record<string, unknown>): void {
  for (const f of desc.fields) {
    const v = out[f.jsonName];
    if (v === undefined) {
      if (KEEP_ZERO.has(`${desc.typeName}.${f.name}`)) out[f.jsonName] = 0;
      continue;
    }
    const msg = f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message") || (f.fieldKind === "map" && f.mapKind === "message") ? f.message : undefined;
    if (!msg) continue;
    const each = (x: unknown, set: (y: unknown) => void) => {
      if (msg.typeName === "google.protobuf.Timestamp") {
        if (typeof x === "string") set(x.replace(/\.[0-9]+Z$/, "Z"));
      } else if (!msg.typeName.startsWith("google.protobuf.") && isObject(x)) {
        normalize(msg, x);
      }
    };
    if (f.fieldKind === "list" && Array.isArray(v)) v.forEach((x, i) => each(x, (y) => (v[i] = y)));
    else if (f.fieldKind === "map" && isObject(v)) for (const k of Object.keys(v)) each(v[k], (y) => (v[k] = y));
    else each(v, (y) => (out[f.jsonName] = y));
  }
}

/**
 * Strictly decodes a typed object (Cluster, (Cluster)PropagationPolicy, (Cluster)ResourceBinding, Work)
 * into its normalized Karmada JSON: JSON field names, implicit zero values dropped (proto3 `optional`
 * fields keep explicit zeros), timestamps as RFC 3339 UTC with second precision, and `apiVersion`/`kind`
 * filled in when absent. Every problem is reported at once as an InvalidError.
 */
export function decodeTyped(resourceType: ResourceType, json: unknown): KubeObject {
  const schema = schemaFor(resourceType);
  if (!schema) throw new TypeError(`${groupKind(resourceType)} is not a typed kind`);
  const name = isObject(json) && isObject(json.metadata) && typeof json.metadata.name === "string" ? json.metadata.name : undefined;
  const ref = { group: resourceType.group, kind: resourceType.kind, name };
  const errs = jsonShapeErrors(schema, json);
  if (isObject(json)) {
    const apiVersion = apiVersionOf(resourceType);
    if (typeof json.apiVersion === "string" && json.apiVersion !== "" && json.apiVersion !== apiVersion) {
      errs.push({ field: "apiVersion", reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(json.apiVersion)}: must be "${apiVersion}"` });
    }
    if (typeof json.kind === "string" && json.kind !== "" && json.kind !== resourceType.kind) {
      errs.push({ field: "kind", reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(json.kind)}: must be "${resourceType.kind}"` });
    }
  }
  if (errs.length) throw new InvalidError(ref, errs);
  let out: Record<string, unknown>;
  try {
    out = toJson(schema, fromJson(schema, json as JsonValue)) as Record<string, unknown>;
  } catch (e) {
    // Not expected once jsonShapeErrors passed; kept so a schema feature it does not cover still fails cleanly.
    throw new InvalidError(ref, [{ field: "", reason: "FieldValueInvalid", message: e instanceof Error ? e.message : String(e) }], { cause: e });
  }
  normalize(schema, out);
  const metadata = (out.metadata ?? {}) as KubeObject["metadata"];
  delete out.apiVersion;
  delete out.kind;
  delete out.metadata;
  return { apiVersion: apiVersionOf(resourceType), kind: resourceType.kind, metadata, ...out };
}
