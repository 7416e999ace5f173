// Validation as Karmada's validating webhooks and CRD schemas do it, one module per kind under
// validate/. This file re-exports the names the package has always exported; the helpers the
// modules share among themselves (path builders, oneOf, validateAnnotations, ...) stay inside.
export {
  fieldDuplicate,
  fieldForbidden,
  fieldInvalid,
  fieldNotFound,
  fieldNotSupported,
  fieldRequired,
  fieldTooLong,
  isClusterName,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  validateLabelSelector,
  validateLabels,
  validateObjectMeta,
} from "./validate/fields.js";
export {
  DYNAMIC_WEIGHT_FACTORS,
  REPLICA_DIVISION_PREFERENCES,
  REPLICA_SCHEDULING_TYPES,
  SPREAD_BY_FIELDS,
  TAINT_EFFECTS,
  TOLERATION_OPERATORS,
  validatePlacement,
  validateSpreadConstraints,
  validateTolerations,
} from "./validate/placement.js";
export {
  ACTIVATION_PREFERENCES,
  APPLICATION_PURGE_MODES,
  CLUSTER_PURGE_MODES,
  CONFLICT_RESOLUTIONS,
  PREEMPTION_POLICIES,
  validatePropagationPolicy,
  validatePropagationSpec,
} from "./validate/propagation-policy.js";
export { IMAGE_COMPONENTS, OVERRIDER_OPERATORS, validateOverridePolicy, validateOverrideSpec } from "./validate/override-policy.js";
export {
  CONDITION_STATUSES,
  MATCH_CONDITION_OPERATORS,
  TAINT_POLICY_EFFECTS,
  validateClusterTaintPolicy,
  validateClusterTaintPolicySpec,
  type ClusterTaintPolicyOptions,
} from "./validate/cluster-taint-policy.js";
export { SYNC_MODES, validateCluster, validateClusterSpec, validateResourceModels, validateTaints } from "./validate/cluster.js";
export { validateResourceBinding, validateResourceBindingSpec } from "./validate/binding.js";
export { validateWork } from "./validate/work.js";
export { validateObject, type ValidateOptions } from "./validate/object.js";
