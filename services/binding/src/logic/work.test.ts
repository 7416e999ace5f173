import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding, KubeObject, ResourceBindingSpec } from "@flotilla/api";
import { buildWork, conflictResolution, jobCompletions, mergeWork, suspendDispatching, targetClusters } from "./work.js";

const nginx: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    name: "nginx",
    namespace: "default",
    uid: "dep-uid",
    generation: 2,
    resourceVersion: "42",
    creationTimestamp: "2024-01-01T00:00:00Z",
    labels: { app: "nginx", "propagationpolicy.karmada.io/permanent-id": "pp-id" },
    annotations: { "propagationpolicy.karmada.io/name": "nginx-propagation", "propagationpolicy.karmada.io/namespace": "default" },
    ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "x" }],
    finalizers: ["example.com/keep"],
    managedFields: [{}],
  } as KubeObject["metadata"],
  spec: { replicas: 3, selector: { matchLabels: { app: "nginx" } }, template: { metadata: { labels: { app: "nginx" } }, spec: { containers: [{ name: "nginx", image: "nginx" }] } } },
  status: { replicas: 3 },
};

const binding = (spec: ResourceBindingSpec, kind = "ResourceBinding"): AnyResourceBinding => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind,
  metadata: { name: "nginx-deployment", ...(kind === "ResourceBinding" ? { namespace: "default" } : {}), labels: { [kind === "ResourceBinding" ? "resourcebinding.karmada.io/permanent-id" : "clusterresourcebinding.karmada.io/permanent-id"]: "rb-id" } },
  spec: { replicas: 3, ...spec },
});

const divided = { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } };

test("the seed's Works: one per cluster, named as upstream, with that cluster's replicas", () => {
  const b = binding({ placement: divided, clusters: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }] });
  const works = targetClusters(b.spec).map((target) => buildWork({ template: nginx, binding: b, target, workId: `w-${target.name}` }));
  assert.deepEqual(
    works.map((w) => [w.metadata.namespace, w.metadata.name, (w.spec?.workload?.manifests?.[0] as { spec: { replicas: number } }).spec.replicas]),
    [
      ["karmada-es-member1", "nginx-687f7fb96f", 1],
      ["karmada-es-member2", "nginx-687f7fb96f", 2],
    ],
  );
  const w = works[0]!;
  assert.deepEqual(w.metadata.labels, { "resourcebinding.karmada.io/permanent-id": "rb-id", "work.karmada.io/permanent-id": "w-member1" });
  assert.deepEqual(w.metadata.annotations, { "resourcebinding.karmada.io/namespace": "default", "resourcebinding.karmada.io/name": "nginx-deployment", "work.karmada.io/conflict-resolution": "abort" });
  assert.deepEqual(w.metadata.finalizers, ["karmada.io/execution-controller"]);
  assert.equal(w.spec?.suspendDispatching, false);
  assert.equal(w.spec?.preserveResourcesOnDeletion, false);
  const m = w.spec!.workload!.manifests![0] as KubeObject;
  assert.deepEqual(Object.keys(m.metadata).sort(), ["annotations", "labels", "name", "namespace"], "server fields, owner references and finalizers are gone");
  assert.equal(m.status, undefined, "the status is gone");
  assert.deepEqual(m.metadata.labels, {
    app: "nginx",
    "propagationpolicy.karmada.io/permanent-id": "pp-id",
    "resourcebinding.karmada.io/permanent-id": "rb-id",
    "karmada.io/managed": "true",
    "work.karmada.io/permanent-id": "w-member1",
  });
  assert.deepEqual(m.metadata.annotations, {
    "propagationpolicy.karmada.io/name": "nginx-propagation",
    "propagationpolicy.karmada.io/namespace": "default",
    "resourcetemplate.karmada.io/generation": "2",
    "resourcebinding.karmada.io/namespace": "default",
    "resourcebinding.karmada.io/name": "nginx-deployment",
    "work.karmada.io/conflict-resolution": "abort",
    "resourcetemplate.karmada.io/uid": "dep-uid",
    "work.karmada.io/name": "nginx-687f7fb96f",
    "work.karmada.io/namespace": "karmada-es-member1",
    "resourcetemplate.karmada.io/managed-annotations":
      "propagationpolicy.karmada.io/name,propagationpolicy.karmada.io/namespace,resourcebinding.karmada.io/name,resourcebinding.karmada.io/namespace,resourcetemplate.karmada.io/generation,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/uid,work.karmada.io/conflict-resolution,work.karmada.io/name,work.karmada.io/namespace",
    "resourcetemplate.karmada.io/managed-labels": "app,karmada.io/managed,propagationpolicy.karmada.io/permanent-id,resourcebinding.karmada.io/permanent-id,work.karmada.io/permanent-id",
  });
  assert.equal(nginx.spec.replicas, 3, "the template itself is untouched");
});

test("replica revision per kind and strategy", () => {
  const manifestSpec = (t: KubeObject, spec: ResourceBindingSpec, cluster = "member1", completions?: number) => {
    const b = binding(spec);
    const target = targetClusters(b.spec).find((c) => c.name === cluster)!;
    return (buildWork({ template: t, binding: b, target, workId: "w", completions }).spec!.workload!.manifests![0] as KubeObject).spec;
  };
  const job: KubeObject = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "pi", namespace: "default", uid: "job-uid" }, spec: { parallelism: 4, completions: 10, ttlSecondsAfterFinished: 60, selector: { matchLabels: { "controller-uid": "u" } }, template: { metadata: { labels: { "controller-uid": "u", app: "pi" } }, spec: {} } } };
  const sts: KubeObject = { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "db", namespace: "default" }, spec: { replicas: 5 } };
  const cm: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "default" }, data: { a: "b" } };
  const two = [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 3 }];
  assert.equal(manifestSpec(nginx, { placement: divided, clusters: two }).replicas, 1, "Divided: the cluster's share");
  assert.equal(manifestSpec(nginx, { placement: {}, clusters: [{ name: "member1", replicas: 3 }] }).replicas, 3, "Duplicated: the cluster's TargetCluster.replicas (the full count)");
  assert.equal(manifestSpec(nginx, { placement: {}, clusters: [{ name: "member1", replicas: 2 }] }).replicas, 2, "Duplicated uses the scheduled count, never the template's");
  assert.equal(manifestSpec(nginx, { replicas: 0, placement: {}, clusters: [{ name: "member1" }] }).replicas, 3, "a binding without replicas leaves the template's count");
  assert.equal(manifestSpec(sts, { placement: divided, clusters: two }, "member2").replicas, 3, "a StatefulSet is revised too");
  assert.deepEqual(manifestSpec(job, { placement: divided, clusters: two }, "member2", 7), { parallelism: 3, completions: 7, template: { metadata: { labels: { app: "pi" } }, spec: {} } }, "a Job gets parallelism and its completions; the generated selector and TTL are pruned");
  assert.equal((buildWork({ template: cm, binding: binding({ replicas: undefined, clusters: [{ name: "member1" }] }), target: { name: "member1" }, workId: "w" }).spec!.workload!.manifests![0] as KubeObject).data !== undefined, true, "a ConfigMap is carried as is");
});

test("a Job's completions are split by Webster over the Divided replicas", () => {
  const job: KubeObject = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "pi", namespace: "default", uid: "" }, spec: { parallelism: 4, completions: 10 } };
  const spec: ResourceBindingSpec = { replicas: 4, placement: divided, clusters: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 3 }] };
  assert.deepEqual([...jobCompletions(job, spec, targetClusters(spec))!], [["member1", 3], ["member2", 7]]);
  assert.equal(jobCompletions(job, { ...spec, placement: {} }, targetClusters(spec)), undefined, "not when Duplicated");
  assert.equal(jobCompletions({ ...job, spec: { parallelism: 4 } }, spec, targetClusters(spec)), undefined, "not for a work-queue Job without completions");
});

test("target clusters add requiredBy's clusters once", () => {
  assert.deepEqual(
    targetClusters({ clusters: [{ name: "a", replicas: 1 }], requiredBy: [{ name: "x", clusters: [{ name: "a" }, { name: "b" }] }, { name: "y", clusters: [{ name: "b" }, { name: "c" }] }] }),
    [{ name: "a", replicas: 1 }, { name: "b" }, { name: "c" }],
  );
});

test("conflict resolution: the template's annotation, then the binding, else abort", () => {
  const withAnn = (v: string) => ({ ...nginx, metadata: { ...nginx.metadata, annotations: { "work.karmada.io/conflict-resolution": v } } });
  const cases: [string, KubeObject, ResourceBindingSpec, string][] = [
    ["the template says overwrite", withAnn("overwrite"), { conflictResolution: "Abort" }, "overwrite"],
    ["the template says abort", withAnn("abort"), { conflictResolution: "Overwrite" }, "abort"],
    ["an invalid template value is ignored", withAnn("maybe"), { conflictResolution: "Overwrite" }, "overwrite"],
    ["the binding says Overwrite", nginx, { conflictResolution: "Overwrite" }, "overwrite"],
    ["nothing said: abort", nginx, {}, "abort"],
  ];
  for (const [name, t, spec, want] of cases) assert.equal(conflictResolution(t, spec), want, name);
});

test("suspended dispatching: all clusters or the named ones", () => {
  const cases: [string, ResourceBindingSpec, string, boolean][] = [
    ["no suspension", {}, "m1", false],
    ["dispatching suspended everywhere", { suspension: { dispatching: true } }, "m1", true],
    ["suspended on this cluster", { suspension: { dispatchingOnClusters: { clusterNames: ["m1"] } } }, "m1", true],
    ["suspended on another cluster only", { suspension: { dispatchingOnClusters: { clusterNames: ["m2"] } } }, "m1", false],
    ["dispatching explicitly not suspended", { suspension: { dispatching: false } }, "m1", false],
  ];
  for (const [name, spec, cluster, want] of cases) assert.equal(suspendDispatching(spec, cluster), want, name);
  const b = binding({ suspension: { dispatchingOnClusters: { clusterNames: ["member2"] } }, preserveResourcesOnDeletion: true, clusters: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }] });
  const works = targetClusters(b.spec).map((target) => buildWork({ template: nginx, binding: b, target, workId: "w" }));
  assert.deepEqual(works.map((w) => [w.spec?.suspendDispatching, w.spec?.preserveResourcesOnDeletion]), [[false, true], [true, true]], "the Work spec carries both");
});

test("a cluster-scoped binding's Works link back by name only", () => {
  const role: KubeObject = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "system:reader", uid: "r" }, rules: [] };
  const w = buildWork({ template: role, binding: binding({ replicas: undefined, clusters: [{ name: "member1" }] }, "ClusterResourceBinding"), target: { name: "member1" }, workId: "w" });
  assert.equal(w.metadata.name, "system.reader-" + w.metadata.name!.split("-").pop());
  assert.deepEqual(w.metadata.labels, { "clusterresourcebinding.karmada.io/permanent-id": "rb-id", "work.karmada.io/permanent-id": "w" });
  assert.deepEqual(w.metadata.annotations, { "clusterresourcebinding.karmada.io/name": "nginx-deployment", "work.karmada.io/conflict-resolution": "abort" });
});

test("updating a Work keeps what others put on it", () => {
  const b = binding({ clusters: [{ name: "member1", replicas: 3 }] });
  const desired = buildWork({ template: nginx, binding: b, target: { name: "member1", replicas: 3 }, workId: "w" });
  const existing = { ...desired, metadata: { ...desired.metadata, resourceVersion: "5", labels: { ...desired.metadata.labels, extra: "x" }, finalizers: ["other", "karmada.io/execution-controller"] }, status: { conditions: [{ type: "Applied", status: "True" }] } };
  const merged = mergeWork(existing, { ...desired, spec: { ...desired.spec, suspendDispatching: true } });
  assert.equal(merged.metadata.labels?.extra, "x");
  assert.deepEqual(merged.metadata.finalizers, ["other", "karmada.io/execution-controller"]);
  assert.equal(merged.metadata.resourceVersion, "5");
  assert.equal(merged.spec?.suspendDispatching, true);
  assert.deepEqual(merged.status, existing.status);
});

test("overrides apply after the cluster's replicas and before the Karmada labels; the Work records them, the manifest does not", () => {
  const b = binding({ placement: divided, clusters: [{ name: "member1", replicas: 1 }] });
  const w = buildWork({
    template: nginx,
    binding: b,
    target: { name: "member1", replicas: 1 },
    workId: "w1",
    overrides: {
      cluster: [{ policyName: "all", overriders: { labelsOverrider: [{ operator: "add", value: { tier: "web" } }] } }],
      namespaced: [{ policyName: "nginx", overriders: { plaintext: [{ path: "/spec/replicas", operator: "replace", value: 7 }], imageOverrider: [{ component: "Tag", operator: "replace", value: "1.25" }] } }],
    },
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const m = w.spec?.workload?.manifests?.[0] as any;
  assert.equal(m.spec.replicas, 7);
  assert.equal(m.spec.template.spec.containers[0].image, "nginx:1.25");
  assert.equal(m.metadata.labels.tier, "web");
  assert.ok(m.metadata.annotations["resourcetemplate.karmada.io/managed-labels"].split(",").includes("tier"));
  assert.equal(m.metadata.annotations["policy.karmada.io/applied-overrides"], undefined);
  assert.equal(w.metadata.annotations?.["policy.karmada.io/applied-cluster-overrides"], '[{"policyName":"all","overriders":{"labelsOverrider":[{"operator":"add","value":{"tier":"web"}}]}}]');
  assert.equal(
    w.metadata.annotations?.["policy.karmada.io/applied-overrides"],
    '[{"policyName":"nginx","overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":7}],"imageOverrider":[{"component":"Tag","operator":"replace","value":"1.25"}]}}]',
  );
});

test("without overrides a Work has no applied-overrides annotations", () => {
  const b = binding({ clusters: [{ name: "member1", replicas: 3 }] });
  const w = buildWork({ template: nginx, binding: b, target: { name: "member1", replicas: 3 }, workId: "w1", overrides: { cluster: [], namespaced: [] } });
  assert.equal(w.metadata.annotations?.["policy.karmada.io/applied-overrides"], undefined);
  assert.equal(w.metadata.annotations?.["policy.karmada.io/applied-cluster-overrides"], undefined);
});

test("preserved state: injected as labels into the only target's copy when the last task is Directly and the target is new", () => {
  const task = { fromCluster: "member1", purgeMode: "Directly", reason: "ApplicationFailure", preservedLabelState: { "failover.karmada.io/replicas": "3" }, clustersBeforeFailover: ["member1"] };
  const cases: [string, ResourceBindingSpec, number, Record<string, string> | undefined][] = [
    ["Directly, one target, a new cluster: injected", { gracefulEvictionTasks: [task] }, 1, { "failover.karmada.io/replicas": "3" }],
    ["more than one target: not injected", { gracefulEvictionTasks: [task] }, 2, undefined],
    ["the last task Gracefully: not injected", { gracefulEvictionTasks: [task, { ...task, fromCluster: "member3", purgeMode: "Gracefully" }] }, 1, undefined],
    ["an earlier Directly task does not count, the last one does", { gracefulEvictionTasks: [{ ...task, preservedLabelState: { a: "old" } }, { ...task, fromCluster: "member3", preservedLabelState: { a: "new" } }] }, 1, { a: "new" }],
    ["the target ran the workload before the failover: not injected", { gracefulEvictionTasks: [{ ...task, clustersBeforeFailover: ["member1", "member2"] }] }, 1, undefined],
    ["no preserved state: nothing", { gracefulEvictionTasks: [{ ...task, preservedLabelState: {} }] }, 1, undefined],
    ["no tasks: nothing", {}, 1, undefined],
  ];
  for (const [name, spec, count, want] of cases) {
    const b = binding({ ...spec, clusters: [{ name: "member2", replicas: 3 }] });
    const w = buildWork({ template: nginx, binding: b, target: { name: "member2", replicas: 3 }, workId: "w", targetCount: count });
    const labels = (w.spec?.workload?.manifests?.[0] as { metadata: { labels: Record<string, string> } }).metadata.labels;
    const got = Object.fromEntries(Object.entries(labels).filter(([k]) => k === "a" || k.startsWith("failover.karmada.io/")));
    assert.deepEqual(got, want ?? {}, name);
  }
});
