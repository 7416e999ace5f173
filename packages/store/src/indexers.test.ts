import { test } from "node:test";
import assert from "node:assert/strict";
import { STANDARD_INDEXERS, bindingIndexer, bindingOfWorkIndex, workBindingIndex, workIndexer } from "./indexers.js";

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
