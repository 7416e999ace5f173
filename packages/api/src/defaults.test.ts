import { test } from "node:test";
import assert from "node:assert/strict";
import { applyDefaults, type DefaultsOptions, type KubeObject } from "@flotilla/api";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const NOW = new Date("2024-05-06T07:08:09.876Z");
const opts: DefaultsOptions = { now: NOW, uuid: () => "11111111-2222-3333-4444-555555555555" };
const NOT_READY = { key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 };
const UNREACHABLE = { key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 };

const pp = (spec: Json = {}, metadata: Json = {}): KubeObject => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "p", namespace: "default", ...metadata },
  spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }], ...spec },
});
const cpp = (spec: Json = {}): KubeObject => ({ ...pp(spec), kind: "ClusterPropagationPolicy", metadata: { name: "p" } });

const get = (o: Json, path: string): Json => path.split(".").reduce((v, k) => (v === undefined ? undefined : v[k]), o);

// ---- [case, input, options, path into the result, expected value] ----
const clusterWithModels = (resourceModels: Json[]): KubeObject => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: { syncMode: "Push", resourceModels } });

const cases: Array<[string, KubeObject, DefaultsOptions, string, Json]> = [
  // tolerations
  ["a policy gets the not-ready and unreachable NoExecute tolerations for 300 seconds", pp(), opts, "spec.placement.clusterTolerations", [NOT_READY, UNREACHABLE]],
  [
    "the toleration seconds come from the options",
    pp(),
    { ...opts, notReadyTolerationSeconds: 60, unreachableTolerationSeconds: 30 },
    "spec.placement.clusterTolerations",
    [{ ...NOT_READY, tolerationSeconds: 60 }, { ...UNREACHABLE, tolerationSeconds: 30 }],
  ],
  ["a null setting adds no toleration for that taint", pp(), { ...opts, notReadyTolerationSeconds: null }, "spec.placement.clusterTolerations", [UNREACHABLE]],
  [
    "a user toleration with the same key, effect, operator and value replaces the default",
    pp({ placement: { clusterTolerations: [{ ...NOT_READY, tolerationSeconds: 600 }] } }),
    opts,
    "spec.placement.clusterTolerations",
    [{ ...NOT_READY, tolerationSeconds: 600 }, UNREACHABLE],
  ],
  [
    "a catch-all toleration with an empty key does not replace the defaults",
    pp({ placement: { clusterTolerations: [{ operator: "Exists" }] } }),
    opts,
    "spec.placement.clusterTolerations",
    [{ operator: "Exists" }, NOT_READY, UNREACHABLE],
  ],
  [
    "an Equal toleration for the same key does not replace the default",
    pp({ placement: { clusterTolerations: [{ key: "cluster.karmada.io/not-ready", operator: "Equal", effect: "NoExecute" }] } }),
    opts,
    "spec.placement.clusterTolerations",
    [{ key: "cluster.karmada.io/not-ready", operator: "Equal", effect: "NoExecute" }, NOT_READY, UNREACHABLE],
  ],
  [
    "a toleration for the same key with another effect does not replace the default",
    pp({ placement: { clusterTolerations: [{ key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoSchedule" }] } }),
    opts,
    "spec.placement.clusterTolerations",
    [{ key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoSchedule" }, NOT_READY, UNREACHABLE],
  ],
  ["a cluster propagation policy gets the tolerations too", cpp(), opts, "spec.placement.clusterTolerations", [NOT_READY, UNREACHABLE]],
  // spread constraints
  [
    "a spread constraint without field or label spreads by cluster with at least one group",
    pp({ placement: { spreadConstraints: [{ maxGroups: 2 }] } }),
    opts,
    "spec.placement.spreadConstraints",
    [{ spreadByField: "cluster", minGroups: 1, maxGroups: 2 }],
  ],
  ["maxGroups is not defaulted", pp({ placement: { spreadConstraints: [{ spreadByField: "region" }] } }), opts, "spec.placement.spreadConstraints", [{ spreadByField: "region", minGroups: 1 }]],
  ["a label spread constraint gets no field", pp({ placement: { spreadConstraints: [{ spreadByLabel: "topology", minGroups: 2 }] } }), opts, "spec.placement.spreadConstraints", [{ spreadByLabel: "topology", minGroups: 2 }]],
  // replica scheduling
  ["a Divided policy without a division preference is Weighted", pp({ placement: { replicaScheduling: { replicaSchedulingType: "Divided" } } }), opts, "spec.placement.replicaScheduling", { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" }],
  ["an empty replica scheduling is Divided and Weighted", pp({ placement: { replicaScheduling: {} } }), opts, "spec.placement.replicaScheduling", { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" }],
  ["a Duplicated policy gets no division preference", pp({ placement: { replicaScheduling: { replicaSchedulingType: "Duplicated" } } }), opts, "spec.placement.replicaScheduling", { replicaSchedulingType: "Duplicated" }],
  ["an Aggregated preference is kept", pp({ placement: { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" } } }), opts, "spec.placement.replicaScheduling.replicaDivisionPreference", "Aggregated"],
  ["a policy without replica scheduling stays without (nil means Duplicated)", pp(), opts, "spec.placement.replicaScheduling", undefined],
  // resource selectors
  [
    "a propagation policy's selectors default to its namespace",
    pp({ resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap" }, { apiVersion: "v1", kind: "Secret", namespace: "other" }] }),
    opts,
    "spec.resourceSelectors",
    [{ apiVersion: "v1", kind: "ConfigMap", namespace: "default" }, { apiVersion: "v1", kind: "Secret", namespace: "other" }],
  ],
  ["a cluster propagation policy's selectors get no namespace", cpp(), opts, "spec.resourceSelectors", [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }]],
  ["a ServiceImport selector turns on propagateDeps", pp({ resourceSelectors: [{ apiVersion: "multicluster.x-k8s.io/v1alpha1", kind: "ServiceImport", name: "s" }] }), opts, "spec.propagateDeps", true],
  // scalar spec defaults
  ["schedulerName defaults to default-scheduler", pp(), opts, "spec.schedulerName", "default-scheduler"],
  ["an explicit schedulerName is kept", pp({ schedulerName: "mine" }), opts, "spec.schedulerName", "mine"],
  ["conflictResolution defaults to Abort", pp(), opts, "spec.conflictResolution", "Abort"],
  ["an explicit conflictResolution is kept", pp({ conflictResolution: "Overwrite" }), opts, "spec.conflictResolution", "Overwrite"],
  ["preemption defaults to Never", pp(), opts, "spec.preemption", "Never"],
  ["priority defaults to 0", pp(), opts, "spec.priority", 0],
  ["an explicit priority is kept", pp({ priority: 5 }), opts, "spec.priority", 5],
  // failover
  [
    "application failover defaults to a graceful purge after 300 s with a 600 s grace period",
    pp({ propagateDeps: true, failover: { application: {} } }),
    opts,
    "spec.failover.application",
    { decisionConditions: { tolerationSeconds: 300 }, purgeMode: "Gracefully", gracePeriodSeconds: 600 },
  ],
  ["a Directly purge gets no grace period", pp({ failover: { application: { purgeMode: "Directly" } } }), opts, "spec.failover.application", { decisionConditions: { tolerationSeconds: 300 }, purgeMode: "Directly" }],
  ["an explicit grace period and toleration are kept", pp({ failover: { application: { decisionConditions: { tolerationSeconds: 0 }, gracePeriodSeconds: 30 } } }), opts, "spec.failover.application", { decisionConditions: { tolerationSeconds: 0 }, purgeMode: "Gracefully", gracePeriodSeconds: 30 }],
  ["the legacy Graciously purge mode is spelled Gracefully", pp({ failover: { application: { purgeMode: "Graciously" } } }), opts, "spec.failover.application.purgeMode", "Gracefully"],
  ["the legacy Immediately purge mode is spelled Directly", pp({ failover: { application: { purgeMode: "Immediately" } } }), opts, "spec.failover.application.purgeMode", "Directly"],
  ["cluster failover defaults to a graceful purge", pp({ failover: { cluster: {} } }), opts, "spec.failover.cluster", { purgeMode: "Gracefully" }],
  ["a policy without failover gets none", pp(), opts, "spec.failover", undefined],
  // permanent ids
  ["a propagation policy gets a permanent id", pp(), opts, "metadata.labels", { "propagationpolicy.karmada.io/permanent-id": "11111111-2222-3333-4444-555555555555" }],
  ["a cluster propagation policy gets its own permanent-id label", cpp(), opts, "metadata.labels", { "clusterpropagationpolicy.karmada.io/permanent-id": "11111111-2222-3333-4444-555555555555" }],
  ["an existing permanent id is kept", pp({}, { labels: { "propagationpolicy.karmada.io/permanent-id": "keep", app: "x" } }), opts, "metadata.labels", { "propagationpolicy.karmada.io/permanent-id": "keep", app: "x" }],
  [
    "a resource binding gets a permanent id",
    { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "b", namespace: "d" } },
    opts,
    "metadata.labels",
    { "resourcebinding.karmada.io/permanent-id": "11111111-2222-3333-4444-555555555555" },
  ],
  [
    "a cluster resource binding gets its own permanent-id label",
    { apiVersion: "work.karmada.io/v1alpha2", kind: "ClusterResourceBinding", metadata: { name: "b" } },
    opts,
    "metadata.labels",
    { "clusterresourcebinding.karmada.io/permanent-id": "11111111-2222-3333-4444-555555555555" },
  ],
  [
    "a work gets a permanent id",
    { apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { name: "w", namespace: "karmada-es-m1" } },
    opts,
    "metadata.labels",
    { "work.karmada.io/permanent-id": "11111111-2222-3333-4444-555555555555" },
  ],
  // clusters
  ["a cluster's legacy zone moves into zones", { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: { zone: "z1" } }, opts, "spec", { zones: ["z1"] }],
  ["a legacy zone is left alone when zones is set", { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: { zone: "z1", zones: ["z2"] } }, opts, "spec", { zone: "z1", zones: ["z2"] }],
  [
    "a NoExecute taint without timeAdded is stamped with now at second precision",
    { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: { taints: [{ key: "k", effect: "NoExecute" }, { key: "k", effect: "NoSchedule" }, { key: "j", effect: "NoExecute", timeAdded: "2020-01-01T00:00:00Z" }] } },
    opts,
    "spec.taints",
    [{ key: "k", effect: "NoExecute", timeAdded: "2024-05-06T07:08:09Z" }, { key: "k", effect: "NoSchedule" }, { key: "j", effect: "NoExecute", timeAdded: "2020-01-01T00:00:00Z" }],
  ],
  ["a policy built in code without an apiVersion is still defaulted", { apiVersion: "", kind: "PropagationPolicy", metadata: { name: "p", namespace: "default" } }, opts, "spec.schedulerName", "default-scheduler"],
  ["a cluster gets no permanent id", { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" } }, opts, "metadata.labels", undefined],
  // cluster resource models
  [
    "resource models are sorted by grade, the first grade's minimums set to 0 and the last grade's maximums to MaxInt64",
    clusterWithModels([
      { grade: 2, ranges: [{ name: "cpu", min: "2", max: "4" }, { name: "memory", min: "16Gi", max: "32Gi" }] },
      { grade: 0, ranges: [{ name: "cpu", min: "1", max: "1" }, { name: "memory", min: "1Gi", max: "4Gi" }] },
      { grade: 1, ranges: [{ name: "cpu", min: "1", max: "2" }, { name: "memory", min: "4Gi", max: "16Gi" }] },
    ]),
    opts,
    "spec.resourceModels",
    [
      { grade: 0, ranges: [{ name: "cpu", min: "0", max: "1" }, { name: "memory", min: "0", max: "4Gi" }] },
      { grade: 1, ranges: [{ name: "cpu", min: "1", max: "2" }, { name: "memory", min: "4Gi", max: "16Gi" }] },
      { grade: 2, ranges: [{ name: "cpu", min: "2", max: "9223372036854775807" }, { name: "memory", min: "16Gi", max: "9223372036854775807" }] },
    ],
  ],
  [
    "a single grade spans everything",
    clusterWithModels([{ grade: 5, ranges: [{ name: "cpu", min: "3", max: "4" }] }]),
    opts,
    "spec.resourceModels",
    [{ grade: 5, ranges: [{ name: "cpu", min: "0", max: "9223372036854775807" }] }],
  ],
  ["a cluster without resource models gets none by default", { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: {} }, opts, "spec.resourceModels", undefined],
  [
    "with the modeling defaults on, a cluster without resource models gets upstream's nine grades",
    { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" } },
    { ...opts, defaultClusterResourceModels: true },
    "spec.resourceModels",
    [
      ["0", "1", "0", "4Gi"],
      ["1", "2", "4Gi", "16Gi"],
      ["2", "4", "16Gi", "32Gi"],
      ["4", "8", "32Gi", "64Gi"],
      ["8", "16", "64Gi", "128Gi"],
      ["16", "32", "128Gi", "256Gi"],
      ["32", "64", "256Gi", "512Gi"],
      ["64", "128", "512Gi", "1024Gi"],
      ["128", "9223372036854775807", "1024Gi", "9223372036854775807"],
    ].map(([cmin, cmax, mmin, mmax], grade) => ({ grade, ranges: [{ name: "cpu", min: cmin, max: cmax }, { name: "memory", min: mmin, max: mmax }] })),
  ],
  [
    "with the modeling defaults on, a cluster's own models are kept (standardized)",
    clusterWithModels([{ grade: 0, ranges: [{ name: "cpu", min: "0", max: "8" }] }, { grade: 1, ranges: [{ name: "cpu", min: "8", max: "9" }] }]),
    { ...opts, defaultClusterResourceModels: true },
    "spec.resourceModels",
    [{ grade: 0, ranges: [{ name: "cpu", min: "0", max: "8" }] }, { grade: 1, ranges: [{ name: "cpu", min: "8", max: "9223372036854775807" }] }],
  ],
];
for (const [name, input, o, path, want] of cases) {
  test(name, () => assert.deepEqual(get(applyDefaults(input, o), path), want));
}

test("defaulting does not modify its input", () => {
  const input = pp({ placement: { spreadConstraints: [{}] } });
  const before = structuredClone(input);
  const out = applyDefaults(input, opts);
  assert.deepEqual(input, before);
  assert.notDeepEqual(out, before);
});

test("defaulting twice changes nothing more", () => {
  const once = applyDefaults(pp({ placement: { spreadConstraints: [{}], replicaScheduling: {} }, failover: { application: {}, cluster: {} } }), opts);
  assert.deepEqual(applyDefaults(once, { ...opts, uuid: () => "other" }), once);
});

test("a resource template is returned unchanged", () => {
  const d = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default" }, spec: { replicas: 2 } };
  assert.deepEqual(applyDefaults(d, opts), d);
});
