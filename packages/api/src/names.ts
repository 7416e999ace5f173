/**
 * Karmada's object naming and the well-known label, annotation, finalizer and taint keys.
 * The strings are Karmada's own, so objects written by Flotilla read the same to Karmada tooling.
 */

// ---- policy (pkg/apis/policy/v1alpha1/well_known_constants.go) ----

/** Label on a PropagationPolicy (set by defaulting) and on everything it claims. */
export const PropagationPolicyPermanentIDLabel = "propagationpolicy.karmada.io/permanent-id";
/** Label on a ClusterPropagationPolicy (set by defaulting) and on everything it claims. */
export const ClusterPropagationPolicyPermanentIDLabel = "clusterpropagationpolicy.karmada.io/permanent-id";
/** Claim annotations put on templates and bindings by the resource detector. */
export const PropagationPolicyNamespaceAnnotation = "propagationpolicy.karmada.io/namespace";
export const PropagationPolicyNameAnnotation = "propagationpolicy.karmada.io/name";
export const ClusterPropagationPolicyAnnotation = "clusterpropagationpolicy.karmada.io/name";
/** Deprecated claim labels (same keys as the annotations); still removed when a claim is stripped. */
export const PropagationPolicyNamespaceLabel = "propagationpolicy.karmada.io/namespace";
export const PropagationPolicyNameLabel = "propagationpolicy.karmada.io/name";
export const ClusterPropagationPolicyLabel = "clusterpropagationpolicy.karmada.io/name";

// ---- bindings and works (pkg/apis/work/v1alpha2/well_known_constants.go) ----

export const ResourceBindingPermanentIDLabel = "resourcebinding.karmada.io/permanent-id";
export const ClusterResourceBindingPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id";
export const WorkPermanentIDLabel = "work.karmada.io/permanent-id";
/** On a manifest inside a Work: the Work it belongs to. */
export const WorkNamespaceAnnotation = "work.karmada.io/namespace";
export const WorkNameAnnotation = "work.karmada.io/name";
/** On a Work and its manifest: the binding it was derived from. */
export const ResourceBindingNamespaceAnnotationKey = "resourcebinding.karmada.io/namespace";
export const ResourceBindingNameAnnotationKey = "resourcebinding.karmada.io/name";
export const ClusterResourceBindingAnnotationKey = "clusterresourcebinding.karmada.io/name";
/** A binding managed by something other than a policy (makes the scheduler take it). */
export const BindingManagedByLabel = "binding.karmada.io/managed-by";
/** On a template (wins) or a Work: how to treat a member object that already exists. */
export const ResourceConflictResolutionAnnotation = "work.karmada.io/conflict-resolution";
export const ResourceConflictResolutionOverwrite = "overwrite";
export const ResourceConflictResolutionAbort = "abort";
/** On a manifest: the template's uid and generation, and the label/annotation keys taken from the template. */
export const ResourceTemplateUIDAnnotation = "resourcetemplate.karmada.io/uid";
export const ResourceTemplateGenerationAnnotationKey = "resourcetemplate.karmada.io/generation";
export const ManagedLabels = "resourcetemplate.karmada.io/managed-labels";
export const ManagedAnnotation = "resourcetemplate.karmada.io/managed-annotations";
export const DeletionProtectionLabelKey = "resourcetemplate.karmada.io/deletion-protected";
export const DeletionProtectionAlways = "Always";
/** Eviction task reasons and producers. */
export const EvictionReasonTaintUntolerated = "TaintUntolerated";
export const EvictionReasonApplicationFailure = "ApplicationFailure";
export const EvictionProducerTaintManager = "TaintManager";

// ---- system-wide (pkg/util/constants.go) ----

/** On every member object Karmada created; value `true`. */
export const ManagedByKarmadaLabel = "karmada.io/managed";
export const ManagedByKarmadaLabelValue = "true";
/** Templates carrying this label are claimed by something else and skipped by the detector. */
export const ResourceTemplateClaimedByLabel = "resourcetemplate.karmada.io/claimed-by";
export const RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas";
/** On a binding: JSON of the placement the scheduler last applied. */
export const PolicyPlacementAnnotation = "policy.karmada.io/applied-placement";
export const AppliedOverrides = "policy.karmada.io/applied-overrides";
export const AppliedClusterOverrides = "policy.karmada.io/applied-cluster-overrides";
/** On a ResourceBinding with propagateDeps: JSON of the dependencies its workload references (DependentObjectReferences). */
export const BindingDependenciesAnnotation = "resourcebinding.karmada.io/dependencies";
/** The prefix of the label that marks an attached binding as required by a binding (`depended-by-<hash of its namespace/name>`). */
export const BindingDependedByLabelPrefix = "resourcebinding.karmada.io/depended-by-";

export const ClusterControllerFinalizer = "karmada.io/cluster-controller";
export const ExecutionControllerFinalizer = "karmada.io/execution-controller";
export const BindingControllerFinalizer = "karmada.io/binding-controller";
export const ClusterResourceBindingControllerFinalizer = "karmada.io/cluster-resource-binding-controller";
export const PropagationPolicyControllerFinalizer = "karmada.io/propagation-policy-controller";
export const ClusterPropagationPolicyControllerFinalizer = "karmada.io/cluster-propagation-policy-controller";

// ---- clusters (pkg/apis/cluster/v1alpha1) ----

export const TaintClusterUnscheduler = "cluster.karmada.io/unschedulable";
export const TaintClusterNotReady = "cluster.karmada.io/not-ready";
export const TaintClusterUnreachable = "cluster.karmada.io/unreachable";
export const TaintClusterTerminating = "cluster.karmada.io/terminating";

/** The `spec.placement.clusterAffinity.fieldSelector` keys. */
export const ProviderField = "provider";
export const RegionField = "region";
export const ZoneField = "zone";

export const DefaultSchedulerName = "default-scheduler";

/** The permanent-id label a kind carries, or undefined for kinds without one. */
export function permanentIDLabel(kind: string): string | undefined {
  switch (kind) {
    case "PropagationPolicy":
      return PropagationPolicyPermanentIDLabel;
    case "ClusterPropagationPolicy":
      return ClusterPropagationPolicyPermanentIDLabel;
    case "ResourceBinding":
      return ResourceBindingPermanentIDLabel;
    case "ClusterResourceBinding":
      return ClusterResourceBindingPermanentIDLabel;
    case "Work":
      return WorkPermanentIDLabel;
    default:
      return undefined;
  }
}

// ---- names (pkg/util/names/names.go) ----

/** 32-bit FNV-1a over the UTF-8 bytes of `s`, as an unsigned integer. */
const utf8 = new TextEncoder();

export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const b of utf8.encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789";

/** k8s.io/apimachinery rand.SafeEncodeString: maps each byte onto a vowel-free alphabet. */
export function safeEncodeString(s: string): string {
  let out = "";
  for (const b of utf8.encode(s)) out += SAFE_ALPHANUMS[b % SAFE_ALPHANUMS.length];
  return out;
}

/** `':'` is not allowed in a DNS subdomain; RBAC names commonly contain it. */
function sanitize(name: string): string {
  return name.replace(/:/g, ".");
}

/** ResourceBinding / ClusterResourceBinding name for a template: `lower(name + "-" + kind)`. */
export function bindingName(kind: string, name: string): string {
  return (sanitize(name) + "-" + kind).toLowerCase();
}

/**
 * Work name for a template: `lower(name) + "-" + safeEncode(fnv1a32(h))` where
 * `h = lower(namespace + "-" + name + "-" + kind)`, or `lower(name + "-" + kind)` for cluster-scoped templates.
 * Example: ("default", "nginx", "Deployment") → "nginx-687f7fb96f".
 */
export function workName(namespace: string, name: string, kind: string): string {
  const n = sanitize(name).toLowerCase();
  const h = (namespace ? `${namespace}-${n}-${kind}` : `${n}-${kind}`).toLowerCase();
  return `${n}-${safeEncodeString(String(fnv1a32(h)))}`;
}

const EXECUTION_SPACE_PREFIX = "karmada-es-";

/** The member cluster an execution namespace belongs to, or undefined for any other namespace. */
export function clusterOfExecutionNamespace(namespace: string): string | undefined {
  return namespace.startsWith(EXECUTION_SPACE_PREFIX) && namespace.length > EXECUTION_SPACE_PREFIX.length
    ? namespace.slice(EXECUTION_SPACE_PREFIX.length)
    : undefined;
}
