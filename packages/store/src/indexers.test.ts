import { test } from "node:test";
import assert from "node:assert/strict";
import { STANDARD_INDEXERS, bindingIndexer } from "./indexers.js";

test("a binding is indexed by each scheduled cluster and each cluster it is being evicted from", () => {
  const keys = bindingIndexer({
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name: "nginx", namespace: "default" },
    spec: { clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [{ fromCluster: "member1" }] },
  });
  assert.deepEqual(keys, ["cluster:member2", "evicting", "evicting:member1"]);
});

test("a binding without clusters or tasks has no index entries", () => {
  assert.deepEqual(bindingIndexer({ apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "x" } }), []);
});

test("both binding kinds use the same indexer by default", () => {
  assert.equal(STANDARD_INDEXERS["work.karmada.io/ResourceBinding"], bindingIndexer);
  assert.equal(STANDARD_INDEXERS["work.karmada.io/ClusterResourceBinding"], bindingIndexer);
});
