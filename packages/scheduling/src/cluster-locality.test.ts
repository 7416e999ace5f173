import { test } from "node:test";
import assert from "node:assert/strict";
import { ClusterLocality } from "./cluster-locality.js";
import { buildContext } from "./framework.js";
import { makeBinding, makeCluster } from "./fixtures.js";

const cases: Array<[string, Record<string, number> | undefined, string, number]> = [
  ["a never-scheduled binding scores every cluster 0", undefined, "member1", 0],
  ["a cluster in spec.clusters scores 100", { member1: 2, member2: 1 }, "member1", 100],
  ["a cluster outside spec.clusters scores 0", { member1: 2 }, "member2", 0],
  ["a cluster listed with 0 replicas still scores 100", { member1: 0 }, "member1", 100],
];
for (const [name, current, cluster, want] of cases) {
  test(name, () => {
    const ctx = buildContext(makeBinding({ replicas: 3, clusters: current }), undefined);
    assert.equal(ClusterLocality.score(ctx, makeCluster(cluster)), want);
  });
}
