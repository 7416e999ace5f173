// Cluster: the spec (sync mode, API endpoint, proxy, secret references), taints and resource models.
import type { ClusterSpecJson, TaintJson } from "@flotilla/proto";
import type { FieldError } from "../errors.js";
import { ZERO_QUANTITY as ZERO, compareQuantity, quantityValueBig, tryParseQuantity, type Quantity } from "../quantity.js";
import { MAX_INT64, RESOURCE_MODEL_NAMES } from "../resource-models.js";
import type { Cluster, ResourceModel } from "../types.js";
import { child, fieldDuplicate, fieldInvalid, fieldNotSupported, fieldRequired, index, isQualifiedName, isValidLabelValue, oneOf, show, validateObjectMeta } from "./fields.js";
import { TAINT_EFFECTS } from "./placement.js";

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
