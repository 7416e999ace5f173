// ClusterTaintPolicy: the validating webhook (validatePolicyTaints) plus the CRD schema.
import type { ClusterTaintPolicySpecJson, MatchConditionJson } from "@flotilla/proto";
import type { FieldError } from "../errors.js";
import type { ClusterTaintPolicy } from "../types.js";
import { child, fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, index, isQualifiedName, isValidLabelValue, oneOf, validateObjectMeta } from "./fields.js";
import { validateClusterAffinity } from "./placement.js";

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
