// What every kind's validation is built from: FieldErrors worded like apimachinery's, the name
// checks of k8s.io/apimachinery/pkg/util/validation, and ObjectMeta, labels, annotations and
// label selectors as Kubernetes validates them.
import type { LabelSelectorJson } from "@flotilla/proto";
import type { FieldError } from "../errors.js";
import type { ResourceType } from "../resources.js";
import type { ObjectMeta } from "../types.js";

// ---------------------------------------------------------------------------------------------
// Field errors, worded like k8s.io/apimachinery/pkg/util/validation/field.

export const show = (v: unknown): string => (v === undefined ? "null" : (JSON.stringify(v) ?? String(v)));

export function fieldRequired(field: string, detail = ""): FieldError {
  return { field, reason: "FieldValueRequired", message: detail ? `Required value: ${detail}` : "Required value" };
}
export function fieldInvalid(field: string, value: unknown, detail: string): FieldError {
  return { field, reason: "FieldValueInvalid", message: `Invalid value: ${show(value)}: ${detail}` };
}
export function fieldNotSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  return { field, reason: "FieldValueNotSupported", message: `Unsupported value: ${show(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}` };
}
export function fieldDuplicate(field: string, value: unknown): FieldError {
  return { field, reason: "FieldValueDuplicate", message: `Duplicate value: ${show(value)}` };
}
export function fieldNotFound(field: string, value: unknown, detail = ""): FieldError {
  return { field, reason: "FieldValueNotFound", message: `Not found: ${show(value)}` + (detail ? `: ${detail}` : "") };
}
export function fieldForbidden(field: string, detail: string): FieldError {
  return { field, reason: "FieldValueForbidden", message: `Forbidden: ${detail}` };
}
export function fieldTooLong(field: string, value: unknown, max: number): FieldError {
  return { field, reason: "FieldValueTooLong", message: `Too long: may not be more than ${max} bytes` + (typeof value === "string" && value.length < 100 ? ` (${show(value)})` : "") };
}

export const child = (p: string, name: string) => (p ? `${p}.${name}` : name);
export const index = (p: string, i: number) => `${p}[${i}]`;
const key = (p: string, k: string) => `${p}[${k}]`;

/** Adds a FieldValueNotSupported error when `v` is set and not one of `allowed` ("" and undefined pass). */
export function oneOf(errs: FieldError[], path: string, v: string | undefined, allowed: readonly string[]): void {
  if (v && !allowed.includes(v)) errs.push(fieldNotSupported(path, v, allowed));
}

// ---------------------------------------------------------------------------------------------
// k8s.io/apimachinery/pkg/util/validation: each returns the reasons the value is bad (empty = valid).

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const utf8 = new TextEncoder();
const bytes = (s: string) => utf8.encode(s).length;

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 63) errs.push("must be no more than 63 characters");
  if (!DNS1123_LABEL.test(v)) {
    errs.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 253) errs.push("must be no more than 253 characters");
  if (!DNS1123_SUBDOMAIN.test(v)) {
    errs.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  return errs;
}

/** A label key / annotation key / finalizer: `[prefix/]name`, prefix a DNS subdomain, name ≤ 63 chars. */
export function isQualifiedName(v: string): string[] {
  const parts = v.split("/");
  let name = v;
  const errs: string[] = [];
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push("prefix part must be non-empty");
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else if (parts.length > 2) {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name.length === 0) errs.push("name part must be non-empty");
  else if (bytes(name) > 63) errs.push("name part must be no more than 63 bytes");
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) {
    errs.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 63) errs.push("must be no more than 63 bytes");
  if (!LABEL_VALUE.test(v)) {
    errs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

/** Names of objects whose names are path segments (RBAC): anything but "/", "%", "." and "..". */
function isPathSegmentName(v: string): string[] {
  if (v === "." || v === "..") return [`may not be '${v}'`];
  const errs: string[] = [];
  if (v.includes("/")) errs.push("may not contain '/'");
  if (v.includes("%")) errs.push("may not contain '%'");
  return errs;
}

const CLUSTER_NAME_MAX_LENGTH = 48;

/** pkg/util/validation.ValidateClusterName: a DNS-1123 label of at most 48 characters (room for `karmada-es-`). */
export function isClusterName(v: string): string[] {
  if (v.length === 0) return ["must be not empty"];
  if (v.length > CLUSTER_NAME_MAX_LENGTH) return [`must be no more than ${CLUSTER_NAME_MAX_LENGTH} characters`];
  return isDNS1123Label(v);
}

const LABEL_VALUE_MAX_LENGTH = 63;
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

// ---------------------------------------------------------------------------------------------
// Metadata

type NameValidator = (name: string) => string[];

/** Which name rule a kind uses. Karmada kinds follow their webhooks; templates the Kubernetes defaults. */
function nameValidatorFor(r: Pick<ResourceType, "group" | "kind">): NameValidator {
  if (r.group === "cluster.karmada.io" && r.kind === "Cluster") return isClusterName;
  if (r.group === "policy.karmada.io" && (r.kind === "PropagationPolicy" || r.kind === "ClusterPropagationPolicy")) {
    // The name becomes a label value on everything the policy claims.
    return (n) => {
      const errs = isDNS1123Subdomain(n);
      return n.length > LABEL_VALUE_MAX_LENGTH ? [`must be no more than ${LABEL_VALUE_MAX_LENGTH} characters`, ...errs] : errs;
    };
  }
  if (r.group === "" && (r.kind === "Namespace" || r.kind === "Service")) return isDNS1123Label;
  if (r.group === "rbac.authorization.k8s.io") return isPathSegmentName;
  return isDNS1123Subdomain;
}

/** Validates `labels` as Kubernetes does (metav1validation.ValidateLabels). */
export function validateLabels(labels: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(fieldInvalid(key(path, k), k, m));
    for (const m of isValidLabelValue(v)) errs.push(fieldInvalid(key(path, k), v, m));
  }
  return errs;
}

export function validateAnnotations(annotations: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(fieldInvalid(key(path, k), k, m));
    size += bytes(k) + bytes(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(fieldTooLong(path, undefined, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/**
 * ObjectMeta as apimachinery's ValidateObjectMeta checks it: a name (or generateName) valid for the kind,
 * a namespace exactly when the kind is namespaced, valid labels, annotations, finalizers and ownerReferences.
 */
export function validateObjectMeta(meta: ObjectMeta | undefined, r: Pick<ResourceType, "group" | "kind" | "namespaced">, path = "metadata"): FieldError[] {
  const errs: FieldError[] = [];
  const m = meta ?? {};
  const validName = nameValidatorFor(r);
  if (m.generateName) {
    // Prefix form: a trailing '-' is allowed because a random suffix follows.
    const masked = m.generateName.replace(/-$/, "a");
    for (const msg of validName(masked)) errs.push(fieldInvalid(child(path, "generateName"), m.generateName, msg));
  }
  if (!m.name) {
    if (!m.generateName) errs.push(fieldRequired(child(path, "name"), "name or generateName is required"));
  } else {
    for (const msg of validName(m.name)) errs.push(fieldInvalid(child(path, "name"), m.name, msg));
  }
  if (r.namespaced) {
    if (!m.namespace) errs.push(fieldRequired(child(path, "namespace")));
    else for (const msg of isDNS1123Label(m.namespace)) errs.push(fieldInvalid(child(path, "namespace"), m.namespace, msg));
  } else if (m.namespace) {
    errs.push(fieldForbidden(child(path, "namespace"), "not allowed on this type"));
  }
  errs.push(...validateLabels(m.labels, child(path, "labels")));
  errs.push(...validateAnnotations(m.annotations, child(path, "annotations")));
  (m.finalizers ?? []).forEach((f, i) => {
    for (const msg of isQualifiedName(f)) errs.push(fieldInvalid(index(child(path, "finalizers"), i), f, msg));
  });
  (m.ownerReferences ?? []).forEach((o, i) => {
    const p = index(child(path, "ownerReferences"), i);
    if (!o.apiVersion) errs.push(fieldRequired(child(p, "apiVersion"), "version must not be empty"));
    if (!o.kind) errs.push(fieldRequired(child(p, "kind"), "kind must not be empty"));
    if (!o.name) errs.push(fieldRequired(child(p, "name"), "name must not be empty"));
    if (!o.uid) errs.push(fieldRequired(child(p, "uid"), "uid must not be empty"));
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Selectors

const SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;

/** metav1 LabelSelector: valid keys/values, a known operator, values exactly when the operator needs them. */
export function validateLabelSelector(sel: LabelSelectorJson | undefined, path: string): FieldError[] {
  if (!sel) return [];
  const errs = validateLabels(sel.matchLabels, child(path, "matchLabels"));
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const p = index(child(path, "matchExpressions"), i);
    const values = e.values ?? [];
    switch (e.operator ?? "") {
      case "In":
      case "NotIn":
        if (values.length === 0) errs.push(fieldRequired(child(p, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) errs.push(fieldForbidden(child(p, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(fieldNotSupported(child(p, "operator"), e.operator ?? "", SELECTOR_OPERATORS));
    }
    for (const m of isQualifiedName(e.key ?? "")) errs.push(fieldInvalid(child(p, "key"), e.key ?? "", m));
  });
  return errs;
}
