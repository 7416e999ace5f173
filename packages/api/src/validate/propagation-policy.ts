// Propagation policies: the PropagationPolicy and ClusterPropagationPolicy webhook
// (ValidatePropagationSpec) plus the CRD schema's required fields and enums.
import type {
  ApplicationFailoverBehaviorJson,
  ClusterFailoverBehaviorJson,
  PropagationSpecJson,
  StatePreservationJson,
  SuspensionJson,
} from "@flotilla/proto";
import type { FieldError } from "../errors.js";
import { MoveBackAnnotation, parseMoveBack } from "../move-back.js";
import type { AnyPropagationPolicy } from "../types.js";
import { child, fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, index, isQualifiedName, oneOf, validateLabelSelector, validateObjectMeta } from "./fields.js";
import { validatePlacement } from "./placement.js";

export const APPLICATION_PURGE_MODES = ["Directly", "Gracefully", "Never"] as const;
/** Spellings from Karmada before v1.13 that the CRD still accepts; defaulting rewrites them. */
export const LEGACY_APPLICATION_PURGE_MODES = ["Immediately", "Graciously"];
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
