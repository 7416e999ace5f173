import { test } from "node:test";
import assert from "node:assert/strict";
import type { ResourceBindingSpec, Work } from "@flotilla/api";
import { keptClusters, orphanWorks, worksBlockingDirectPurge } from "./orphans.js";

const work = (cluster: string, deleting = false): Work => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: "nginx-687f7fb96f", namespace: `karmada-es-${cluster}`, ...(deleting ? { deletionTimestamp: "2024-01-01T00:00:00Z" } : {}) },
});
const names = (ws: Work[]) => ws.map((w) => w.metadata.namespace!.replace("karmada-es-", "")).sort();

test("orphan works: only clusters neither scheduled, required nor held by a non-Directly eviction task", () => {
  const all = ["m1", "m2", "m3", "m4", "m5"].map((c) => work(c));
  const cases: [string, ResourceBindingSpec, string[]][] = [
    ["a cluster dropped from spec.clusters loses its Work", { clusters: [{ name: "m1" }, { name: "m2" }] }, ["m3", "m4", "m5"]],
    ["requiredBy keeps its clusters", { clusters: [{ name: "m1" }], requiredBy: [{ name: "x", clusters: [{ name: "m2" }] }] }, ["m3", "m4", "m5"]],
    ["a Gracefully eviction task keeps its cluster's Work", { clusters: [{ name: "m1" }], gracefulEvictionTasks: [{ fromCluster: "m2", purgeMode: "Gracefully" }] }, ["m3", "m4", "m5"]],
    ["a Never eviction task keeps it too", { clusters: [{ name: "m1" }], gracefulEvictionTasks: [{ fromCluster: "m2", purgeMode: "Never" }] }, ["m3", "m4", "m5"]],
    ["a task without purge mode keeps it", { clusters: [{ name: "m1" }], gracefulEvictionTasks: [{ fromCluster: "m2" }] }, ["m3", "m4", "m5"]],
    ["a Directly eviction task does not protect its cluster", { clusters: [{ name: "m1" }], gracefulEvictionTasks: [{ fromCluster: "m2", purgeMode: "Directly" }] }, ["m2", "m3", "m4", "m5"]],
    ["no clusters at all: every Work is an orphan", {}, ["m1", "m2", "m3", "m4", "m5"]],
  ];
  for (const [name, spec, want] of cases) assert.deepEqual(names(orphanWorks(all, spec)), want, name);
  assert.deepEqual(names(orphanWorks([work("m1", true), work("m2")], {})), ["m2"], "a Work already being deleted is not deleted again");
  assert.deepEqual([...keptClusters({ clusters: [{ name: "a" }], requiredBy: [{ clusters: [{ name: "b" }] }], gracefulEvictionTasks: [{ fromCluster: "c", purgeMode: "Gracefully" }, { fromCluster: "d", purgeMode: "Directly" }] })].sort(), ["a", "b", "c"]);
});

test("while a Directly-purged cluster still has its Work, the sync waits", () => {
  const spec: ResourceBindingSpec = { clusters: [{ name: "m1" }], gracefulEvictionTasks: [{ fromCluster: "m2", purgeMode: "Directly" }] };
  assert.deepEqual(names(worksBlockingDirectPurge([work("m1"), work("m2", true)], spec)), ["m2"], "a deleting Work still blocks");
  assert.deepEqual(worksBlockingDirectPurge([work("m1")], spec), [], "once it is gone the sync goes on");
  assert.deepEqual(worksBlockingDirectPurge([work("m1"), work("m2")], { ...spec, clusters: [{ name: "m1" }, { name: "m2" }] }), [], "a Directly cluster scheduled again is not waited for");
});

test("a Directly application-failure task keeps the last running copy until a replacement reports Healthy (Karmada #7455)", () => {
  const all = ["m1", "m2", "m3"].map((c) => work(c));
  const app = { fromCluster: "m1", purgeMode: "Directly", reason: "ApplicationFailure" };
  const spec: ResourceBindingSpec = { clusters: [{ name: "m2" }], gracefulEvictionTasks: [app] };
  const health = (h: Record<string, string>) => ({ aggregatedStatus: Object.entries(h).map(([clusterName, health]) => ({ clusterName, health })) });
  const cases: [string, ResourceBindingSpec, ReturnType<typeof health> | undefined, string[]][] = [
    ["nothing scheduled elsewhere: the old copy stays", { gracefulEvictionTasks: [app] }, health({ m1: "Unhealthy" }), ["m2", "m3"]],
    ["the replacement not healthy yet: the old copy stays", spec, health({ m1: "Unhealthy", m2: "Unknown" }), ["m3"]],
    ["no status at all: the old copy stays", spec, undefined, ["m3"]],
    ["the replacement Healthy: the old copy goes", spec, health({ m1: "Unhealthy", m2: "Healthy" }), ["m1", "m3"]],
    ["a Healthy report from the evicted cluster itself is no replacement", spec, health({ m1: "Healthy", m2: "Unhealthy" }), ["m3"]],
    ["a Directly taint eviction still goes at once", { clusters: [{ name: "m2" }], gracefulEvictionTasks: [{ ...app, reason: "TaintUntolerated" }] }, health({ m2: "Unknown" }), ["m1", "m3"]],
  ];
  for (const [name, s, status, want] of cases) assert.deepEqual(names(orphanWorks(all, s, status)), want, name);
  assert.deepEqual(worksBlockingDirectPurge(all, spec, health({ m2: "Unknown" })), [], "a kept last copy does not hold back the replacement's Work");
});
