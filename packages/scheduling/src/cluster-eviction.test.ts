import { test } from "node:test";
import assert from "node:assert/strict";
import type { GracefulEvictionTask } from "@flotilla/api";
import { ClusterEviction } from "./cluster-eviction.js";
import { buildContext, filterInput } from "./framework.js";
import { makeBinding, makeCluster } from "./fixtures.js";
import type { Verdict } from "./types.js";

const task = (fromCluster: string): GracefulEvictionTask => ({ fromCluster, purgeMode: "Gracefully", reason: "TaintUntolerated", producer: "TaintManager" });

const cases: Array<[string, GracefulEvictionTask[] | undefined, string, Verdict]> = [
  ["a binding without eviction tasks lets every cluster pass", undefined, "member1", { code: "fit" }],
  ["the cluster a task evicts from is not chosen", [task("member1")], "member1", { code: "unfit", reasons: ["cluster(s) is in the process of eviction"] }],
  ["a cluster no task names passes", [task("member1")], "member2", { code: "fit" }],
  ["any of several tasks counts", [task("member2"), task("member3")], "member3", { code: "unfit", reasons: ["cluster(s) is in the process of eviction"] }],
];
for (const [name, tasks, cluster, want] of cases) {
  test(name, () => {
    const ctx = buildContext(makeBinding({ replicas: 1, tasks }), undefined);
    assert.deepEqual(ClusterEviction.filter(filterInput(ctx, makeCluster(cluster))), want);
  });
}
