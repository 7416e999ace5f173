import { test } from "node:test";
import assert from "node:assert/strict";
import type { ResourceBindingSpec } from "@flotilla/api";
import { gracefulEvictCluster, purgeModeFor, removeCluster } from "./evict.js";

const spec = (): ResourceBindingSpec => ({ replicas: 3, clusters: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }] });
const opts = { purgeMode: "Gracefully" as const, message: "m", creationTimestamp: "2026-01-01T00:00:00Z" };

test("evicting a cluster moves it from spec.clusters into a task with its replicas, producer and reason", () => {
  const s = spec();
  assert.equal(gracefulEvictCluster(s, "member1", opts), true);
  assert.deepEqual(s.clusters, [{ name: "member2", replicas: 2 }]);
  assert.deepEqual(s.gracefulEvictionTasks, [
    { fromCluster: "member1", purgeMode: "Gracefully", replicas: 1, reason: "TaintUntolerated", message: "m", producer: "TaintManager", creationTimestamp: "2026-01-01T00:00:00Z" },
  ]);
});

test("evicting a cluster the binding is not on changes nothing", () => {
  const s = spec();
  assert.equal(gracefulEvictCluster(s, "member3", opts), false);
  assert.deepEqual(s, spec());
});

test("evicting a cluster that already has a task removes it from spec.clusters and leaves that task untouched", () => {
  const s = { ...spec(), gracefulEvictionTasks: [{ fromCluster: "member1", reason: "ApplicationFailure", producer: "x" }] };
  assert.equal(gracefulEvictCluster(s, "member1", opts), true);
  assert.deepEqual(s.clusters, [{ name: "member2", replicas: 2 }]);
  assert.deepEqual(s.gracefulEvictionTasks, [{ fromCluster: "member1", reason: "ApplicationFailure", producer: "x" }]);
});

test("a non-workload entry (0 replicas) gives a task without replicas", () => {
  const s: ResourceBindingSpec = { clusters: [{ name: "member1" }] };
  gracefulEvictCluster(s, "member1", opts);
  assert.equal("replicas" in s.gracefulEvictionTasks![0], false);
});

test("purge mode Never suppresses the deletion", () => {
  const s = spec();
  gracefulEvictCluster(s, "member1", { ...opts, purgeMode: "Never" });
  assert.equal(s.gracefulEvictionTasks![0].suppressDeletion, true);
});

test("with graceful eviction off the cluster just leaves spec.clusters", () => {
  const s = spec();
  assert.equal(removeCluster(s, "member1"), true);
  assert.deepEqual(s, { replicas: 3, clusters: [{ name: "member2", replicas: 2 }] });
  assert.equal(removeCluster(s, "member1"), false);
});

const purge: Array<[string, ResourceBindingSpec["failover"], "Directly" | "Gracefully", string]> = [
  ["without failover.cluster the service default applies", undefined, "Directly", "Directly"],
  ["failover.cluster with an empty purge mode means Gracefully", { cluster: {} }, "Directly", "Gracefully"],
  ["failover.cluster.purgeMode Directly wins over the default", { cluster: { purgeMode: "Directly" } }, "Gracefully", "Directly"],
  ["failover.application alone does not count", { application: { purgeMode: "Directly" } }, "Gracefully", "Gracefully"],
];
for (const [name, failover, fallback, want] of purge) {
  test(name, () => assert.equal(purgeModeFor({ failover }, fallback), want));
}
