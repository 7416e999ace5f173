// Override policies: the OverridePolicy and ClusterOverridePolicy webhook (ValidateOverrideSpec)
// plus the CRD schema's required fields and enums.
import type { OverrideSpecJson, OverridersJson } from "@flotilla/proto";
import type { FieldError } from "../errors.js";
import { QuantityError, parseQuantity } from "../quantity.js";
import type { AnyOverridePolicy } from "../types.js";
import { child, fieldInvalid, fieldNotSupported, fieldRequired, index, oneOf, validateAnnotations, validateLabelSelector, validateLabels, validateObjectMeta } from "./fields.js";
import { validateClusterAffinity } from "./placement.js";

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

const CONTAINER_LISTS = new Set(["containers", "initContainers", "ephemeralContainers"]);

/**
 * Whether a plaintext path names one quantity of a container's requests or limits:
 * `…/(containers|initContainers|ephemeralContainers)/<index>/resources/(requests|limits)/<name>`.
 * Wherever Kubernetes has such a list (a Pod's spec, any pod template, a CronJob's job template,
 * a custom resource embedding a PodSpec), that is a ResourceList, which Kubernetes decodes with
 * its quantity parser.
 */
function isContainerQuantityPath(path: string): boolean {
  const t = path.split("/");
  const n = t.length;
  return n >= 6 && t[0] === "" && t[n - 1] !== "" && (t[n - 2] === "requests" || t[n - 2] === "limits") && t[n - 3] === "resources" && /^-?[0-9]+$/.test(t[n - 4]!) && CONTAINER_LISTS.has(t[n - 5]!);
}

/**
 * Plaintext values that Kubernetes is certain to refuse, whatever template the policy meets: an
 * `add` or `replace` at a container's resource quantity (see isContainerQuantityPath) whose value
 * its quantity parser refuses (`"1Gi "`, `"1 Gi"`, `"one"`) or that no quantity decodes from (a
 * boolean, an object, a list). A number, or no value, is left alone. This is all admission can
 * judge from the policy alone; what an override writes in general (a whole `resources` object, an
 * image or field overrider's result, a value checked against the template it lands in) is checked
 * when the binding service renders each cluster's manifest, as the gateway checks a template, and
 * a manifest that fails there stalls the binding instead of reaching a Work.
 */
function plaintextQuantityErrors(o: OverridersJson | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (o?.plaintext ?? []).forEach((x, i) => {
    if ((x.operator !== "add" && x.operator !== "replace") || !x.path || !isContainerQuantityPath(x.path)) return;
    const v: unknown = x.value;
    const field = child(index(child(path, "plaintext"), i), "value");
    if (v === undefined || v === null || typeof v === "number") return;
    if (typeof v !== "string") {
      errs.push(fieldInvalid(field, v, `must be a quantity (such as "100m" or "128Mi") for ${x.path}`));
      return;
    }
    try {
      parseQuantity(v);
    } catch (e) {
      if (!(e instanceof QuantityError)) throw e;
      errs.push(fieldInvalid(field, v, `${e.message.replace(/: .*$/s, "")} (a quantity for ${x.path})`));
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
 * operator/component enums, and plaintext values at a container's resource quantity that
 * Kubernetes' quantity parser refuses (plaintextQuantityErrors; Flotilla's addition: upstream
 * stores them and the member refuses the manifest). `namespace` is an OverridePolicy's own ("" for a cluster policy):
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
  errs.push(...plaintextQuantityErrors(spec.overriders, child(path, "overriders")));
  rules.forEach((r, i) => {
    const p = index(child(path, "overrideRules"), i);
    errs.push(...validateClusterAffinity(r.targetCluster, child(p, "targetCluster")));
    errs.push(...validateOverridersSchema(r.overriders, child(p, "overriders")));
    errs.push(...validateRuleOverriders(r.overriders, child(p, "overriders")));
    errs.push(...plaintextQuantityErrors(r.overriders, child(p, "overriders")));
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
