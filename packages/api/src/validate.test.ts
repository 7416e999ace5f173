import { test } from "node:test";
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  CORE,
  InvalidError,
  KARMADA,
  applyDefaults,
  decodeTyped,
  defaultResourceModels,
  validateObject,
  type KubeObject,
  type ResourceType,
} from "@flotilla/api";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pp = (): Json => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "nginx-propagation", namespace: "default" },
  spec: {
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }],
    placement: { clusterAffinity: { clusterNames: ["member1"] } },
  },
});
const cpp = (): Json => ({ ...pp(), kind: "ClusterPropagationPolicy", metadata: { name: "all-nginx" } });
const cluster = (): Json => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name: "member1" },
  spec: { syncMode: "Push", apiEndpoint: "https://10.0.0.1:6443" },
});
const MAXQ = "9223372036854775807";
/** member1 with three standardized grades: cpu [0,1) [1,2) [2,∞), memory [0,4Gi) [4Gi,16Gi) [16Gi,∞). */
const modelledWith = (names: string[][], edit: (m: Json[]) => void = () => {}): Json => {
  const bounds: Record<string, string[]> = { cpu: ["0", "1", "2", MAXQ], memory: ["0", "4Gi", "16Gi", MAXQ] };
  const m = names.map((ns, grade) => ({ grade, ranges: ns.map((n) => ({ name: n, min: bounds[n]![grade], max: bounds[n]![grade + 1] })) }));
  edit(m);
  return { ...cluster(), spec: { ...cluster().spec, resourceModels: m } };
};
const modelled = (): Json => modelledWith([["cpu", "memory"], ["cpu", "memory"], ["cpu", "memory"]]);
const models = (o: Json): Json[] => o.spec.resourceModels;
const rb = (): Json => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ResourceBinding",
  metadata: { name: "nginx-deployment", namespace: "default" },
  spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" }, replicas: 2, clusters: [{ name: "member1", replicas: 2 }] },
});
const crb = (): Json => ({ ...rb(), kind: "ClusterResourceBinding", metadata: { name: "ns1-namespace" } });
const work = (): Json => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: "nginx-687f7fb96f", namespace: "karmada-es-member1" },
  spec: { workload: { manifests: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default" } }] } },
});
const deployment = (): Json => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default" }, spec: { replicas: 3, anything: { goes: [1, "x"] } } });

const placement = (o: Json): Json => o.spec.placement;
const withAffinities = (o: Json, terms: Json[]): void => {
  delete o.spec.placement.clusterAffinity;
  o.spec.placement.clusterAffinities = terms;
};
const app = (o: Json, a: Json): void => {
  o.spec.propagateDeps = true;
  o.spec.failover = { application: a };
};

type Case = [name: string, rt: ResourceType, base: () => Json, mutate: (o: Json) => void, want: Array<[string, string]>];

const P = KARMADA.propagationPolicy;
const cases: Case[] = [
  // ---- the valid starting points ----
  ["a plain propagation policy is valid", P, pp, () => {}, []],
  ["a plain cluster propagation policy is valid", KARMADA.clusterPropagationPolicy, cpp, () => {}, []],
  ["a plain cluster is valid", KARMADA.cluster, cluster, () => {}, []],
  ["a plain resource binding is valid", KARMADA.resourceBinding, rb, () => {}, []],
  ["a plain cluster resource binding is valid", KARMADA.clusterResourceBinding, crb, () => {}, []],
  ["a plain work is valid", KARMADA.work, work, () => {}, []],

  // ---- resource selectors ----
  ["a policy without resource selectors is rejected", P, pp, (o) => (o.spec.resourceSelectors = []), [["spec.resourceSelectors", "FieldValueRequired"]]],
  ["a resource selector needs an apiVersion", P, pp, (o) => delete o.spec.resourceSelectors[0].apiVersion, [["spec.resourceSelectors[0].apiVersion", "FieldValueRequired"]]],
  ["a resource selector needs a kind", P, pp, (o) => delete o.spec.resourceSelectors[0].kind, [["spec.resourceSelectors[0].kind", "FieldValueRequired"]]],
  [
    "a label selector operator must be In, NotIn, Exists or DoesNotExist",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchExpressions: [{ key: "app", operator: "Gt", values: ["1"] }] }),
    [["spec.resourceSelectors[0].labelSelector.matchExpressions[0].operator", "FieldValueNotSupported"]],
  ],
  [
    "an In selector expression needs values",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchExpressions: [{ key: "app", operator: "In" }] }),
    [["spec.resourceSelectors[0].labelSelector.matchExpressions[0].values", "FieldValueRequired"]],
  ],
  [
    "an Exists selector expression takes no values",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchExpressions: [{ key: "app", operator: "Exists", values: ["x"] }] }),
    [["spec.resourceSelectors[0].labelSelector.matchExpressions[0].values", "FieldValueForbidden"]],
  ],
  [
    "a selector's matchLabels must be valid labels",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchLabels: { "bad key": "x" } }),
    [["spec.resourceSelectors[0].labelSelector.matchLabels[bad key]", "FieldValueInvalid"]],
  ],
  [
    "preemption Always needs named resource selectors",
    P,
    pp,
    (o) => {
      o.spec.preemption = "Always";
      delete o.spec.resourceSelectors[0].name;
    },
    [["spec.resourceSelectors[0].name", "FieldValueInvalid"]],
  ],

  // ---- cluster affinity ----
  [
    "clusterAffinity and clusterAffinities cannot both be set",
    P,
    pp,
    (o) => (placement(o).clusterAffinities = [{ affinityName: "a", clusterNames: ["member1"] }]),
    [["spec.placement.clusterAffinities", "FieldValueForbidden"]],
  ],
  ["an affinity term needs a name", P, pp, (o) => withAffinities(o, [{ clusterNames: ["member1"] }]), [["spec.placement.clusterAffinities[0].affinityName", "FieldValueRequired"]]],
  [
    "affinity term names are unique",
    P,
    pp,
    (o) => withAffinities(o, [{ affinityName: "a", clusterNames: ["member1"] }, { affinityName: "a", clusterNames: ["member2"] }]),
    [["spec.placement.clusterAffinities[1].affinityName", "FieldValueDuplicate"]],
  ],
  ["an affinity term name is a qualified name", P, pp, (o) => withAffinities(o, [{ affinityName: "a b" }]), [["spec.placement.clusterAffinities[0].affinityName", "FieldValueInvalid"]]],
  [
    "a field selector only knows provider, region and zone",
    P,
    pp,
    (o) => (placement(o).clusterAffinity.fieldSelector = { matchExpressions: [{ key: "color", operator: "In", values: ["red"] }] }),
    [["spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key", "FieldValueNotSupported"]],
  ],
  [
    "a field selector only knows In and NotIn",
    P,
    pp,
    (o) => (placement(o).clusterAffinity.fieldSelector = { matchExpressions: [{ key: "region", operator: "Exists" }] }),
    [["spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator", "FieldValueNotSupported"]],
  ],
  [
    "a field selector inside an affinity term is checked too",
    P,
    pp,
    (o) => withAffinities(o, [{ affinityName: "a", fieldSelector: { matchExpressions: [{ key: "color", operator: "In", values: ["x"] }] } }]),
    [["spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0].key", "FieldValueNotSupported"]],
  ],
  [
    "overflow affinities are rejected with static weights",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }] } };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"]],
  ],
  [
    "overflow affinities are rejected without replica scheduling",
    P,
    pp,
    (o) => withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]),
    [["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"]],
  ],
  [
    "overflow affinities need the term's own affinity",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"]],
  ],
  [
    "overflow affinities are allowed with Aggregated division",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [],
  ],
  [
    "overflow affinities are allowed with dynamic weights",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } };
    },
    [],
  ],

  [
    "an overflow tier needs a name",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName", "FieldValueRequired"]],
  ],
  [
    "overflow tier names are unique",
    P,
    pp,
    (o) => {
      withAffinities(o, [
        { affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }, { affinityName: "burst", clusterNames: ["member3"] }] },
      ]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName", "FieldValueDuplicate"]],
  ],
  [
    "an overflow tier may not take the primary group's name",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "primary", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName", "FieldValueDuplicate"]],
  ],
  [
    "an overflow tier name is a qualified name",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "a b", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName", "FieldValueInvalid"]],
  ],
  [
    "an overflow tier's field selector is checked too",
    P,
    pp,
    (o) => {
      withAffinities(o, [
        { affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", fieldSelector: { matchExpressions: [{ key: "color", operator: "In", values: ["x"] }] } }] },
      ]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].fieldSelector.matchExpressions[0].key", "FieldValueNotSupported"]],
  ],
  [
    "a term without its own affinity and with a duplicated overflow name gets both errors",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", overflowAffinities: [{ affinityName: "o1", clusterNames: ["member2"] }, { affinityName: "o1", clusterNames: ["member3"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [
      ["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"],
      ["spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName", "FieldValueDuplicate"],
    ],
  ],
  [
    "only the term with overflow tiers needs a capacity-aware division",
    P,
    pp,
    (o) =>
      withAffinities(o, [
        { affinityName: "group1", clusterNames: ["member1"] },
        { affinityName: "group2", clusterNames: ["member2"], overflowAffinities: [{ affinityName: "overflow-1", clusterNames: ["member3"] }] },
      ]),
    [["spec.placement.clusterAffinities[1].overflowAffinities", "FieldValueForbidden"]],
  ],
  // ---- replica scheduling ----
  [
    "a static weight must be at least 1",
    P,
    pp,
    (o) =>
      (placement(o).replicaScheduling = {
        replicaSchedulingType: "Divided",
        replicaDivisionPreference: "Weighted",
        weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }, { targetCluster: { clusterNames: ["member2"] }, weight: 0 }] },
      }),
    [["spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight", "FieldValueInvalid"]],
  ],
  ["the replica scheduling type is Duplicated or Divided", P, pp, (o) => (placement(o).replicaScheduling = { replicaSchedulingType: "Spread" }), [["spec.placement.replicaScheduling.replicaSchedulingType", "FieldValueNotSupported"]]],
  [
    "the division preference is Aggregated or Weighted",
    P,
    pp,
    (o) => (placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Balanced" }),
    [["spec.placement.replicaScheduling.replicaDivisionPreference", "FieldValueNotSupported"]],
  ],
  [
    "the only dynamic weight factor is AvailableReplicas",
    P,
    pp,
    (o) => (placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "Random" } }),
    [["spec.placement.replicaScheduling.weightPreference.dynamicWeight", "FieldValueNotSupported"]],
  ],

  // ---- spread constraints ----
  [
    "only one spread constraint per field is allowed",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: 1 }, { spreadByField: "cluster", minGroups: 2 }]),
    [["spec.placement.spreadConstraints[1].spreadByField", "FieldValueDuplicate"]],
  ],
  [
    "spreadByField and spreadByLabel cannot both be set",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", spreadByLabel: "topology", minGroups: 1 }]),
    [["spec.placement.spreadConstraints[0].spreadByLabel", "FieldValueForbidden"]],
  ],
  [
    "maxGroups may not be lower than minGroups",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "region", minGroups: 1, maxGroups: 2 }, { spreadByField: "cluster", minGroups: 3, maxGroups: 2 }]),
    [["spec.placement.spreadConstraints[1].maxGroups", "FieldValueInvalid"]],
  ],
  ["maxGroups 0 means no upper bound", P, pp, (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: 3 }]), []],
  ["minGroups may not be negative", P, pp, (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: -1 }]), [["spec.placement.spreadConstraints[0].minGroups", "FieldValueInvalid"]]],
  [
    "a field spread constraint needs a cluster spread constraint",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "region", minGroups: 1 }]),
    [["spec.placement.spreadConstraints", "FieldValueRequired"]],
  ],
  [
    "spreadByField is cluster, region, zone or provider",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: 1 }, { spreadByField: "node", minGroups: 1 }]),
    [["spec.placement.spreadConstraints[1].spreadByField", "FieldValueNotSupported"]],
  ],
  ["a label spread constraint alone needs no cluster constraint", P, pp, (o) => (placement(o).spreadConstraints = [{ spreadByLabel: "topology", minGroups: 1 }]), []],

  // ---- cluster tolerations ----
  ["a toleration operator Lt is rejected", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Lt", value: "1", effect: "NoSchedule" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueNotSupported"]]],
  ["a toleration operator Gt is rejected", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Gt", value: "1" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueNotSupported"]]],
  ["an Exists toleration may not have a value", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Exists", value: "v" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueInvalid"]]],
  ["a toleration effect must be a taint effect", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Exists", effect: "Evict" }]), [["spec.placement.clusterTolerations[0].effect", "FieldValueNotSupported"]]],
  ["a toleration without a key must use Exists", P, pp, (o) => (placement(o).clusterTolerations = [{ operator: "Equal", value: "v" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueInvalid"]]],
  [
    "tolerationSeconds only goes with NoExecute",
    P,
    pp,
    (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Exists", effect: "NoSchedule", tolerationSeconds: 10 }]),
    [["spec.placement.clusterTolerations[0].effect", "FieldValueInvalid"]],
  ],
  ["an empty-key Exists toleration tolerates everything and is valid", P, pp, (o) => (placement(o).clusterTolerations = [{ operator: "Exists" }]), []],

  // ---- scalar enums ----
  ["conflictResolution is Abort or Overwrite", P, pp, (o) => (o.spec.conflictResolution = "Merge"), [["spec.conflictResolution", "FieldValueNotSupported"]]],
  ["preemption is Always or Never", P, pp, (o) => (o.spec.preemption = "Sometimes"), [["spec.preemption", "FieldValueNotSupported"]]],
  ["activationPreference can only be Lazy", P, pp, (o) => (o.spec.activationPreference = "Eager"), [["spec.activationPreference", "FieldValueNotSupported"]]],
  ["a dependent override needs a name", P, pp, (o) => (o.spec.dependentOverrides = [""]), [["spec.dependentOverrides[0]", "FieldValueRequired"]]],

  // ---- failover ----
  [
    "application failover needs propagateDeps",
    P,
    pp,
    (o) => (o.spec.failover = { application: { decisionConditions: { tolerationSeconds: 300 }, purgeMode: "Directly" } }),
    [["spec.propagateDeps", "FieldValueInvalid"]],
  ],
  ["the application purge mode is Directly, Gracefully or Never", P, pp, (o) => app(o, { purgeMode: "Later" }), [["spec.failover.application.purgeMode", "FieldValueNotSupported"]]],
  ["a grace period only goes with a Gracefully purge", P, pp, (o) => app(o, { purgeMode: "Directly", gracePeriodSeconds: 10 }), [["spec.failover.application.gracePeriodSeconds", "FieldValueForbidden"]]],
  ["a Gracefully purge needs a grace period", P, pp, (o) => app(o, { purgeMode: "Gracefully" }), [["spec.failover.application.gracePeriodSeconds", "FieldValueRequired"]]],
  ["a grace period must be positive", P, pp, (o) => app(o, { purgeMode: "Gracefully", gracePeriodSeconds: 0 }), [["spec.failover.application.gracePeriodSeconds", "FieldValueInvalid"]]],
  [
    "the failover toleration may not be negative",
    P,
    pp,
    (o) => app(o, { purgeMode: "Never", decisionConditions: { tolerationSeconds: -1 } }),
    [["spec.failover.application.decisionConditions.tolerationSeconds", "FieldValueInvalid"]],
  ],
  ["the legacy Graciously purge mode is still accepted", P, pp, (o) => app(o, { purgeMode: "Graciously", gracePeriodSeconds: 600 }), []],
  ["the cluster purge mode is Directly or Gracefully", P, pp, (o) => (o.spec.failover = { cluster: { purgeMode: "Never" } }), [["spec.failover.cluster.purgeMode", "FieldValueNotSupported"]]],
  [
    "a state preservation alias must be a label name",
    P,
    pp,
    (o) => app(o, { purgeMode: "Never", statePreservation: { rules: [{ aliasLabelName: "-bad", jsonPath: "{.replicas}" }] } }),
    [["spec.failover.application.statePreservation.rules[0].aliasLabelName", "FieldValueInvalid"]],
  ],
  [
    "a state preservation rule needs a JSONPath",
    P,
    pp,
    (o) => (o.spec.failover = { cluster: { statePreservation: { rules: [{ aliasLabelName: "state" }] } } }),
    [["spec.failover.cluster.statePreservation.rules[0].jsonPath", "FieldValueRequired"]],
  ],

  // ---- suspension ----
  [
    "suspending all dispatching excludes a cluster list",
    P,
    pp,
    (o) => (o.spec.suspension = { dispatching: true, dispatchingOnClusters: { clusterNames: ["member1"] } }),
    [["spec.suspension.dispatchingOnClusters.clusterNames", "FieldValueForbidden"]],
  ],

  // ---- metadata ----
  ["an object needs a name", P, pp, (o) => delete o.metadata.name, [["metadata.name", "FieldValueRequired"]]],
  [
    "a generateName stands in for the name",
    P,
    pp,
    (o) => {
      delete o.metadata.name;
      o.metadata.generateName = "nginx-";
    },
    [],
  ],
  ["a name must be a DNS subdomain", P, pp, (o) => (o.metadata.name = "Nginx_1"), [["metadata.name", "FieldValueInvalid"]]],
  ["a policy name fits in a label value", P, pp, (o) => (o.metadata.name = "a".repeat(64)), [["metadata.name", "FieldValueInvalid"]]],
  ["a namespaced kind needs a namespace", P, pp, (o) => delete o.metadata.namespace, [["metadata.namespace", "FieldValueRequired"]]],
  ["a cluster-scoped kind may not have a namespace", KARMADA.clusterPropagationPolicy, cpp, (o) => (o.metadata.namespace = "default"), [["metadata.namespace", "FieldValueForbidden"]]],
  ["a namespace must be a DNS label", P, pp, (o) => (o.metadata.namespace = "a.b"), [["metadata.namespace", "FieldValueInvalid"]]],
  ["a label key must be a qualified name", P, pp, (o) => (o.metadata.labels = { "bad key": "x" }), [["metadata.labels[bad key]", "FieldValueInvalid"]]],
  ["a label key prefix must be a DNS subdomain", P, pp, (o) => (o.metadata.labels = { "Example.com/app": "x" }), [["metadata.labels[Example.com/app]", "FieldValueInvalid"]]],
  ["a label value must be a valid label value", P, pp, (o) => (o.metadata.labels = { app: "-x" }), [["metadata.labels[app]", "FieldValueInvalid"]]],
  ["an annotation key must be a qualified name", P, pp, (o) => (o.metadata.annotations = { "a/b/c": "x" }), [["metadata.annotations[a/b/c]", "FieldValueInvalid"]]],
  ["annotations may not exceed 256 KiB in total", P, pp, (o) => (o.metadata.annotations = { big: "x".repeat(256 * 1024) }), [["metadata.annotations", "FieldValueTooLong"]]],
  ["a finalizer must be a qualified name", P, pp, (o) => (o.metadata.finalizers = ["bad finalizer"]), [["metadata.finalizers[0]", "FieldValueInvalid"]]],
  ["an owner reference needs a uid", P, pp, (o) => (o.metadata.ownerReferences = [{ apiVersion: "v1", kind: "Namespace", name: "default" }]), [["metadata.ownerReferences[0].uid", "FieldValueRequired"]]],

  // ---- clusters ----
  ["a cluster name is a DNS label", KARMADA.cluster, cluster, (o) => (o.metadata.name = "member.1"), [["metadata.name", "FieldValueInvalid"]]],
  ["a cluster name leaves room for the execution namespace prefix", KARMADA.cluster, cluster, (o) => (o.metadata.name = "a".repeat(49)), [["metadata.name", "FieldValueInvalid"]]],
  ["the sync mode is Push or Pull", KARMADA.cluster, cluster, (o) => (o.spec.syncMode = "Sideways"), [["spec.syncMode", "FieldValueNotSupported"]]],
  ["an empty sync mode is accepted", KARMADA.cluster, cluster, (o) => delete o.spec.syncMode, []],
  ["the API endpoint must be a URL", KARMADA.cluster, cluster, (o) => (o.spec.apiEndpoint = "not a url"), [["spec.apiEndpoint", "FieldValueInvalid"]]],
  ["the API endpoint may not carry a query", KARMADA.cluster, cluster, (o) => (o.spec.apiEndpoint = "https://10.0.0.1:6443?x=1"), [["spec.apiEndpoint", "FieldValueInvalid"]]],
  ["the proxy URL is http, https or socks5", KARMADA.cluster, cluster, (o) => (o.spec.proxyURL = "ftp://proxy"), [["spec.proxyURL", "FieldValueInvalid"]]],
  ["a secret reference needs a namespace", KARMADA.cluster, cluster, (o) => (o.spec.secretRef = { name: "member1" }), [["spec.secretRef.namespace", "FieldValueRequired"]]],
  ["a taint effect must be NoSchedule, PreferNoSchedule or NoExecute", KARMADA.cluster, cluster, (o) => (o.spec.taints = [{ key: "k", effect: "Evict" }]), [["spec.taints[0].effect", "FieldValueNotSupported"]]],
  ["a taint needs a key", KARMADA.cluster, cluster, (o) => (o.spec.taints = [{ effect: "NoSchedule" }]), [["spec.taints[0].key", "FieldValueRequired"]]],
  ["a taint needs an effect", KARMADA.cluster, cluster, (o) => (o.spec.taints = [{ key: "k" }]), [["spec.taints[0].effect", "FieldValueRequired"]]],
  [
    "taints are unique by key and effect",
    KARMADA.cluster,
    cluster,
    (o) => (o.spec.taints = [{ key: "k", effect: "NoSchedule" }, { key: "k", value: "v", effect: "NoSchedule" }]),
    [["spec.taints[1]", "FieldValueDuplicate"]],
  ],

  // ---- cluster resource models (as the gateway stores them: standardized, in grade order) ----
  ["standardized resource models are valid", KARMADA.cluster, modelled, () => {}, []],
  ["a model range names cpu, memory, storage or ephemeral-storage", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges[1].name = "pods"), [["spec.resourceModels[0].ranges[1].name", "FieldValueNotSupported"]]],
  ["a model range needs a name", KARMADA.cluster, modelled, (o) => ((models(o)[0].ranges[0].name = ""), (models(o)[1].ranges[0].name = ""), (models(o)[2].ranges[0].name = "")), [["spec.resourceModels[0].ranges[0].name", "FieldValueRequired"], ["spec.resourceModels[1].ranges[0].name", "FieldValueRequired"], ["spec.resourceModels[2].ranges[0].name", "FieldValueRequired"]]],
  ["a model names each resource once", KARMADA.cluster, () => modelledWith([["cpu", "memory"], ["cpu", "memory"], ["cpu", "memory"]], (m) => (m.forEach((g: Json) => (g.ranges[1].name = "cpu")))), () => {}, [["spec.resourceModels[0].ranges[1].name", "FieldValueDuplicate"], ["spec.resourceModels[1].ranges[1].name", "FieldValueDuplicate"], ["spec.resourceModels[2].ranges[1].name", "FieldValueDuplicate"]]],
  ["grades are distinct", KARMADA.cluster, modelled, (o) => (models(o)[1].grade = 0), [["spec.resourceModels[1].grade", "FieldValueDuplicate"]]],
  ["grades ascend", KARMADA.cluster, modelled, (o) => (models(o)[2].grade = 0), [["spec.resourceModels[2].grade", "FieldValueInvalid"]]],
  ["a grade is not negative", KARMADA.cluster, modelled, (o) => (models(o)[0].grade = -1), [["spec.resourceModels[0].grade", "FieldValueInvalid"]]],
  ["a model's max is greater than its min", KARMADA.cluster, modelled, (o) => ((models(o)[1].ranges[0].max = "1"), (models(o)[2].ranges[0].min = "1")), [["spec.resourceModels[1].ranges[0].max", "FieldValueInvalid"]]],
  ["the first grade's minimums are 0", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges[1].min = "1Gi"), [["spec.resourceModels[0].ranges[1].min", "FieldValueInvalid"]]],
  ["a minimum of 0m is 0", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges[0].min = "0m"), []],
  ["grades are contiguous: a gap", KARMADA.cluster, modelled, (o) => (models(o)[1].ranges[0].min = "1500m"), [["spec.resourceModels[1].ranges[0].min", "FieldValueInvalid"]]],
  ["grades are contiguous: an overlap", KARMADA.cluster, modelled, (o) => (models(o)[2].ranges[1].min = "8Gi"), [["spec.resourceModels[2].ranges[1].min", "FieldValueInvalid"]]],
  ["a bound equal in another unit is contiguous (16Gi is 17179869184)", KARMADA.cluster, modelled, (o) => (models(o)[2].ranges[1].min = "17179869184"), []],
  ["the last grade's maximums are MaxInt64", KARMADA.cluster, modelled, (o) => (models(o)[2].ranges[0].max = "1000"), [["spec.resourceModels[2].ranges[0].max", "FieldValueInvalid"]]],
  ["every grade has the same number of resources", KARMADA.cluster, modelled, (o) => models(o)[1].ranges.pop(), [["spec.resourceModels[1].ranges", "FieldValueInvalid"], ["spec.resourceModels[2].ranges", "FieldValueInvalid"]]],
  ["every grade lists the resources in the same order", KARMADA.cluster, modelled, (o) => models(o)[1].ranges.reverse(), [["spec.resourceModels[1].ranges[0].name", "FieldValueInvalid"], ["spec.resourceModels[1].ranges[1].name", "FieldValueInvalid"], ["spec.resourceModels[2].ranges[0].name", "FieldValueInvalid"], ["spec.resourceModels[2].ranges[1].name", "FieldValueInvalid"]]],
  ["a grade has at least one range", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges = []), [["spec.resourceModels[0].ranges", "FieldValueRequired"], ["spec.resourceModels[1].ranges", "FieldValueInvalid"]]],
  ["a bound is a quantity", KARMADA.cluster, modelled, (o) => (models(o)[1].ranges[1].max = "lots"), [["spec.resourceModels[1].ranges[1].max", "FieldValueInvalid"]]],
  ["a bound is required", KARMADA.cluster, modelled, (o) => delete models(o)[1].ranges[0].min, [["spec.resourceModels[1].ranges[0].min", "FieldValueRequired"]]],

  // ---- bindings and works ----
  ["a binding names its template's kind", KARMADA.resourceBinding, rb, (o) => delete o.spec.resource.kind, [["spec.resource.kind", "FieldValueRequired"]]],
  ["a binding lists each target cluster once", KARMADA.resourceBinding, rb, (o) => o.spec.clusters.push({ name: "member1", replicas: 1 }), [["spec.clusters[1].name", "FieldValueDuplicate"]]],
  ["binding replicas may not be negative", KARMADA.resourceBinding, rb, (o) => (o.spec.replicas = -1), [["spec.replicas", "FieldValueInvalid"]]],
  ["an eviction task names the cluster it evicts from", KARMADA.resourceBinding, rb, (o) => (o.spec.gracefulEvictionTasks = [{ reason: "TaintUntolerated" }]), [["spec.gracefulEvictionTasks[0].fromCluster", "FieldValueRequired"]]],
  ["a cluster resource binding has no namespace", KARMADA.clusterResourceBinding, crb, (o) => (o.metadata.namespace = "default"), [["metadata.namespace", "FieldValueForbidden"]]],
  ["a work manifest needs a kind", KARMADA.work, work, (o) => delete o.spec.workload.manifests[0].kind, [["spec.workload.manifests[0].kind", "FieldValueRequired"]]],
  ["a work lives in a namespace", KARMADA.work, work, (o) => delete o.metadata.namespace, [["metadata.namespace", "FieldValueRequired"]]],

  // ---- resource templates ----
  ["a template's spec is not checked", CORE.deployment, deployment, () => {}, []],
  ["a namespaced template needs a namespace", CORE.configMap, () => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }), () => {}, [["metadata.namespace", "FieldValueRequired"]]],
  ["an RBAC name may contain colons", CORE.clusterRole, () => ({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "system:controller:foo" } }), () => {}, []],
  ["a Namespace name is a DNS label", CORE.namespace, () => ({ apiVersion: "v1", kind: "Namespace", metadata: { name: "a.b" } }), () => {}, [["metadata.name", "FieldValueInvalid"]]],

  // ---- whole objects ----
  [
    "every problem is reported at once",
    P,
    pp,
    (o) => {
      delete o.metadata.namespace;
      o.spec.resourceSelectors = [];
      placement(o).clusterTolerations = [{ key: "k", operator: "Lt" }];
    },
    [
      ["metadata.namespace", "FieldValueRequired"],
      ["spec.resourceSelectors", "FieldValueRequired"],
      ["spec.placement.clusterTolerations[0].operator", "FieldValueNotSupported"],
    ],
  ],
  ["an undecoded object with wrong types fails on the types", P, pp, (o) => (o.spec.resourceSelectors = "Deployment"), [["spec.resourceSelectors", "FieldValueTypeInvalid"]]],
  ["an object of another kind is rejected", P, pp, (o) => (o.kind = "ClusterPropagationPolicy"), [["kind", "FieldValueInvalid"]]],
];

for (const [name, rt, base, mutate, want] of cases) {
  test(name, () => {
    const o = base();
    mutate(o);
    if (want.length === 0) {
      assert.doesNotThrow(() => validateObject(rt, o));
      return;
    }
    assert.throws(
      () => validateObject(rt, o),
      (e: unknown) => {
        assert.ok(e instanceof InvalidError, String(e));
        assert.deepEqual(e.causes.map((c) => [c.field, c.reason]), want);
        return true;
      },
    );
  });
}

test("an InvalidError names the object and lists the causes in its message", () => {
  const o = pp();
  o.spec.conflictResolution = "Merge";
  assert.throws(
    () => validateObject(P, o),
    (e: unknown) =>
      e instanceof InvalidError &&
      e.ref.name === "nginx-propagation" &&
      e.ref.kind === "PropagationPolicy" &&
      e.message === `PropagationPolicy.policy.karmada.io "nginx-propagation" is invalid: spec.conflictResolution: Unsupported value: "Merge": supported values: "Abort", "Overwrite"`,
  );
});

const SEED = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: { name: nginx-propagation, namespace: default }
spec:
  resourceSelectors: [ { apiVersion: apps/v1, kind: Deployment, name: nginx } ]
  placement:
    clusterAffinity: { clusterNames: [member1, member2] }
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - targetCluster: { clusterNames: [member1] }
            weight: 1
          - targetCluster: { clusterNames: [member2] }
            weight: 2
`;

test("the seed policy decodes, defaults and validates", () => {
  const decoded = decodeTyped(P, parse(SEED));
  const defaulted = applyDefaults(decoded, { now: new Date("2024-01-01T00:00:00Z"), uuid: () => "0f8b5b2e-0000-4000-8000-000000000001" });
  assert.doesNotThrow(() => validateObject(P, defaulted));
  const want: KubeObject = {
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "PropagationPolicy",
    metadata: { name: "nginx-propagation", namespace: "default", labels: { "propagationpolicy.karmada.io/permanent-id": "0f8b5b2e-0000-4000-8000-000000000001" } },
    spec: {
      resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx", namespace: "default" }],
      placement: {
        clusterAffinity: { clusterNames: ["member1", "member2"] },
        clusterTolerations: [
          { key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
          { key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        ],
        replicaScheduling: {
          replicaSchedulingType: "Divided",
          replicaDivisionPreference: "Weighted",
          weightPreference: {
            staticWeightList: [
              { targetCluster: { clusterNames: ["member1"] }, weight: 1 },
              { targetCluster: { clusterNames: ["member2"] }, weight: 2 },
            ],
          },
        },
      },
      priority: 0,
      preemption: "Never",
      conflictResolution: "Abort",
      schedulerName: "default-scheduler",
    },
  };
  assert.deepEqual(defaulted, want);
  // The defaulted form is itself valid decoded JSON: decoding it again changes nothing.
  assert.deepEqual(decodeTyped(P, defaulted), defaulted);
});

// Karmada v1.18's overflow example (docs/proposals: Overflow Cluster Affinities), unchanged.
const OVERFLOW = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
  namespace: default
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinities:
      - affinityName: "on-prem"
        clusterNames:
          - cluster1
        overflowAffinities:
          - affinityName: "public-cloud"
            clusterNames:
              - cluster2
              - cluster3
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        dynamicWeight: AvailableReplicas
`;

test("an upstream policy with overflowAffinities decodes, defaults and validates", () => {
  const decoded = decodeTyped(P, parse(OVERFLOW));
  assert.deepEqual(decoded.spec.placement.clusterAffinities[0].overflowAffinities, [{ affinityName: "public-cloud", clusterNames: ["cluster2", "cluster3"] }]);
  const defaulted = applyDefaults(decoded, { now: new Date("2024-01-01T00:00:00Z"), uuid: () => "0f8b5b2e-0000-4000-8000-000000000001" });
  assert.doesNotThrow(() => validateObject(P, defaulted));
});

test("upstream's default resource models pass validation", () => {
  const o = { ...cluster(), spec: { ...cluster().spec, resourceModels: defaultResourceModels() } };
  assert.doesNotThrow(() => validateObject(KARMADA.cluster, o));
});

test("resource models posted out of order are standardized before validation, which names their problems in grade order", () => {
  const posted = modelled();
  models(posted).reverse();
  models(posted)[0].ranges[0].min = "3"; // grade 2's cpu min: not grade 1's max
  models(posted)[2].ranges[1].min = "1Gi"; // grade 0's memory min: standardized to 0
  assert.throws(
    () => validateObject(KARMADA.cluster, applyDefaults(posted, { now: new Date(), uuid: () => "u" })),
    (e: unknown) => e instanceof InvalidError && JSON.stringify(e.causes.map((c) => c.field)) === JSON.stringify(["spec.resourceModels[2].ranges[0].min"]),
  );
});
