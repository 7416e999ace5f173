import { test } from "node:test";
import assert from "node:assert/strict";
import { STANDARD_INDEXERS, bindingDependedByIndex, bindingDependencyIndex, bindingIndexer, bindingOfWorkIndex, workAppliedOverrideIndex, workBindingIndex, workIndexer } from "./indexers.js";
import type { KubeObject } from "@flotilla/api";

test("a binding is indexed by each scheduled cluster and each cluster it is being evicted from", () => {
  const keys = bindingIndexer({
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name: "nginx", namespace: "default" },
    spec: { clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [{ fromCluster: "member1" }] },
  });
  assert.deepEqual(keys, ["cluster:member2", "evicting", "evicting:member1"]);
});

test("a binding whose policy sets application failover is indexed as such", () => {
  const keys = bindingIndexer({
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name: "nginx", namespace: "default" },
    spec: { clusters: [{ name: "member1" }], failover: { application: { purgeMode: "Directly" } } },
  });
  assert.deepEqual(keys, ["cluster:member1", "app-failover"]);
});

test("a binding without clusters or tasks has no index entries", () => {
  assert.deepEqual(bindingIndexer({ apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "x" } }), []);
});

test("both binding kinds use the same indexer by default", () => {
  assert.equal(STANDARD_INDEXERS["work.karmada.io/ResourceBinding"], bindingIndexer);
  assert.equal(STANDARD_INDEXERS["work.karmada.io/ClusterResourceBinding"], bindingIndexer);
});

const work = (annotations: Record<string, string>) => ({ apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { name: "w", namespace: "karmada-es-m1", annotations } });

const works: Array<[string, Record<string, string>, string[]]> = [
  ["a Work of a ResourceBinding is indexed by its binding's namespace and name", { "resourcebinding.karmada.io/namespace": "default", "resourcebinding.karmada.io/name": "nginx-deployment" }, ["binding:default/nginx-deployment"]],
  ["a Work of a ClusterResourceBinding is indexed by its binding's name", { "clusterresourcebinding.karmada.io/name": "ns-web" }, ["binding:ns-web"]],
  ["a Work without a binding's annotations has no entry", { other: "x" }, []],
];
for (const [name, annotations, want] of works) test(name, () => assert.deepEqual(workIndexer(work(annotations)), want));

test("a binding entry reads back as the binding; other entries do not", () => {
  assert.deepEqual(bindingOfWorkIndex(workBindingIndex({ namespace: "default", name: "a" })), { namespace: "default", name: "a" });
  assert.deepEqual(bindingOfWorkIndex(workBindingIndex({ name: "c" })), { namespace: "", name: "c" });
  assert.equal(bindingOfWorkIndex("cluster:member1"), undefined);
  assert.equal(STANDARD_INDEXERS["work.karmada.io/Work"], workIndexer);
});

const rbWithDeps = (value: string) => ({ apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "web-deployment", namespace: "default", annotations: { "resourcebinding.karmada.io/dependencies": value } } });

test("a binding is indexed by each dependency its dependencies annotation lists, as Karmada writes it", () => {
  const deps = [
    { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "web-config" },
    { apiVersion: "v1", kind: "Secret", namespace: "default", name: "web-tls" },
  ];
  assert.deepEqual(bindingIndexer(rbWithDeps(JSON.stringify(deps))), ["dependency:v1/ConfigMap/default/web-config", "dependency:v1/Secret/default/web-tls"]);
  assert.equal(bindingDependencyIndex(deps[0]!), "dependency:v1/ConfigMap/default/web-config");
  assert.notEqual(bindingDependencyIndex(deps[0]!), bindingDependencyIndex({ ...deps[0]!, kind: "Secret" }), "another kind of the same name is another dependency");
});

test("a dependencies annotation that is not a list of references gives no entries (and no error)", () => {
  for (const v of ["", "not json", "{}", "[1, null, {}]", '[{"kind":"ConfigMap"}]']) assert.deepEqual(bindingIndexer(rbWithDeps(v)), [], v);
});

const rendered = (annotations: Record<string, string>, namespace = "default") => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: "w", namespace: "karmada-es-m1", annotations: { "resourcebinding.karmada.io/namespace": namespace, "resourcebinding.karmada.io/name": "web-deployment", ...annotations } },
  spec: { workload: { manifests: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace } }] } },
});

test("a Work is indexed by the override policies its applied-overrides annotations name, an OverridePolicy in its template's namespace", () => {
  const keys = workIndexer(
    rendered({
      "policy.karmada.io/applied-cluster-overrides": JSON.stringify([{ policyName: "mirror", overriders: {} }]),
      "policy.karmada.io/applied-overrides": JSON.stringify([
        { policyName: "registry", overriders: { imageOverrider: [] } },
        { policyName: "registry", overriders: { labelsOverrider: [] } },
        { policyName: "tag", overriders: {} },
      ]),
    }),
  );
  assert.deepEqual(keys, ["binding:default/web-deployment", "cluster-override:mirror", "override:default/registry", "override:default/registry", "override:default/tag"]);
  assert.equal(workAppliedOverrideIndex({ namespace: "default", name: "registry" }), "override:default/registry");
  assert.equal(workAppliedOverrideIndex({ name: "mirror" }), "cluster-override:mirror");
});

test("applied-overrides annotations that are not lists of entries give no entries (and no error)", () => {
  for (const v of ["", "nope", "{}", "[null, 3, {}]"]) {
    assert.deepEqual(workIndexer(rendered({ "policy.karmada.io/applied-overrides": v, "policy.karmada.io/applied-cluster-overrides": v })), ["binding:default/web-deployment"], v);
  }
});

test("an attached binding is indexed by each depended-by label's key, whatever its value", () => {
  const rb = (labels: Record<string, string>): KubeObject => ({ apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "web-config-configmap", namespace: "default", labels }, spec: {} });
  assert.deepEqual(bindingIndexer(rb({ "resourcebinding.karmada.io/depended-by-5dbb6dc9c8": "some-id", "resourcebinding.karmada.io/depended-by-abc": "", app: "web" })), ["depended-by:5dbb6dc9c8", "depended-by:abc"]);
  assert.equal(bindingDependedByIndex("resourcebinding.karmada.io/depended-by-5dbb6dc9c8"), "depended-by:5dbb6dc9c8");
  assert.deepEqual(bindingIndexer(rb({ "resourcebinding.karmada.io/depended-by": "x" })), []);
});
