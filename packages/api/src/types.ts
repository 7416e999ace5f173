import type {
  ClusterJson,
  ClusterPropagationPolicyJson,
  ClusterOverridePolicyJson,
  ClusterTaintPolicyJson,
  ClusterTaintPolicySpecJson,
  MatchConditionJson,
  PolicyTaintJson,
  OverridePolicyJson,
  OverrideSpecJson,
  OverridersJson,
  RuleWithClusterJson,
  ConditionJson,
  ObjectMetaJson,
  PropagationPolicyJson,
  ResourceBindingJson,
  ClusterResourceBindingJson,
  WorkJson,
  TaintJson,
  TolerationJson,
  PlacementJson,
  GracefulEvictionTaskJson,
  TargetClusterJson,
  LabelSelectorJson,
  ClusterAffinityJson,
  ResourceBindingSpecJson,
  ResourceBindingStatusJson,
  AggregatedStatusItemJson,
  ReplicaRequirementsJson,
  PropagationSpecJson,
  ResourceSelectorJson,
  OwnerReferenceJson,
  StatusJson,
  WakeUpJson,
  ResourceModelJson,
  ResourceModelRangeJson,
  AllocatableModelingJson,
} from "@flotilla/proto";

export type ObjectMeta = ObjectMetaJson;
export type OwnerReference = OwnerReferenceJson;
export type Condition = ConditionJson;
export type Taint = TaintJson;
export type Toleration = TolerationJson;
export type Placement = PlacementJson;
export type ClusterAffinity = ClusterAffinityJson;
export type LabelSelector = LabelSelectorJson;
export type GracefulEvictionTask = GracefulEvictionTaskJson;
export type TargetCluster = TargetClusterJson;
export type ResourceBindingSpec = ResourceBindingSpecJson;
export type ResourceBindingStatus = ResourceBindingStatusJson;
export type AggregatedStatusItem = AggregatedStatusItemJson;
export type ReplicaRequirements = ReplicaRequirementsJson;
export type PropagationSpec = PropagationSpecJson;
export type ResourceSelector = ResourceSelectorJson;
export type KubeStatus = StatusJson;
export type OverrideSpec = OverrideSpecJson;
export type Overriders = OverridersJson;
export type RuleWithCluster = RuleWithClusterJson;
export type WakeUp = WakeUpJson;
export type ClusterTaintPolicySpec = ClusterTaintPolicySpecJson;
export type MatchCondition = MatchConditionJson;
export type PolicyTaint = PolicyTaintJson;
/** One grade of a Cluster's `spec.resourceModels`. */
export type ResourceModel = ResourceModelJson;
export type ResourceModelRange = ResourceModelRangeJson;
/** One entry of a Cluster's `status.resourceSummary.allocatableModelings`: nodes of a grade. */
export type AllocatableModeling = AllocatableModelingJson;

/** Any stored Kubernetes-style object: typed kinds and opaque resource templates alike. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  status?: any;
  [field: string]: unknown;
}

/** A generated JSON type with the envelope fields every stored object has. */
export type Typed<T> = Omit<T, "apiVersion" | "kind" | "metadata"> & {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
};

export type Cluster = Typed<ClusterJson>;
export type PropagationPolicy = Typed<PropagationPolicyJson>;
export type ClusterPropagationPolicy = Typed<ClusterPropagationPolicyJson>;
export type ResourceBinding = Typed<ResourceBindingJson>;
export type ClusterResourceBinding = Typed<ClusterResourceBindingJson>;
export type Work = Typed<WorkJson>;
export type OverridePolicy = Typed<OverridePolicyJson>;
export type ClusterOverridePolicy = Typed<ClusterOverridePolicyJson>;
export type ClusterTaintPolicy = Typed<ClusterTaintPolicyJson>;
/** Either scope of policy or binding: one code path serves both. */
export type AnyPropagationPolicy = PropagationPolicy | ClusterPropagationPolicy;
export type AnyOverridePolicy = OverridePolicy | ClusterOverridePolicy;
export type AnyResourceBinding = ResourceBinding | ClusterResourceBinding;
