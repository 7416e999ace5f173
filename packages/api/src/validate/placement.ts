// Placement (ValidatePlacement): cluster affinity and its field selector, overflow affinities,
// cluster tolerations, spread constraints and replica scheduling. A PropagationPolicy's
// placement; an OverridePolicy's and a ClusterTaintPolicy's target clusters are affinities too.
import type {
  ClusterAffinityJson,
  ClusterAffinityTermJson,
  FieldSelectorJson,
  PlacementJson,
  ReplicaSchedulingStrategyJson,
  SpreadConstraintJson,
  TolerationJson,
} from "@flotilla/proto";
import type { FieldError } from "../errors.js";
import { ProviderField, RegionField, ZoneField } from "../names.js";
import {
  child,
  fieldDuplicate,
  fieldForbidden,
  fieldInvalid,
  fieldNotSupported,
  fieldRequired,
  index,
  isQualifiedName,
  isValidLabelValue,
  show,
  validateLabelSelector,
} from "./fields.js";

// ---------------------------------------------------------------------------------------------
// Cluster affinity

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

export function validateClusterAffinity(a: ClusterAffinityJson | undefined, path: string): FieldError[] {
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
