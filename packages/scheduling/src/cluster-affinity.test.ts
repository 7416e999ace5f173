import { test } from "node:test";
import assert from "node:assert/strict";
import type { Placement } from "@flotilla/api";
import { ClusterAffinity } from "./cluster-affinity.js";
import { buildContext, filterInput } from "./framework.js";
import { makeBinding, makeCluster } from "./fixtures.js";
import type { ScorePlugin, Verdict } from "./types.js";

const noMatch: Verdict = { code: "unfit", reasons: ["cluster(s) did not match the placement cluster affinity constraint"] };
const list: Placement = {
  clusterAffinities: [
    { affinityName: "a", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] },
    { affinityName: "b", clusterNames: ["member3"] },
  ],
};

const cases: Array<[string, Placement, string | undefined, number, string, Verdict]> = [
  ["no affinity lets every cluster pass", {}, undefined, 1, "member9", { code: "fit" }],
  ["a cluster named in clusterAffinity passes", { clusterAffinity: { clusterNames: ["member1", "member2"] } }, undefined, 1, "member1", { code: "fit" }],
  ["a cluster not named in clusterAffinity fails with the affinity reason", { clusterAffinity: { clusterNames: ["member1", "member2"] } }, undefined, 1, "member3", noMatch],
  ["an excluded cluster fails", { clusterAffinity: { exclude: ["member1"] } }, undefined, 1, "member1", noMatch],
  ["the term being tried decides", list, "b", 1, "member3", { code: "fit" }],
  ["another term's clusters fail", list, "b", 1, "member1", noMatch],
  ["an overflow cluster passes for a workload", list, "a", 3, "member2", { code: "fit" }],
  ["an overflow cluster fails for a non-workload", list, "a", 0, "member2", noMatch],
  ["clusterAffinity wins over an affinity list", { ...list, clusterAffinity: { clusterNames: ["member9"] } }, "a", 1, "member1", noMatch],
];
for (const [name, placement, term, replicas, cluster, want] of cases) {
  test(name, () => {
    const ctx = buildContext(makeBinding({ replicas, placement }), term);
    assert.deepEqual(ClusterAffinity.filter(filterInput(ctx, makeCluster(cluster))), want);
  });
}

test("an overflow cluster passes for a workload scaled to 0 whose pods request resources (upstream's IsWorkload)", () => {
  const ctx = buildContext(makeBinding({ replicas: 0, resourceRequest: { cpu: "100m" }, placement: list }), "a");
  assert.deepEqual(ClusterAffinity.filter(filterInput(ctx, makeCluster("member2"))), { code: "fit" });
});

test("the affinity score is always zero", () => {
  const ctx = buildContext(makeBinding({ replicas: 1, placement: { clusterAffinity: { clusterNames: ["member1"] } } }), undefined);
  const scorer: ScorePlugin = ClusterAffinity;
  assert.equal(scorer.score(ctx, makeCluster("member1")), 0);
});
