import { test } from "node:test";
import assert from "node:assert/strict";
import type { Placement } from "@flotilla/api";
import { divided, makeBinding, makeCluster } from "./fixtures.js";
import { groupCandidates, groupScore, selectByAvailableResource, selectClusters, selectGroups, sortCandidates, type Candidate, type DfsGroup } from "./select.js";

function cand(name: string, score: number, available: number, o: { region?: string; order?: number; zones?: string[] } = {}): Candidate {
  return {
    cluster: makeCluster(name, { region: o.region, zones: o.zones }),
    name,
    score,
    allocatable: available,
    available,
    overflowOrder: o.order ?? 0,
  };
}
const names = (cs: readonly Candidate[]): string[] => cs.map((c) => c.name);

test("candidates sort by overflow order, then score, then available replicas, then name", () => {
  const list = [cand("d", 100, 5), cand("c", 100, 9), cand("b", 0, 50), cand("a", 100, 9), cand("e", 100, 99, { order: 1 })];
  assert.deepEqual(names(sortCandidates(list)), ["a", "c", "d", "b", "e"]);
});

const g = (name: string, value: number, weight: number): DfsGroup => ({ name, value, weight });

const dfs: Array<[string, DfsGroup[], number, number, number, string[] | undefined]> = [
  ["no groups select nothing", [], 1, 2, 1, undefined],
  ["a single group that reaches the target is chosen", [g("r1", 3, 10)], 1, 1, 2, ["r1"]],
  ["the heaviest pair wins among feasible pairs", [g("r1", 2, 10), g("r2", 3, 30), g("r3", 6, 20), g("r4", 7, 5)], 2, 2, 7, ["r2", "r3"]],
  ["a group that reaches the target alone ends its branch", [g("r1", 5, 100), g("r2", 5, 1)], 1, 2, 5, ["r1"]],
  ["the best path is replaced by a recorded path that is its prefix", [g("x", 1, 1), g("y", 5, 10)], 1, 2, 5, ["y"]],
  ["equal weight falls back to the larger value", [g("a", 2, 10), g("b", 4, 10)], 1, 1, 1, ["b"]],
  ["equal weight and value fall back to discovery order", [g("b", 2, 10), g("a", 2, 10)], 1, 1, 1, ["a"]],
  ["paths too short for the minimum are not recorded", [g("r1", 10, 100), g("r2", 1, 1)], 2, 2, 1, ["r1", "r2"]],
  ["a target out of reach selects nothing", [g("r1", 1, 1), g("r2", 1, 1)], 1, 2, 3, undefined],
  ["maxGroups 0 prunes everything", [g("r1", 5, 1)], 1, 0, 1, undefined],
  ["as many groups as the minimum means all of them", [g("a", 1, 1), g("b", 1, 5), g("c", 1, 3)], 3, 3, 0, ["b", "c", "a"]],
];
for (const [name, groups, min, max, target, want] of dfs) {
  test(name, () => {
    const got = selectGroups(groups, min, max, target);
    assert.deepEqual(got?.map((x) => x.name), want);
  });
}

const dup: Placement = { replicaScheduling: divided.duplicated() };
const dyn: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "region", minGroups: 2 }, { spreadByField: "cluster", minGroups: 3 }] };

test("a duplicated group scores 1000 per cluster able to take all replicas plus their mean score", () => {
  const spec = makeBinding({ replicas: 50, placement: dup }).spec!;
  assert.equal(groupScore([cand("a", 100, 60), cand("b", 100, 70), cand("c", 100, 40)], dup, spec, 1), 2100);
  assert.equal(groupScore([cand("a", 0, 60), cand("b", 0, 60), cand("c", 0, 60), cand("d", 0, 60)], dup, spec, 1), 4000);
});

test("a duplicated group with no cluster able to take all replicas scores 0", () => {
  const spec = makeBinding({ replicas: 50, placement: dup }).spec!;
  assert.equal(groupScore([cand("a", 100, 10)], dup, spec, 1), 0);
});

test("a divided group short of its share scores 1000 per available replica plus the mean score", () => {
  const spec = makeBinding({ replicas: 100, placement: dyn }).spec!;
  const clusters = [cand("a", 100, 10), cand("b", 100, 10), cand("c", 100, 10), cand("d", 100, 10), cand("e", 100, 5)];
  assert.equal(groupScore(clusters, dyn, spec, 2), 45 * 1000 + 100);
});

test("a divided group covering its share scores 1000 per share replica plus the mean score of the clusters used", () => {
  const spec = makeBinding({ replicas: 100, placement: dyn }).spec!;
  const clusters = [cand("a", 100, 40), cand("b", 100, 40), cand("c", 0, 10)];
  // share = ⌈100/2⌉ = 50, cmin = max(3, 2) = 3: all three clusters are taken.
  assert.equal(groupScore(clusters, dyn, spec, 2), 50 * 1000 + Math.floor(200 / 3));
});

test("clusters group by region in candidate order with their summed availability", () => {
  const spec = makeBinding({ replicas: 4, placement: dyn }).spec!;
  const groups = groupCandidates([cand("a", 0, 3, { region: "r1" }), cand("b", 0, 2, { region: "r2" }), cand("c", 0, 1, { region: "r1" }), cand("d", 0, 9)], "region", dyn, spec);
  assert.deepEqual([...groups.keys()], ["r1", "r2"]);
  assert.deepEqual(names(groups.get("r1")!.clusters), ["a", "c"]);
  assert.equal(groups.get("r1")!.available, 4);
});

test("a cluster with several zones joins every zone group", () => {
  const spec = makeBinding({ replicas: 4, placement: dyn }).spec!;
  const groups = groupCandidates([cand("a", 0, 3, { zones: ["z1", "z2"] })], "zone", dyn, spec);
  assert.deepEqual([...groups.keys()], ["z1", "z2"]);
});

test("an insufficient top n swaps in the largest leftover cluster from the back", () => {
  // member1(60, 40) member2(50, 30) member3(40, 60): need 80 from 2 clusters → member1 + member3.
  const sorted = [cand("member1", 60, 40), cand("member2", 50, 30), cand("member3", 40, 60)];
  assert.deepEqual(names(selectByAvailableResource(sorted, 2, 80)), ["member1", "member3"]);
});

test("a top n that stays short after swapping selects nothing", () => {
  assert.deepEqual(selectByAvailableResource([cand("a", 0, 1), cand("b", 0, 1)], 1, 5), []);
});

function select(placement: Placement, replicas: number, list: Candidate[]): string[] {
  return names(selectClusters(sortCandidates(list), placement, makeBinding({ replicas, placement }).spec!));
}
const regional = (): Candidate[] => [
  cand("a1", 0, 10, { region: "a" }),
  cand("a2", 0, 9, { region: "a" }),
  cand("b1", 0, 8, { region: "b" }),
  cand("b2", 0, 7, { region: "b" }),
  cand("c1", 0, 1, { region: "c" }),
];

test("without spread constraints every candidate is selected", () => {
  assert.deepEqual(select({ replicaScheduling: divided.dynamic() }, 3, [cand("b", 0, 1), cand("a", 0, 1)]), ["a", "b"]);
});

test("static weights ignore spread constraints", () => {
  const p: Placement = { replicaScheduling: divided.staticWeights({ a: 1 }), spreadConstraints: [{ spreadByField: "cluster", maxGroups: 1, minGroups: 1 }] };
  assert.deepEqual(select(p, 3, [cand("a", 0, 1), cand("b", 0, 1)]), ["a", "b"]);
});

test("a cluster constraint keeps the best maxGroups clusters", () => {
  const p: Placement = { replicaScheduling: divided.duplicated(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 1, maxGroups: 2 }] };
  assert.deepEqual(select(p, 3, [cand("a", 0, 1), cand("b", 100, 1), cand("c", 0, 5)]), ["b", "c"]);
});

test("a cluster constraint with maxGroups 0 selects nothing", () => {
  const p: Placement = { replicaScheduling: divided.duplicated(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 1 }] };
  assert.deepEqual(select(p, 3, [cand("a", 0, 1)]), []);
});

test("fewer clusters than the cluster minGroups is an error", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 3, maxGroups: 3 }] };
  assert.throws(() => select(p, 3, [cand("a", 0, 5), cand("b", 0, 5)]), /^SchedulingError: the number of feasible clusters is less than spreadConstraint.MinGroups$/);
});

test("too little capacity in the selected clusters is an error naming their count", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 1, maxGroups: 2 }] };
  assert.throws(() => select(p, 30, [cand("a", 0, 5), cand("b", 0, 5), cand("c", 0, 5)]), /no enough resource when selecting 2 clusters/);
});

test("a region constraint picks the regions by DFS and the best cluster of each", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "region", minGroups: 2, maxGroups: 2 }, { spreadByField: "cluster", minGroups: 2, maxGroups: 2 }] };
  assert.deepEqual(select(p, 10, regional()), ["a1", "b1"]);
});

test("a region constraint tops up from the chosen regions up to the cluster maxGroups", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "region", minGroups: 2, maxGroups: 2 }, { spreadByField: "cluster", minGroups: 2, maxGroups: 3 }] };
  assert.deepEqual(select(p, 10, regional()), ["a1", "b1", "a2"]);
});

test("fewer regions than the region minGroups is an error", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "region", minGroups: 4, maxGroups: 4 }, { spreadByField: "cluster", minGroups: 1, maxGroups: 4 }] };
  assert.throws(() => select(p, 10, regional()), /the number of feasible region is less than spreadConstraint.MinGroups/);
});

test("regions that cannot hold the cluster minGroups are an error", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "region", minGroups: 1, maxGroups: 2 }, { spreadByField: "cluster", minGroups: 5, maxGroups: 5 }] };
  assert.throws(() => select(p, 10, regional()), /the number of clusters is less than the cluster spreadConstraint.MinGroups/);
});

test("a region constraint without maxGroups finds no regions", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "region", minGroups: 1 }, { spreadByField: "cluster", minGroups: 1, maxGroups: 2 }] };
  assert.throws(() => select(p, 10, regional()), /the number of clusters is less than the cluster spreadConstraint.MinGroups/);
});

test("a zone constraint without a region or cluster constraint is unsupported", () => {
  const p: Placement = { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "zone", minGroups: 1, maxGroups: 2 }] };
  assert.throws(() => select(p, 10, regional()), /just support cluster and region spread constraint/);
});

test("an empty spread field defaults to cluster", () => {
  const p: Placement = { replicaScheduling: divided.duplicated(), spreadConstraints: [{ maxGroups: 1 }] };
  assert.deepEqual(select(p, 1, [cand("a", 0, 1), cand("b", 0, 2)]), ["b"]);
});
