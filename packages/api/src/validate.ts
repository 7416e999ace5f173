import { MoveBackAnnotation, parseMoveBack } from "./move-back.js";
import type {
  ApplicationFailoverBehaviorJson,
  ClusterAffinityJson,
  ClusterAffinityTermJson,
  ClusterFailoverBehaviorJson,
  ClusterSpecJson,
  ClusterTaintPolicySpecJson,
  FieldSelectorJson,
  LabelSelectorJson,
  MatchConditionJson,
  OverrideSpecJson,
  OverridersJson,
  PlacementJson,
  PropagationSpecJson,
  ReplicaSchedulingStrategyJson,
  ResourceBindingSpecJson,
  SpreadConstraintJson,
  StatePreservationJson,
  SuspensionJson,
  TaintJson,
  TolerationJson,
} from "@flotilla/proto";
import { ObjectMetaSchema } from "@flotilla/proto";
import { jsonShapeErrors, schemaFor } from "./decode.js";
import { InvalidError, type FieldError } from "./errors.js";
import { ProviderField, RegionField, ZoneField } from "./names.js";
import { ZERO_QUANTITY as ZERO, compareQuantity, quantityValueBig, tryParseQuantity, type Quantity } from "./quantity.js";
import { MAX_INT64, RESOURCE_MODEL_NAMES } from "./resource-models.js";
import type { ResourceType } from "./resources.js";
import { workloadErrors } from "./workloads.js";
import type {
  AnyOverridePolicy,
  AnyPropagationPolicy,
  AnyResourceBinding,
  Cluster,
  ClusterTaintPolicy,
  KubeObject,
  ObjectMeta,
  ResourceModel,
  Work,
} from "./types.js";

// ---------------------------------------------------------------------------------------------
// Field errors, worded like k8s.io/apimachinery/pkg/util/validation/field.

const show = (v: unknown): string => (v === undefined ? "null" : (JSON.stringify(v) ?? String(v)));

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

const child = (p: string, name: string) => (p ? `${p}.${name}` : name);
const index = (p: string, i: number) => `${p}[${i}]`;
const key = (p: string, k: string) => `${p}[${k}]`;

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

function validateAnnotations(annotations: Record<string, string> | undefined, path: string): FieldError[] {
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

const FIELD_SELECTOR_KEYS = [ProviderField, RegionField, ZoneField] as const;
const FIELD_SELECTOR_OPERATORS = ["In", "NotIn"] as const;

/** A placement fieldSelector only knows provider/region/zone and In/NotIn (ValidatePolicyFieldSelector). */
function validateFieldSelector(sel: FieldSelectorJson | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (sel?.matchExpressions ?? []).forEach((e, i) => {
    const p = index(child(path, "matchExpressions"), i);
    if (!(FIELD_SELECTOR_KEYS as readonly string[]).includes(e.key ?? "")) errs.push(fieldNotSupported(child(p, "key"), e.key ?? "", FIELD_SELECTOR_KEYS));
    if (!(FIELD_SELECTOR_OPERATORS as readonly string[]).includes(e.operator ?? "")) errs.push(fieldNotSupported(child(p, "operator"), e.operator ?? "", FIELD_SELECTOR_OPERATORS));
  });
  return errs;
}

function validateClusterAffinity(a: ClusterAffinityJson | undefined, path: string): FieldError[] {
  if (!a) return [];
  return [...validateLabelSelector(a.labelSelector, child(path, "labelSelector")), ...validateFieldSelector(a.fieldSelector, child(path, "fieldSelector"))];
}

function hasInlineAffinity(a: ClusterAffinityJson): boolean {
  return a.labelSelector !== undefined || a.fieldSelector !== undefined || (a.clusterNames?.length ?? 0) > 0 || (a.exclude?.length ?? 0) > 0;
}

// ---------------------------------------------------------------------------------------------
// Placement

export const TOLERATION_OPERATORS = ["Exists", "Equal"] as const;
export const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;

/** core/v1 tolerations as ValidateTolerations checks them, except that Lt/Gt are not supported. */
export function validateTolerations(tolerations: TolerationJson[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (tolerations ?? []).forEach((t, i) => {
    const p = index(path, i);
    const op = t.operator ?? "";
    if (t.key) {
      for (const m of isQualifiedName(t.key)) errs.push(fieldInvalid(child(p, "key"), t.key, m));
    } else if (op !== "Exists") {
      errs.push(fieldInvalid(child(p, "operator"), op, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""));
    }
    if (t.tolerationSeconds !== undefined && t.effect !== "NoExecute") {
      errs.push(fieldInvalid(child(p, "effect"), t.effect ?? "", "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (op) {
      case "":
      case "Equal":
        for (const m of isValidLabelValue(t.value ?? "")) errs.push(fieldInvalid(child(p, "value"), t.value, m));
        break;
      case "Exists":
        if (t.value) errs.push(fieldInvalid(child(p, "operator"), t.value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(fieldNotSupported(child(p, "operator"), op, TOLERATION_OPERATORS));
    }
    if (t.effect && !(TAINT_EFFECTS as readonly string[]).includes(t.effect)) errs.push(fieldNotSupported(child(p, "effect"), t.effect, TAINT_EFFECTS));
  });
  return errs;
}

export const SPREAD_BY_FIELDS = ["cluster", "region", "zone", "provider"] as const;

/** ValidateSpreadConstraint. */
export function validateSpreadConstraints(constraints: SpreadConstraintJson[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (constraints ?? []).forEach((c, i) => {
    const p = index(path, i);
    const minGroups = c.minGroups ?? 0;
    const maxGroups = c.maxGroups ?? 0;
    if (c.spreadByField && c.spreadByLabel) errs.push(fieldForbidden(child(p, "spreadByLabel"), "spreadByLabel should not co-exist with spreadByField"));
    if (c.spreadByLabel) for (const m of isQualifiedName(c.spreadByLabel)) errs.push(fieldInvalid(child(p, "spreadByLabel"), c.spreadByLabel, m));
    if (minGroups < 0) errs.push(fieldInvalid(child(p, "minGroups"), minGroups, "minGroups lower than 0 is not allowed"));
    if (maxGroups < 0) errs.push(fieldInvalid(child(p, "maxGroups"), maxGroups, "maxGroups lower than 0 is not allowed"));
    if (maxGroups > 0 && maxGroups < minGroups) errs.push(fieldInvalid(child(p, "maxGroups"), maxGroups, "maxGroups lower than minGroups is not allowed"));
    if (c.spreadByField) {
      if (!(SPREAD_BY_FIELDS as readonly string[]).includes(c.spreadByField)) errs.push(fieldNotSupported(child(p, "spreadByField"), c.spreadByField, SPREAD_BY_FIELDS));
      if (seen.has(c.spreadByField)) errs.push({ ...fieldDuplicate(child(p, "spreadByField"), c.spreadByField), message: `Duplicate value: ${show(c.spreadByField)}: multiple ${c.spreadByField} spread constraints are not allowed` });
      seen.add(c.spreadByField);
    }
  });
  if (seen.size > 0 && !seen.has("cluster")) {
    errs.push(fieldRequired(path, "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"));
  }
  return errs;
}

export const REPLICA_SCHEDULING_TYPES = ["Duplicated", "Divided"] as const;
export const REPLICA_DIVISION_PREFERENCES = ["Aggregated", "Weighted"] as const;
export const DYNAMIC_WEIGHT_FACTORS = ["AvailableReplicas"] as const;

function validateReplicaScheduling(rs: ReplicaSchedulingStrategyJson | undefined, path: string): FieldError[] {
  if (!rs) return [];
  const errs: FieldError[] = [];
  // "" is accepted: defaulting turns it into Divided / Weighted.
  if (rs.replicaSchedulingType && !(REPLICA_SCHEDULING_TYPES as readonly string[]).includes(rs.replicaSchedulingType)) {
    errs.push(fieldNotSupported(child(path, "replicaSchedulingType"), rs.replicaSchedulingType, REPLICA_SCHEDULING_TYPES));
  }
  if (rs.replicaDivisionPreference && !(REPLICA_DIVISION_PREFERENCES as readonly string[]).includes(rs.replicaDivisionPreference)) {
    errs.push(fieldNotSupported(child(path, "replicaDivisionPreference"), rs.replicaDivisionPreference, REPLICA_DIVISION_PREFERENCES));
  }
  const wp = rs.weightPreference;
  if (wp) {
    const wpPath = child(path, "weightPreference");
    if (wp.dynamicWeight && !(DYNAMIC_WEIGHT_FACTORS as readonly string[]).includes(wp.dynamicWeight)) {
      errs.push(fieldNotSupported(child(wpPath, "dynamicWeight"), wp.dynamicWeight, DYNAMIC_WEIGHT_FACTORS));
    }
    (wp.staticWeightList ?? []).forEach((w, i) => {
      const p = index(child(wpPath, "staticWeightList"), i);
      if ((w.weight ?? 0) < 1) errs.push(fieldInvalid(child(p, "weight"), w.weight ?? 0, "must be greater than or equal to 1"));
      errs.push(...validateClusterAffinity(w.targetCluster, child(p, "targetCluster")));
    });
  }
  return errs;
}

/** Overflow needs a capacity-aware division: dynamic weight or Aggregated. */
function allowsOverflow(rs: ReplicaSchedulingStrategyJson | undefined): boolean {
  if (!rs || rs.replicaSchedulingType !== "Divided") return false;
  if (rs.replicaDivisionPreference === "Aggregated") return true;
  return rs.replicaDivisionPreference === "Weighted" && !!rs.weightPreference?.dynamicWeight;
}

/**
 * A term's `overflowAffinities` (Karmada v1.18's ValidateOverflowAffinities and the placement
 * check): only with the inline ClusterAffinity as the primary group, only with dynamic weight or
 * Aggregated division, each tier named (required, a qualified name) with a name unique among the
 * tiers and different from the term's own `affinityName`; each tier's fieldSelector as any
 * affinity's.
 */
function validateOverflowAffinities(term: ClusterAffinityTermJson, path: string, rs: ReplicaSchedulingStrategyJson | undefined): FieldError[] {
  const overflow = term.overflowAffinities ?? [];
  if (overflow.length === 0) return [];
  const errs: FieldError[] = [];
  const op = child(path, "overflowAffinities");
  if (!hasInlineAffinity(term)) errs.push(fieldForbidden(op, "overflowAffinities can only be used together with the inline ClusterAffinity"));
  if (!allowsOverflow(rs)) errs.push(fieldForbidden(op, "overflowAffinities can only be used together with dynamic weight or aggregated scheduling"));
  const names = new Set<string>(term.affinityName ? [term.affinityName] : []);
  overflow.forEach((a, j) => {
    const p = index(op, j);
    const name = a.affinityName ?? "";
    if (!name) errs.push(fieldRequired(child(p, "affinityName")));
    else {
      for (const m of isQualifiedName(name)) errs.push(fieldInvalid(child(p, "affinityName"), name, m));
      if (names.has(name)) {
        errs.push({
          ...fieldDuplicate(child(p, "affinityName"), name),
          message: `Duplicate value: ${show(name)}: overflow affinity name must be unique and must not duplicate the primary group's affinityName`,
        });
      }
      names.add(name);
    }
    errs.push(...validateClusterAffinity(a, p));
  });
  return errs;
}

/** ValidatePlacement (with clusterTolerations and replicaScheduling). */
export function validatePlacement(placement: PlacementJson | undefined, path: string): FieldError[] {
  if (!placement) return [];
  const errs: FieldError[] = [];
  const terms = placement.clusterAffinities ?? [];
  if (placement.clusterAffinity && terms.length > 0) {
    errs.push(fieldForbidden(child(path, "clusterAffinities"), "clusterAffinities cannot co-exist with clusterAffinity"));
  }
  errs.push(...validateClusterAffinity(placement.clusterAffinity, child(path, "clusterAffinity")));
  const names = new Set<string>();
  terms.forEach((term, i) => {
    const p = index(child(path, "clusterAffinities"), i);
    const name = term.affinityName ?? "";
    if (!name) errs.push(fieldRequired(child(p, "affinityName")));
    else {
      for (const m of isQualifiedName(name)) errs.push(fieldInvalid(child(p, "affinityName"), name, m));
      if (names.has(name)) errs.push({ ...fieldDuplicate(child(p, "affinityName"), name), message: `Duplicate value: ${show(name)}: each affinity term in a policy must have a unique name` });
      names.add(name);
    }
    errs.push(...validateClusterAffinity(term, p));
    errs.push(...validateOverflowAffinities(term, p, placement.replicaScheduling));
  });
  errs.push(...validateTolerations(placement.clusterTolerations, child(path, "clusterTolerations")));
  errs.push(...validateSpreadConstraints(placement.spreadConstraints, child(path, "spreadConstraints")));
  errs.push(...validateReplicaScheduling(placement.replicaScheduling, child(path, "replicaScheduling")));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Propagation policies

export const APPLICATION_PURGE_MODES = ["Directly", "Gracefully", "Never"] as const;
/** Spellings from Karmada before v1.13 that the CRD still accepts; defaulting rewrites them. */
const LEGACY_APPLICATION_PURGE_MODES = ["Immediately", "Graciously"];
export const CLUSTER_PURGE_MODES = ["Directly", "Gracefully"] as const;
export const CONFLICT_RESOLUTIONS = ["Abort", "Overwrite"] as const;
export const PREEMPTION_POLICIES = ["Always", "Never"] as const;
export const ACTIVATION_PREFERENCES = ["Lazy"] as const;

function validateStatePreservation(sp: StatePreservationJson | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (sp?.rules ?? []).forEach((r, i) => {
    const p = index(child(path, "rules"), i);
    if (!r.aliasLabelName) errs.push(fieldRequired(child(p, "aliasLabelName")));
    else for (const m of isQualifiedName(r.aliasLabelName)) errs.push(fieldInvalid(child(p, "aliasLabelName"), r.aliasLabelName, m));
    if (!r.jsonPath) errs.push(fieldRequired(child(p, "jsonPath")));
  });
  return errs;
}

function validateApplicationFailover(app: ApplicationFailoverBehaviorJson | undefined, path: string): FieldError[] {
  if (!app) return [];
  const errs: FieldError[] = [];
  const ts = app.decisionConditions?.tolerationSeconds;
  if (ts !== undefined && ts < 0) errs.push(fieldInvalid(child(child(path, "decisionConditions"), "tolerationSeconds"), ts, "must be greater than or equal to 0"));
  const mode = app.purgeMode ?? "";
  if (mode && ![...APPLICATION_PURGE_MODES, ...LEGACY_APPLICATION_PURGE_MODES].includes(mode)) {
    errs.push(fieldNotSupported(child(path, "purgeMode"), mode, APPLICATION_PURGE_MODES));
  }
  const graceful = mode === "Gracefully" || mode === "Graciously";
  const gp = app.gracePeriodSeconds;
  const gpPath = child(path, "gracePeriodSeconds");
  if (!graceful && gp !== undefined) errs.push(fieldForbidden(gpPath, "only takes effect when purgeMode is Gracefully"));
  if (graceful && gp === undefined) errs.push(fieldRequired(gpPath, "should not be empty when purgeMode is Gracefully"));
  if (gp !== undefined && gp <= 0) errs.push(fieldInvalid(gpPath, gp, "must be greater than 0"));
  errs.push(...validateStatePreservation(app.statePreservation, child(path, "statePreservation")));
  return errs;
}

function validateClusterFailover(c: ClusterFailoverBehaviorJson | undefined, path: string): FieldError[] {
  if (!c) return [];
  const errs: FieldError[] = [];
  if (c.purgeMode && !(CLUSTER_PURGE_MODES as readonly string[]).includes(c.purgeMode)) errs.push(fieldNotSupported(child(path, "purgeMode"), c.purgeMode, CLUSTER_PURGE_MODES));
  errs.push(...validateStatePreservation(c.statePreservation, child(path, "statePreservation")));
  return errs;
}

function validateSuspension(s: SuspensionJson | undefined, path: string): FieldError[] {
  if (s?.dispatching === true && (s.dispatchingOnClusters?.clusterNames?.length ?? 0) > 0) {
    return [fieldForbidden(child(child(path, "dispatchingOnClusters"), "clusterNames"), "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames")];
  }
  return [];
}

function oneOf(errs: FieldError[], path: string, v: string | undefined, allowed: readonly string[]): void {
  if (v && !allowed.includes(v)) errs.push(fieldNotSupported(path, v, allowed));
}

/** ValidatePropagationSpec plus the CRD schema's required fields and enums. */
export function validatePropagationSpec(spec: PropagationSpecJson | undefined, path = "spec"): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec) return [fieldRequired(path)];
  const selectors = spec.resourceSelectors ?? [];
  const selPath = child(path, "resourceSelectors");
  if (selectors.length === 0) errs.push(fieldRequired(selPath, "at least one resource selector is required"));
  selectors.forEach((rs, i) => {
    const p = index(selPath, i);
    if (!rs.apiVersion) errs.push(fieldRequired(child(p, "apiVersion")));
    if (!rs.kind) errs.push(fieldRequired(child(p, "kind")));
    errs.push(...validateLabelSelector(rs.labelSelector, child(p, "labelSelector")));
    if (spec.preemption === "Always" && !rs.name) {
      errs.push(fieldInvalid(child(p, "name"), "", "name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption"));
    }
  });
  errs.push(...validatePlacement(spec.placement, child(path, "placement")));
  oneOf(errs, child(path, "preemption"), spec.preemption, PREEMPTION_POLICIES);
  oneOf(errs, child(path, "conflictResolution"), spec.conflictResolution, CONFLICT_RESOLUTIONS);
  oneOf(errs, child(path, "activationPreference"), spec.activationPreference, ACTIVATION_PREFERENCES);
  if (spec.failover?.application && !spec.propagateDeps) {
    errs.push(fieldInvalid(child(path, "propagateDeps"), spec.propagateDeps ?? false, "application failover is set, propagateDeps must be true"));
  }
  errs.push(...validateApplicationFailover(spec.failover?.application, child(child(path, "failover"), "application")));
  errs.push(...validateClusterFailover(spec.failover?.cluster, child(child(path, "failover"), "cluster")));
  errs.push(...validateSuspension(spec.suspension, child(path, "suspension")));
  (spec.dependentOverrides ?? []).forEach((n, i) => {
    if (!n) errs.push(fieldRequired(index(child(path, "dependentOverrides"), i)));
  });
  return errs;
}

/** A PropagationPolicy or ClusterPropagationPolicy (metadata and spec). */
export function validatePropagationPolicy(pp: AnyPropagationPolicy): FieldError[] {
  const namespaced = pp.kind !== "ClusterPropagationPolicy";
  const moveBack = pp.metadata?.annotations?.[MoveBackAnnotation];
  return [
    ...validateObjectMeta(pp.metadata, { group: "policy.karmada.io", kind: pp.kind, namespaced }),
    ...(typeof moveBack === "string" ? parseMoveBack(moveBack).errors : []),
    ...validatePropagationSpec(pp.spec as PropagationSpecJson | undefined),
  ];
}

// ---------------------------------------------------------------------------------------------
// Override policies

export const OVERRIDER_OPERATORS = ["add", "remove", "replace"] as const;
export const IMAGE_COMPONENTS = ["Registry", "Repository", "Tag"] as const;

/** Whether the deprecated `spec.overriders` sets anything the webhook counts (fieldOverrider is not counted, as upstream's EmptyOverrides). */
function hasOverriders(o: OverridersJson | undefined): boolean {
  if (!o) return false;
  return [o.plaintext, o.imageOverrider, o.commandOverrider, o.argsOverrider, o.labelsOverrider, o.annotationsOverrider].some((l) => (l?.length ?? 0) > 0);
}

/** jsonpointer.New: "" or a leading "/". */
function pointerErrors(v: string | undefined, path: string, detail: string): FieldError[] {
  return v && !v.startsWith("/") ? [fieldInvalid(path, v, detail)] : [];
}

/** What the CRD schema checks on any Overriders (required fields and enums). */
function validateOverridersSchema(o: OverridersJson | undefined, path: string): FieldError[] {
  if (!o) return [];
  const errs: FieldError[] = [];
  const op = (p: string, v: string | undefined) => {
    if (!v) errs.push(fieldRequired(child(p, "operator")));
    else oneOf(errs, child(p, "operator"), v, OVERRIDER_OPERATORS);
  };
  (o.plaintext ?? []).forEach((x, i) => {
    const p = index(child(path, "plaintext"), i);
    if (!x.path) errs.push(fieldRequired(child(p, "path")));
    op(p, x.operator);
  });
  (o.imageOverrider ?? []).forEach((x, i) => {
    const p = index(child(path, "imageOverrider"), i);
    if (!x.component) errs.push(fieldRequired(child(p, "component")));
    else oneOf(errs, child(p, "component"), x.component, IMAGE_COMPONENTS);
    op(p, x.operator);
  });
  for (const name of ["commandOverrider", "argsOverrider"] as const) {
    (o[name] ?? []).forEach((x, i) => {
      const p = index(child(path, name), i);
      if (!x.containerName) errs.push(fieldRequired(child(p, "containerName")));
      if (x.operator && x.operator !== "add" && x.operator !== "remove") errs.push(fieldNotSupported(child(p, "operator"), x.operator, ["add", "remove"]));
      else if (!x.operator) errs.push(fieldRequired(child(p, "operator")));
    });
  }
  for (const name of ["labelsOverrider", "annotationsOverrider"] as const) {
    (o[name] ?? []).forEach((x, i) => op(index(child(path, name), i), x.operator));
  }
  (o.fieldOverrider ?? []).forEach((f, i) => {
    const p = index(child(path, "fieldOverrider"), i);
    if (!f.fieldPath) errs.push(fieldRequired(child(p, "fieldPath")));
    for (const name of ["json", "yaml"] as const) {
      (f[name] ?? []).forEach((x, j) => {
        const sp = index(child(p, name), j);
        if (!x.subPath) errs.push(fieldRequired(child(sp, "subPath")));
        op(sp, x.operator);
      });
    }
  });
  return errs;
}

/** The webhook's per-rule checks (ValidateOverrideSpec): label and annotation values, pointers, field overriders. */
function validateRuleOverriders(o: OverridersJson | undefined, path: string): FieldError[] {
  if (!o) return [];
  const errs: FieldError[] = [];
  (o.annotationsOverrider ?? []).forEach((x, i) => errs.push(...validateAnnotations(x.value, child(index(child(path, "annotationsOverrider"), i), "value"))));
  (o.labelsOverrider ?? []).forEach((x, i) => errs.push(...validateLabels(x.value, child(index(child(path, "labelsOverrider"), i), "value"))));
  (o.imageOverrider ?? []).forEach((x, i) => {
    if (x.predicate) errs.push(...pointerErrors(x.predicate.path, child(child(index(child(path, "imageOverrider"), i), "predicate"), "path"), "path should be start with / character"));
  });
  (o.fieldOverrider ?? []).forEach((f, i) => {
    const p = index(child(path, "fieldOverrider"), i);
    const nJson = f.json?.length ?? 0;
    const nYaml = f.yaml?.length ?? 0;
    if (nJson > 0 && nYaml > 0) errs.push(fieldInvalid(p, f, "FieldOverrider has both YAML and JSON set. Only one is allowed"));
    if (nJson === 0 && nYaml === 0) errs.push(fieldInvalid(p, f, "FieldOverrider must have either JSON or YAML set"));
    errs.push(...pointerErrors(f.fieldPath, child(p, "fieldPath"), `JSON pointer must be empty or start with a "/"`));
    for (const name of ["json", "yaml"] as const) {
      (f[name] ?? []).forEach((x, j) => {
        const sp = index(child(p, name), j);
        errs.push(...pointerErrors(x.subPath, child(sp, "subPath"), `JSON pointer must be empty or start with a "/"`));
        const hasValue = x.value !== undefined && x.value !== null;
        if ((x.operator === "add" || x.operator === "replace") && !hasValue) errs.push(fieldInvalid(child(sp, "value"), x.value, `value is required for ${x.operator} operation`));
        if (x.operator === "remove" && hasValue) errs.push(fieldInvalid(child(sp, "value"), x.value, "value is not allowed for remove operation"));
      });
    }
  });
  return errs;
}

/**
 * ValidateOverrideSpec plus the CRD schema: the deprecated targetCluster/overriders pair cannot
 * be mixed with overrideRules; every targetCluster's label and field selectors; per rule, label
 * and annotation values, JSON pointers and field overriders; everywhere, required fields and
 * operator/component enums. `namespace` is an OverridePolicy's own ("" for a cluster policy):
 * its selectors may only name that namespace.
 */
export function validateOverrideSpec(spec: OverrideSpecJson | undefined, namespace: string, path = "spec"): FieldError[] {
  if (!spec) return [];
  const errs: FieldError[] = [];
  (spec.resourceSelectors ?? []).forEach((rs, i) => {
    const p = index(child(path, "resourceSelectors"), i);
    if (!rs.apiVersion) errs.push(fieldRequired(child(p, "apiVersion")));
    if (!rs.kind) errs.push(fieldRequired(child(p, "kind")));
    if (namespace && rs.namespace && rs.namespace !== namespace) {
      errs.push(fieldInvalid(child(p, "namespace"), rs.namespace, "namespace of resource selector must be the same as the namespace of the policy"));
    }
    errs.push(...validateLabelSelector(rs.labelSelector, child(p, "labelSelector")));
  });
  const rules = spec.overrideRules ?? [];
  if (rules.length > 0) {
    if (spec.targetCluster) errs.push(fieldInvalid(child(path, "targetCluster"), spec.targetCluster, "overrideRules and targetCluster can't co-exist"));
    if (hasOverriders(spec.overriders)) errs.push(fieldInvalid(child(path, "overriders"), spec.overriders, "overrideRules and overriders can't co-exist"));
  }
  errs.push(...validateClusterAffinity(spec.targetCluster, child(path, "targetCluster")));
  errs.push(...validateOverridersSchema(spec.overriders, child(path, "overriders")));
  rules.forEach((r, i) => {
    const p = index(child(path, "overrideRules"), i);
    errs.push(...validateClusterAffinity(r.targetCluster, child(p, "targetCluster")));
    errs.push(...validateOverridersSchema(r.overriders, child(p, "overriders")));
    errs.push(...validateRuleOverriders(r.overriders, child(p, "overriders")));
  });
  return errs;
}

/** An OverridePolicy or ClusterOverridePolicy (metadata and spec). */
export function validateOverridePolicy(op: AnyOverridePolicy): FieldError[] {
  const namespaced = op.kind !== "ClusterOverridePolicy";
  return [
    ...validateObjectMeta(op.metadata, { group: "policy.karmada.io", kind: op.kind, namespaced }),
    ...validateOverrideSpec(op.spec as OverrideSpecJson | undefined, namespaced ? (op.metadata?.namespace ?? "") : ""),
  ];
}

// ---------------------------------------------------------------------------------------------
// ClusterTaintPolicy

export const MATCH_CONDITION_OPERATORS = ["In", "NotIn"] as const;
export const CONDITION_STATUSES = ["True", "False", "Unknown"] as const;
/** The effects a ClusterTaintPolicy may set. Upstream's enum also has PreferNoExecute, which Flotilla does not implement. */
export const TAINT_POLICY_EFFECTS = ["NoSchedule", "NoExecute"] as const;

export interface ClusterTaintPolicyOptions {
  /** The webhook's --allow-no-execute-taint-policy (default false): whether a policy may set NoExecute taints. */
  allowNoExecute?: boolean;
}

/**
 * The CRD schema of `addOnConditions`/`removeOnConditions` items (conditionType, operator and
 * statusValues required), plus the enums upstream only documents: an operator other than In or
 * NotIn, or a status other than True, False or Unknown, could never match a condition (upstream's
 * controller treats an unknown operator as "no match"), so they are refused here.
 */
function validateMatchConditions(conds: MatchConditionJson[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (conds ?? []).forEach((c, i) => {
    const p = index(path, i);
    if (!c.conditionType) errs.push(fieldRequired(child(p, "conditionType")));
    if (!c.operator) errs.push(fieldRequired(child(p, "operator")));
    else oneOf(errs, child(p, "operator"), c.operator, MATCH_CONDITION_OPERATORS);
    (c.statusValues ?? []).forEach((v, j) => {
      if (!(CONDITION_STATUSES as readonly string[]).includes(v)) errs.push(fieldNotSupported(index(child(p, "statusValues"), j), v, CONDITION_STATUSES));
    });
  });
  return errs;
}

/**
 * The ClusterTaintPolicy validating webhook (validatePolicyTaints: NoExecute only when allowed,
 * no two taints with the same key and effect, reported at the first of them) plus the CRD schema
 * (`taints` has at least one item; key and effect required) and what a Cluster's taints must
 * be anyway (a qualified key, a label-value value), so every taint a policy adds is one the
 * Cluster API accepts. `targetClusters` is checked like a propagation policy's clusterAffinity.
 */
export function validateClusterTaintPolicySpec(spec: ClusterTaintPolicySpecJson | undefined, path = "spec", opts: ClusterTaintPolicyOptions = {}): FieldError[] {
  if (!spec) return [fieldRequired(path)];
  const errs: FieldError[] = [];
  errs.push(...validateClusterAffinity(spec.targetClusters, child(path, "targetClusters")));
  errs.push(...validateMatchConditions(spec.addOnConditions, child(path, "addOnConditions")));
  errs.push(...validateMatchConditions(spec.removeOnConditions, child(path, "removeOnConditions")));
  const taints = spec.taints ?? [];
  const tp = child(path, "taints");
  if (taints.length === 0) errs.push(fieldRequired(tp, "must have at least 1 item"));
  taints.forEach((t, i) => {
    const p = index(tp, i);
    if (!t.key) errs.push(fieldRequired(child(p, "key")));
    else for (const m of isQualifiedName(t.key)) errs.push(fieldInvalid(child(p, "key"), t.key, m));
    for (const m of isValidLabelValue(t.value ?? "")) errs.push(fieldInvalid(child(p, "value"), t.value, m));
    if (!t.effect) errs.push(fieldRequired(child(p, "effect")));
    else oneOf(errs, child(p, "effect"), t.effect, TAINT_POLICY_EFFECTS);
    if (t.effect === "NoExecute" && !opts.allowNoExecute) {
      errs.push(
        fieldForbidden(p, "Configuring taint with NoExecute effect is not allowed, this capability must be explicitly enabled by administrators through command-line flags (the gateway's ALLOW_NO_EXECUTE_TAINT_POLICY)"),
      );
    }
    const dup = taints.slice(i + 1).some((u) => (u.key ?? "") === (t.key ?? "") && (u.effect ?? "") === (t.effect ?? ""));
    if (dup) errs.push(fieldDuplicate(p, `Duplicate taint with the same key(${t.key ?? ""}) and effect(${t.effect ?? ""}) is not allowed`));
  });
  return errs;
}

export function validateClusterTaintPolicy(ctp: ClusterTaintPolicy, opts: ClusterTaintPolicyOptions = {}): FieldError[] {
  return [
    ...validateObjectMeta(ctp.metadata, { group: "policy.karmada.io", kind: "ClusterTaintPolicy", namespaced: false }),
    ...validateClusterTaintPolicySpec(ctp.spec as ClusterTaintPolicySpecJson | undefined, "spec", opts),
  ];
}

// ---------------------------------------------------------------------------------------------
// Cluster

export const SYNC_MODES = ["Push", "Pull"] as const;

function parseURL(s: string): URL | undefined {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
}

/** ValidateClusterAPIEndpoint: a URL with a host and no user info, query or fragment. */
function validateAPIEndpoint(endpoint: string, path: string): FieldError[] {
  const form = "; desired format: https://hostname, https://hostname:port, https://IP or https://IP:port";
  const u = parseURL(endpoint);
  if (!u) return [fieldInvalid(path, endpoint, "apiEndpoint must be a valid URL" + form)];
  const errs: FieldError[] = [];
  // upstream takes any scheme; a member is reached over https (or http, as the execution service allows)
  if (u.protocol !== "https:" && u.protocol !== "http:") errs.push(fieldInvalid(path, endpoint, "the scheme must be https (or http)" + form));
  if (!u.host) errs.push(fieldInvalid(path, endpoint, "host must be provided" + form));
  if (u.username || u.password) errs.push(fieldInvalid(path, endpoint, "user information is not permitted in the URL"));
  if (u.hash) errs.push(fieldInvalid(path, endpoint, "fragments are not permitted in the URL"));
  if (u.search) errs.push(fieldInvalid(path, endpoint, "query parameters are not permitted in the URL"));
  return errs;
}

/** Node-style taints: qualified key, label-value value, a supported effect, unique key+effect. */
export function validateTaints(taints: TaintJson[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (taints ?? []).forEach((t, i) => {
    const p = index(path, i);
    if (!t.key) errs.push(fieldRequired(child(p, "key")));
    else for (const m of isQualifiedName(t.key)) errs.push(fieldInvalid(child(p, "key"), t.key, m));
    for (const m of isValidLabelValue(t.value ?? "")) errs.push(fieldInvalid(child(p, "value"), t.value, m));
    if (!t.effect) errs.push(fieldRequired(child(p, "effect")));
    else if (!(TAINT_EFFECTS as readonly string[]).includes(t.effect)) errs.push(fieldNotSupported(child(p, "effect"), t.effect, TAINT_EFFECTS));
    const id = `${t.key ?? ""}:${t.effect ?? ""}`;
    if (seen.has(id)) errs.push({ ...fieldDuplicate(p, id), message: `Duplicate value: ${show(id)}: taints must be unique by key and effect pair` });
    seen.add(id);
  });
  return errs;
}

/**
 * Upstream's ValidateClusterResourceModels, every problem at its own field (upstream stops at the
 * first and names only `spec.resourceModels`). The models are checked in the order given, which
 * after the gateway's standardization is grade order: grades are distinct and ascending (and not
 * negative); every grade has at least one range (upstream would index out of range on none) and
 * the same resources in the same order as the one before it, each named once and one of cpu,
 * memory, storage, ephemeral-storage; min and max are quantities with min < max; the first grade's
 * minimums are 0, each later minimum equals the previous grade's maximum of that resource
 * (contiguous, no overlap), and the last grade's maximums are MaxInt64 (9223372036854775807).
 */
export function validateResourceModels(models: ResourceModel[] | undefined, path = "spec.resourceModels"): FieldError[] {
  const errs: FieldError[] = [];
  if (!models?.length) return errs;
  const bounds = models.map((m) => (m.ranges ?? []).map((r) => ({ min: tryParseQuantity(r.min), max: tryParseQuantity(r.max) })));
  models.forEach((m, i) => {
    const p = index(path, i);
    const grade = m.grade ?? 0;
    const prev = i > 0 ? models[i - 1]! : undefined;
    if (grade < 0) errs.push(fieldInvalid(child(p, "grade"), grade, "must be greater than or equal to 0"));
    else if (prev && grade === (prev.grade ?? 0)) errs.push({ ...fieldDuplicate(child(p, "grade"), grade), message: `Duplicate value: ${grade}: The grade of each models should not be the same` });
    else if (prev && grade < (prev.grade ?? 0)) errs.push(fieldInvalid(child(p, "grade"), grade, `grades must ascend: grade ${prev.grade ?? 0} comes before it`));
    const ranges = m.ranges ?? [];
    const rp = child(p, "ranges");
    if (ranges.length === 0) {
      errs.push(fieldRequired(rp, "a resource model has at least one range"));
      return;
    }
    const sameShape = !prev || (prev.ranges ?? []).length === ranges.length;
    if (!sameShape) errs.push(fieldInvalid(rp, ranges.length, `The number of resource types should be the same: grade ${prev!.grade ?? 0} has ${(prev!.ranges ?? []).length}`));
    const seen = new Set<string>();
    ranges.forEach((r, j) => {
      const q = index(rp, j);
      const name = r.name ?? "";
      if (!name) errs.push(fieldRequired(child(q, "name")));
      else if (!(RESOURCE_MODEL_NAMES as readonly string[]).includes(name)) errs.push(fieldNotSupported(child(q, "name"), name, RESOURCE_MODEL_NAMES));
      else if (seen.has(name)) errs.push(fieldDuplicate(child(q, "name"), name));
      seen.add(name);
      const { min, max } = bounds[i]![j]!;
      for (const [k, v, qty] of [["min", r.min, min], ["max", r.max, max]] as const) {
        if (v === undefined || v === "") errs.push(fieldRequired(child(q, k)));
        else if (!qty) errs.push(fieldInvalid(child(q, k), v, "must be a quantity, e.g. 4, 500m or 16Gi"));
      }
      if (min && max && compareQuantity(max, min) <= 0) errs.push(fieldInvalid(child(q, "max"), r.max, `The max value of each resource must be greater than the min value (${r.min})`));
      if (i === 0) {
        if (min && compareQuantity(min, ZERO) !== 0) errs.push(fieldInvalid(child(q, "min"), r.min, "The min value of each resource in the first model should be 0"));
      } else if (sameShape) {
        const before = prev!.ranges![j]!;
        const beforeMax: Quantity | undefined = bounds[i - 1]![j]!.max;
        const supported = (n: string | undefined) => (RESOURCE_MODEL_NAMES as readonly string[]).includes(n ?? "");
        // an unnamed or unsupported name is reported above, once
        if (supported(name) && supported(before.name) && before.name !== name) {
          errs.push(fieldInvalid(child(q, "name"), name, `The resource types of each models should be the same: grade ${prev!.grade ?? 0} has ${JSON.stringify(before.name ?? "")} here`));
        } else if (min && beforeMax && compareQuantity(min, beforeMax) !== 0) {
          errs.push(fieldInvalid(child(q, "min"), r.min, `Model intervals for resources must be contiguous and non-overlapping: the max of grade ${prev!.grade ?? 0} is ${before.max}`));
        }
      }
      if (i === models.length - 1 && max && quantityValueBig(max) !== MAX_INT64) {
        errs.push(fieldInvalid(child(q, "max"), r.max, "The max value of each resource in the last model should be MaxInt64 (9223372036854775807)"));
      }
    });
  });
  return errs;
}

export function validateClusterSpec(spec: ClusterSpecJson | undefined, path = "spec"): FieldError[] {
  if (!spec) return [];
  const errs: FieldError[] = [];
  // Upstream requires syncMode; Flotilla accepts it empty (the cluster is then treated as Push).
  oneOf(errs, child(path, "syncMode"), spec.syncMode, SYNC_MODES);
  if (spec.apiEndpoint) errs.push(...validateAPIEndpoint(spec.apiEndpoint, child(path, "apiEndpoint")));
  if (spec.proxyURL) {
    const u = parseURL(spec.proxyURL);
    if (!u || !["http:", "https:", "socks5:"].includes(u.protocol)) {
      errs.push(fieldInvalid(child(path, "proxyURL"), spec.proxyURL, "must be a valid URL with scheme http, https, or socks5"));
    }
  }
  for (const [name, ref] of [["secretRef", spec.secretRef], ["impersonatorSecretRef", spec.impersonatorSecretRef]] as const) {
    if (!ref) continue;
    if (!ref.namespace) errs.push(fieldRequired(child(child(path, name), "namespace")));
    if (!ref.name) errs.push(fieldRequired(child(child(path, name), "name")));
  }
  errs.push(...validateTaints(spec.taints, child(path, "taints")));
  errs.push(...validateResourceModels(spec.resourceModels, child(path, "resourceModels")));
  return errs;
}

export function validateCluster(cluster: Cluster): FieldError[] {
  return [
    ...validateObjectMeta(cluster.metadata, { group: "cluster.karmada.io", kind: "Cluster", namespaced: false }),
    ...validateClusterSpec(cluster.spec),
  ];
}

// ---------------------------------------------------------------------------------------------
// Bindings and Works: sanity only (they are written by controllers).

export function validateResourceBindingSpec(spec: ResourceBindingSpecJson | undefined, path = "spec"): FieldError[] {
  if (!spec) return [fieldRequired(path)];
  const errs: FieldError[] = [];
  const res = spec.resource;
  const rp = child(path, "resource");
  if (!res) errs.push(fieldRequired(rp));
  else {
    if (!res.apiVersion) errs.push(fieldRequired(child(rp, "apiVersion")));
    if (!res.kind) errs.push(fieldRequired(child(rp, "kind")));
    if (!res.name) errs.push(fieldRequired(child(rp, "name")));
  }
  if ((spec.replicas ?? 0) < 0) errs.push(fieldInvalid(child(path, "replicas"), spec.replicas, "must be greater than or equal to 0"));
  const seen = new Set<string>();
  (spec.clusters ?? []).forEach((c, i) => {
    const p = index(child(path, "clusters"), i);
    if (!c.name) errs.push(fieldRequired(child(p, "name")));
    else if (seen.has(c.name)) errs.push(fieldDuplicate(child(p, "name"), c.name));
    if (c.name) seen.add(c.name);
    if ((c.replicas ?? 0) < 0) errs.push(fieldInvalid(child(p, "replicas"), c.replicas, "must be greater than or equal to 0"));
  });
  (spec.gracefulEvictionTasks ?? []).forEach((t, i) => {
    const p = index(child(path, "gracefulEvictionTasks"), i);
    if (!t.fromCluster) errs.push(fieldRequired(child(p, "fromCluster")));
    oneOf(errs, child(p, "purgeMode"), t.purgeMode, [...APPLICATION_PURGE_MODES, ...LEGACY_APPLICATION_PURGE_MODES]);
    if (t.gracePeriodSeconds !== undefined && t.gracePeriodSeconds <= 0) errs.push(fieldInvalid(child(p, "gracePeriodSeconds"), t.gracePeriodSeconds, "must be greater than 0"));
  });
  (spec.requiredBy ?? []).forEach((r, i) => {
    if (!r.name) errs.push(fieldRequired(child(index(child(path, "requiredBy"), i), "name")));
  });
  oneOf(errs, child(path, "conflictResolution"), spec.conflictResolution, CONFLICT_RESOLUTIONS);
  return errs;
}

export function validateResourceBinding(rb: AnyResourceBinding): FieldError[] {
  const namespaced = rb.kind !== "ClusterResourceBinding";
  return [
    ...validateObjectMeta(rb.metadata, { group: "work.karmada.io", kind: rb.kind, namespaced }),
    ...validateResourceBindingSpec(rb.spec as ResourceBindingSpecJson | undefined),
  ];
}

export function validateWork(work: Work): FieldError[] {
  const errs = validateObjectMeta(work.metadata, { group: "work.karmada.io", kind: "Work", namespaced: true });
  (work.spec?.workload?.manifests ?? []).forEach((m, i) => {
    const p = index("spec.workload.manifests", i);
    const manifest = m as Record<string, unknown>;
    if (typeof manifest.apiVersion !== "string" || !manifest.apiVersion) errs.push(fieldRequired(child(p, "apiVersion")));
    if (typeof manifest.kind !== "string" || !manifest.kind) errs.push(fieldRequired(child(p, "kind")));
    const meta = manifest.metadata as Record<string, unknown> | undefined;
    if (typeof meta?.name !== "string" || !meta.name) errs.push(fieldRequired(child(child(p, "metadata"), "name")));
    errs.push(...workloadErrors(manifest as KubeObject, p));
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------

/** Settings of the validating webhooks that change what they accept. */
export interface ValidateOptions {
  /** karmada-webhook's --allow-no-execute-taint-policy (default false). */
  allowNoExecuteTaintPolicy?: boolean;
}

/**
 * Validates an object of `resourceType` the way Karmada's validating webhooks and CRD schemas would,
 * throwing one InvalidError that lists every problem. Typed kinds are first checked against their proto
 * schema (so undecoded input fails cleanly); opaque templates get their metadata checked (the
 * types of the fields ObjectMeta defines, then the values) and, for workloads, the fields
 * Flotilla reads (workloads.ts).
 */
export function validateObject(resourceType: ResourceType, obj: KubeObject, opts: ValidateOptions = {}): void {
  const name = obj?.metadata?.name;
  const ref = { group: resourceType.group, kind: resourceType.kind, name: typeof name === "string" ? name : undefined };
  const schema = schemaFor(resourceType);
  if (schema) {
    const shape = jsonShapeErrors(schema, obj);
    if (shape.length) throw new InvalidError(ref, shape);
  }
  const errs: FieldError[] = [];
  if (obj.kind && obj.kind !== resourceType.kind) errs.push(fieldInvalid("kind", obj.kind, `must be "${resourceType.kind}"`));
  switch (schema ? resourceType.kind : "") {
    case "PropagationPolicy":
    case "ClusterPropagationPolicy":
      errs.push(...validatePropagationPolicy({ ...(obj as AnyPropagationPolicy), kind: resourceType.kind }));
      break;
    case "OverridePolicy":
    case "ClusterOverridePolicy":
      errs.push(...validateOverridePolicy({ ...(obj as AnyOverridePolicy), kind: resourceType.kind }));
      break;
    case "ClusterTaintPolicy":
      errs.push(...validateClusterTaintPolicy(obj as ClusterTaintPolicy, { allowNoExecute: opts.allowNoExecuteTaintPolicy }));
      break;
    case "ResourceBinding":
    case "ClusterResourceBinding":
      errs.push(...validateResourceBinding({ ...(obj as AnyResourceBinding), kind: resourceType.kind }));
      break;
    case "Work":
      errs.push(...validateWork(obj as Work));
      break;
    case "Cluster":
      errs.push(...validateCluster(obj as Cluster));
      break;
    default: {
      const shape = jsonShapeErrors(ObjectMetaSchema, obj.metadata ?? {}, "metadata", { unknownFields: "ignore" });
      if (shape.length) throw new InvalidError(ref, shape);
      errs.push(...validateObjectMeta(obj.metadata, resourceType), ...workloadErrors(obj));
    }
  }
  if (errs.length) throw new InvalidError(ref, errs);
}
