import { test } from "node:test";
import assert from "node:assert/strict";
import { gracefulEvictCluster } from "./eviction.js";
import type { ResourceBindingSpec } from "./types.js";

const spec = (): ResourceBindingSpec => ({ replicas: 3, clusters: [{ name: "member1", replicas: 3 }] });
const base = { message: "m", producer: "resource-binding-application-failover-controller", reason: "ApplicationFailure" };

test("an application-failure eviction carries its producer, reason, grace period and preserved state", () => {
  const s = spec();
  gracefulEvictCluster(s, "member1", { ...base, purgeMode: "Gracefully", gracePeriodSeconds: 60, preservedLabelState: { "failover.karmada.io/replicas": "3" }, clustersBeforeFailover: ["member1"] });
  assert.deepEqual(s.gracefulEvictionTasks, [
    {
      fromCluster: "member1",
      purgeMode: "Gracefully",
      replicas: 3,
      reason: "ApplicationFailure",
      message: "m",
      producer: "resource-binding-application-failover-controller",
      gracePeriodSeconds: 60,
      preservedLabelState: { "failover.karmada.io/replicas": "3" },
      clustersBeforeFailover: ["member1"],
    },
  ]);
});

test("purge mode Never suppresses deletion and takes no grace period", () => {
  const s = spec();
  gracefulEvictCluster(s, "member1", { ...base, purgeMode: "Never", gracePeriodSeconds: 60 });
  assert.equal(s.gracefulEvictionTasks?.[0]?.suppressDeletion, true);
  assert.equal(s.gracefulEvictionTasks?.[0]?.gracePeriodSeconds, undefined);
});

test("clustersBeforeFailover is recorded only with preserved state", () => {
  const s = spec();
  gracefulEvictCluster(s, "member1", { ...base, purgeMode: "Directly", clustersBeforeFailover: ["member1"] });
  assert.equal(s.gracefulEvictionTasks?.[0]?.clustersBeforeFailover, undefined);
});
