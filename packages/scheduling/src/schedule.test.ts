import { test } from "node:test";
import assert from "node:assert/strict";
import type { Placement, TargetCluster } from "@flotilla/api";
import { divided, makeBinding, makeCluster, type BindingOptions } from "./fixtures.js";
import { fnv1a32 } from "./hash.js";
import { schedule, SUCCESSFUL_SCHEDULING_MESSAGE, type ScheduleInput, type ScheduleResult } from "./schedule.js";

const three = () => [makeCluster("member1"), makeCluster("member2"), makeCluster("member3")];
const notReady = { key: "cluster.karmada.io/not-ready", effect: "NoSchedule" };
const run = (o: BindingOptions, clusters = three(), extra: Partial<ScheduleInput> = {}): ScheduleResult =>
  schedule({ binding: makeBinding(o), clusters, ...extra });
const placed = (r: ScheduleResult): Record<string, number> => Object.fromEntries(r.clusters.map((t) => [t.name, t.replicas]));

// --- the seed walk-throughs ---

test("3 replicas with static weights 1:2 land as member1:1 and member2:2", () => {
  const r = run({ replicas: 3, placement: { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: divided.staticWeights({ member1: 1, member2: 2 }) } });
  assert.deepEqual(r.clusters, [
    { name: "member1", replicas: 1 },
    { name: "member2", replicas: 2 },
  ]);
  assert.deepEqual(r.condition, { type: "Scheduled", status: "True", reason: "Success", message: SUCCESSFUL_SCHEDULING_MESSAGE });
  assert.equal(r.patchClusters, true);
  assert.equal(r.error, undefined);
});

test("a not-ready member1 that holds nothing yet is filtered and member2 takes all 3", () => {
  const clusters = [makeCluster("member1", { taints: [notReady] }), makeCluster("member2")];
  const r = run({ replicas: 3, placement: { replicaScheduling: divided.staticWeights({ member1: 1, member2: 2 }) } }, clusters);
  assert.deepEqual(r.clusters, [{ name: "member2", replicas: 3 }]);
  assert.deepEqual(r.diagnosis, {
    member1: [{ plugin: "TaintToleration", reason: "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}" }],
  });
});

test("a not-ready cluster the binding already uses stays a candidate", () => {
  const clusters = [makeCluster("member1", { taints: [notReady] }), makeCluster("member2")];
  const r = run({ replicas: 3, placement: { replicaScheduling: divided.staticWeights({ member1: 1, member2: 2 }) }, clusters: { member1: 1, member2: 2 } }, clusters);
  assert.deepEqual(placed(r), { member1: 1, member2: 2 });
});

test("member3 outside clusterAffinity.clusterNames is dropped with the affinity reason", () => {
  const r = run({ replicas: 2, placement: { clusterAffinity: { clusterNames: ["member1", "member2"] } } });
  assert.deepEqual(placed(r), { member1: 2, member2: 2 });
  assert.deepEqual(r.diagnosis, {
    member3: [{ plugin: "ClusterAffinity", reason: "cluster(s) did not match the placement cluster affinity constraint" }],
  });
});

test("a Duplicated binding evicted from member1 moves to the spare member3", () => {
  const r = run({
    replicas: 2,
    placement: { replicaScheduling: divided.duplicated(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 2, maxGroups: 2 }] },
    clusters: { member2: 2 },
    tasks: [{ fromCluster: "member1", purgeMode: "Gracefully", reason: "TaintUntolerated", producer: "TaintManager", replicas: 2 }],
  });
  assert.deepEqual(placed(r), { member2: 2, member3: 2 });
  assert.deepEqual(r.diagnosis, { member1: [{ plugin: "ClusterEviction", reason: "cluster(s) is in the process of eviction" }] });
});

// --- division modes ---

const modes: Array<[string, Placement, Record<string, number>]> = [
  ["Duplicated puts every replica on every cluster", { replicaScheduling: divided.duplicated() }, { member1: 4, member2: 4, member3: 4 }],
  ["static weights split by weight", { replicaScheduling: divided.staticWeights({ member1: 1, member2: 3 }) }, { member1: 1, member2: 3 }],
  ["dynamic weight splits by available replicas", { replicaScheduling: divided.dynamic() }, { member1: 1, member2: 1, member3: 2 }],
  ["Aggregated fills the roomiest cluster first", { replicaScheduling: divided.aggregated() }, { member3: 4 }],
];
for (const [name, placement, want] of modes) {
  test(name, () => {
    const clusters = [makeCluster("member1", { pods: 10 }), makeCluster("member2", { pods: 10 }), makeCluster("member3", { pods: 20 })];
    assert.deepEqual(placed(run({ replicas: 4, placement }, clusters)), want);
  });
}

test("a non-workload goes to every feasible cluster with 0 replicas", () => {
  const r = run({ replicas: 0, kind: "ConfigMap", apiVersion: "v1", placement: { replicaScheduling: divided.dynamic() } });
  assert.deepEqual(r.clusters, [
    { name: "member1", replicas: 0 },
    { name: "member2", replicas: 0 },
    { name: "member3", replicas: 0 },
  ]);
});

test("a Deployment scaled to 0 whose pods request resources lands on its overflow clusters too, with 0 replicas", () => {
  const placement: Placement = {
    clusterAffinities: [{ affinityName: "main", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }],
    replicaScheduling: divided.dynamic(),
  };
  const scaledToZero = run({ replicas: 0, resourceRequest: { cpu: "100m" }, placement, status: { schedulerObservingAffinityName: "main" } });
  assert.deepEqual(placed(scaledToZero), { member1: 0, member2: 0 });
  const noRequirements = run({ replicas: 0, placement, status: { schedulerObservingAffinityName: "main" } });
  assert.deepEqual(placed(noRequirements), { member1: 0 });
});

// --- steady state ---

const steady = (placement: Placement, replicas: number, current: Record<string, number>) =>
  placed(run({ replicas, placement, clusters: current }, [makeCluster("member1", { pods: 50 }), makeCluster("member2", { pods: 50 }), makeCluster("member3", { pods: 50 })]));

test("dynamic weight keeps the placement when the replica count is unchanged", () => {
  assert.deepEqual(steady({ replicaScheduling: divided.dynamic() }, 5, { member1: 4, member2: 1 }), { member1: 4, member2: 1 });
});

test("dynamic weight scales up on top of the current placement", () => {
  // the 3 added replicas split 1/1/1 over equal spare capacity and are added to 4/1/0
  assert.deepEqual(steady({ replicaScheduling: divided.dynamic() }, 8, { member1: 4, member2: 1 }), { member1: 5, member2: 2, member3: 1 });
});

test("dynamic weight scales 2/4/6 up to 24 on equal capacity as 6/8/10", () => {
  assert.deepEqual(steady({ replicaScheduling: divided.dynamic() }, 24, { member1: 2, member2: 4, member3: 6 }), { member1: 6, member2: 8, member3: 10 });
});

test("dynamic weight scales 6/8/10 down to 12 as 3/4/5", () => {
  assert.deepEqual(steady({ replicaScheduling: divided.dynamic() }, 12, { member1: 6, member2: 8, member3: 10 }), { member1: 3, member2: 4, member3: 5 });
});

test("dynamic weight scales down in proportion to the current placement", () => {
  assert.deepEqual(steady({ replicaScheduling: divided.dynamic() }, 3, { member1: 4, member2: 2 }), { member1: 2, member2: 1 });
});

test("Aggregated keeps the placement when the replica count is unchanged", () => {
  assert.deepEqual(steady({ replicaScheduling: divided.aggregated() }, 5, { member2: 5 }), { member2: 5 });
});

test("Aggregated scales up on the cluster it already uses", () => {
  assert.deepEqual(steady({ replicaScheduling: divided.aggregated() }, 9, { member2: 5 }), { member2: 9 });
});

test("Aggregated scales down onto its largest current cluster", () => {
  assert.deepEqual(steady({ replicaScheduling: divided.aggregated() }, 4, { member1: 2, member2: 5 }), { member2: 4 });
});

test("a manual reschedule redistributes from scratch", () => {
  const r = run(
    {
      replicas: 6,
      placement: { replicaScheduling: divided.dynamic() },
      clusters: { member1: 6 },
      rescheduleTriggeredAt: "2026-02-01T00:00:00Z",
      status: { lastScheduledTime: "2026-01-01T00:00:00Z" },
    },
    [makeCluster("member1", { pods: 0 }), makeCluster("member2", { pods: 6 })],
  );
  assert.deepEqual(placed(r), { member1: 3, member2: 3 });
});

// --- spread constraints ---

const regional = () => [
  makeCluster("a1", { region: "a", pods: 10 }),
  makeCluster("a2", { region: "a", pods: 10 }),
  makeCluster("b1", { region: "b", pods: 10 }),
  makeCluster("c1", { region: "c", pods: 10 }),
];
const spread = (region: [number, number], cluster: [number, number]): Placement => ({
  replicaScheduling: divided.dynamic(),
  spreadConstraints: [
    { spreadByField: "region", minGroups: region[0], maxGroups: region[1] },
    { spreadByField: "cluster", minGroups: cluster[0], maxGroups: cluster[1] },
  ],
});

test("region and cluster spread constraints pick two regions and three clusters", () => {
  const r = run({ replicas: 6, placement: spread([2, 2], [3, 3]) }, regional());
  assert.deepEqual(r.scores.filter((s) => s.selected).map((s) => s.name).sort(), ["a1", "a2", "b1"]);
  assert.deepEqual(placed(r), { a1: 2, a2: 2, b1: 2 });
});

const spreadErrors: Array<[string, Placement, number, string]> = [
  ["too few regions is a scheduler error", spread([4, 4], [1, 4]), 4, "failed to select clusters: the number of feasible region is less than spreadConstraint.MinGroups"],
  ["too few clusters in the chosen regions is a scheduler error", spread([1, 2], [4, 4]), 4, "failed to select clusters: the number of clusters is less than the cluster spreadConstraint.MinGroups"],
  [
    "too few clusters for the cluster minGroups is a scheduler error",
    { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 5, maxGroups: 5 }] },
    4,
    "failed to select clusters: the number of feasible clusters is less than spreadConstraint.MinGroups",
  ],
  [
    "too little capacity in maxGroups clusters is a scheduler error",
    { replicaScheduling: divided.dynamic(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 1, maxGroups: 2 }] },
    25,
    "failed to select clusters: no enough resource when selecting 2 clusters",
  ],
];
for (const [name, placement, replicas, message] of spreadErrors) {
  test(name, () => {
    const r = run({ replicas, placement }, regional());
    assert.deepEqual(r.error, { kind: "SchedulerError", message, requeue: "backoff" });
    assert.deepEqual(r.condition, { type: "Scheduled", status: "False", reason: "SchedulerError", message });
    assert.equal(r.patchClusters, false);
    assert.deepEqual(r.clusters, []);
  });
}

test("clusters without a region are filtered under a region constraint", () => {
  const r = run({ replicas: 2, placement: spread([1, 2], [1, 2]) }, [...regional(), makeCluster("nowhere")]);
  assert.deepEqual(r.diagnosis.nowhere, [{ plugin: "SpreadConstraint", reason: "cluster(s) did not have region property" }]);
});

test("no cluster with zones under a zone constraint is a FitError in upstream's words", () => {
  const r = run({ replicas: 2, placement: { spreadConstraints: [{ spreadByField: "zone", minGroups: 1 }, { spreadByField: "cluster", minGroups: 1 }] } });
  const message = "0/3 clusters are available: 3 cluster(s) did not have zones property.";
  assert.deepEqual(r.condition, { type: "Scheduled", status: "False", reason: "NoClusterFit", message });
  assert.deepEqual(r.error, { kind: "FitError", message, requeue: "none" });
});

test("a FitError counts each cluster's first objection, sorted as text", () => {
  const clusters = [makeCluster("member1", { taints: [notReady] }), makeCluster("member2", { region: "r1" }), makeCluster("member3")];
  const r = run({ replicas: 2, placement: { clusterAffinity: { clusterNames: ["member1", "member3"] }, spreadConstraints: [{ spreadByField: "region", minGroups: 1 }, { spreadByField: "cluster", minGroups: 1 }] } }, clusters);
  assert.equal(
    r.condition.message,
    "0/3 clusters are available: 1 cluster(s) did not have region property, 1 cluster(s) did not match the placement cluster affinity constraint, 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.",
  );
});

// --- Webster tie-breaking ---

function uidWithParity(odd: boolean): string {
  for (let i = 0; ; i++) if ((fnv1a32(`uid-${i}`) % 2 === 1) === odd) return `uid-${i}`;
}

const ties: Array<[string, string, Record<string, number>]> = [
  ["an even UID hash gives the odd replica to the first name", uidWithParity(false), { member1: 2, member2: 1 }],
  ["an odd UID hash gives the odd replica to the last name", uidWithParity(true), { member1: 1, member2: 2 }],
  ["an empty UID gives the odd replica to the first name", "", { member1: 2, member2: 1 }],
];
for (const [name, uid, want] of ties) {
  test(name, () => {
    const r = run({ uid, replicas: 3, placement: { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: divided.staticWeights({ member1: 1, member2: 1 }) } });
    assert.deepEqual(placed(r), want);
  });
}

// --- failures ---

test("no fitting cluster is a FitError that clears the placement", () => {
  const clusters = [makeCluster("member1", { taints: [notReady] }), makeCluster("member2", { taints: [notReady] }), makeCluster("member3")];
  const r = run({ replicas: 1, placement: { clusterAffinity: { clusterNames: ["member1", "member2"] } }, clusters: { gone: 1 } }, clusters);
  const message =
    "0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, 2 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.";
  assert.deepEqual(r.error, { kind: "FitError", message, requeue: "none" });
  assert.deepEqual(r.condition, { type: "Scheduled", status: "False", reason: "NoClusterFit", message });
  assert.equal(r.patchClusters, true);
  assert.deepEqual(r.clusters, []);
});

test("no clusters at all reads as no cluster exists", () => {
  const r = run({ replicas: 1 }, []);
  assert.equal(r.error?.message, "0/0 clusters are available: no cluster exists.");
});

test("only deleting clusters count in the total but give no reasons", () => {
  const r = run({ replicas: 1 }, [makeCluster("member1", { deleting: true }), makeCluster("member2", { deleting: true })]);
  assert.equal(r.error?.message, "0/2 clusters are available: no cluster exists.");
  assert.deepEqual(r.diagnosis.member1, [{ plugin: "Scheduler", reason: "cluster is deleting" }]);
});

test("too little capacity is Unschedulable and leaves the placement alone", () => {
  const r = run({ replicas: 100, placement: { replicaScheduling: divided.dynamic() } }, [makeCluster("member1", { pods: 10 })]);
  const message = "failed to assign replicas: failed to scale up: Clusters available replicas 10 are not enough to schedule.";
  assert.deepEqual(r.error, { kind: "Unschedulable", message, requeue: "unschedulable" });
  assert.deepEqual(r.condition, { type: "Scheduled", status: "False", reason: "Unschedulable", message });
  assert.equal(r.patchClusters, false);
});

// --- estimates, plugins, scores ---

test("external estimates steer dynamic weight", () => {
  const r = run({ replicas: 4, placement: { replicaScheduling: divided.dynamic() } }, three(), { estimates: new Map([["member1", 0], ["member2", 1], ["member3", 3]]) });
  assert.deepEqual(placed(r), { member2: 1, member3: 3 });
});

test("disabling a filter plugin lets its clusters through", () => {
  const clusters = [makeCluster("member1", { taints: [notReady] })];
  const r = run({ replicas: 1 }, clusters, { enabled: "*,-TaintToleration" });
  assert.deepEqual(placed(r), { member1: 1 });
});

test("scores list feasible clusters in selection order with locality and capacity", () => {
  const clusters = [makeCluster("member1", { pods: 5 }), makeCluster("member2", { pods: 9 }), makeCluster("member3", { pods: 1 })];
  const r = run({ replicas: 2, placement: { replicaScheduling: divided.dynamic() }, clusters: { member3: 2 } }, clusters);
  assert.deepEqual(
    r.scores.map((s) => [s.name, s.score, s.allocatableReplicas, s.availableReplicas]),
    [
      ["member3", 100, 1, 3],
      ["member2", 0, 9, 9],
      ["member1", 0, 5, 5],
    ],
  );
  assert.deepEqual(r.scores[0].plugins, { ClusterAffinity: 0, ClusterLocality: 100 });
  assert.deepEqual(placed(r), { member3: 2 });
});

test("timings are reported per plugin when asked for", () => {
  const r = run({ replicas: 1 }, three(), { timings: true });
  assert.ok(r.timings && "TaintToleration" in r.timings && "ClusterLocality" in r.timings);
});

// --- ordered cluster affinities ---

const terms: Placement = {
  replicaScheduling: divided.dynamic(),
  clusterAffinities: [
    { affinityName: "primary", clusterNames: ["member1"] },
    { affinityName: "backup", clusterNames: ["member2", "member3"] },
  ],
};

test("the first term that fits wins and is recorded", () => {
  const r = run({ replicas: 2, placement: terms }, [makeCluster("member1", { taints: [notReady] }), makeCluster("member2"), makeCluster("member3")]);
  assert.equal(r.affinityName, "backup");
  assert.deepEqual(r.attempts, [
    { affinityName: "primary", error: "0/3 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}, 2 cluster(s) did not match the placement cluster affinity constraint." },
    { affinityName: "backup" },
  ]);
  assert.equal(r.clusters.length > 0, true);
  assert.equal(r.condition.reason, "Success");
});

test("scheduling resumes from the observed term", () => {
  const r = run({ replicas: 2, placement: terms, status: { schedulerObservingAffinityName: "backup" } });
  assert.equal(r.affinityName, "backup");
  assert.deepEqual(r.attempts?.map((a) => a.affinityName), ["backup"]);
});

test("when every term fails to fit the first error stands, the observed term is kept and the placement is cleared", () => {
  const clusters = [makeCluster("member1", { taints: [notReady] }), makeCluster("member2", { taints: [notReady] }), makeCluster("member3", { taints: [notReady] })];
  const r = run({ replicas: 2, placement: terms, status: { schedulerObservingAffinityName: "primary" } }, clusters);
  assert.equal(r.affinityName, "primary");
  assert.equal(r.condition.reason, "NoClusterFit");
  assert.equal(r.error?.requeue, "backoff");
  assert.equal(r.error?.message, r.attempts?.[0].error);
  assert.equal(r.patchClusters, true);
  assert.deepEqual(r.clusters, []);
});

test("a term failing for capacity falls back to the next term", () => {
  const clusters = [makeCluster("member1", { pods: 1 }), makeCluster("member2", { pods: 10 }), makeCluster("member3", { pods: 10 })];
  const r = run({ replicas: 5, placement: terms }, clusters);
  assert.equal(r.affinityName, "backup");
  assert.match(r.attempts?.[0].error ?? "", /not enough to schedule/);
});

test("overflow terms take what the primary term cannot hold", () => {
  const placement: Placement = {
    replicaScheduling: divided.dynamic(),
    clusterAffinities: [{ affinityName: "main", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }],
  };
  const clusters = [makeCluster("member1", { pods: 2 }), makeCluster("member2", { pods: 10 }), makeCluster("member3", { pods: 10 })];
  const r = run({ replicas: 5, placement, status: { schedulerObservingAffinityName: "main" } }, clusters);
  assert.deepEqual(placed(r), { member1: 2, member2: 3 });
  assert.deepEqual(r.scores.map((s) => [s.name, s.overflowOrder]), [["member1", 0], ["member2", 1]]);
});

test("a cluster in the primary group and an overflow tier belongs to the primary group", () => {
  const placement: Placement = {
    replicaScheduling: divided.aggregated(),
    clusterAffinities: [{ affinityName: "main", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member1", "member2"] }] }],
  };
  const r = run({ replicas: 2, placement, status: { schedulerObservingAffinityName: "main" } });
  assert.deepEqual(r.scores.map((s) => [s.name, s.overflowOrder]), [["member1", 0], ["member2", 1]]);
});

test("results are sorted by cluster name", () => {
  const clusters = [makeCluster("zeta"), makeCluster("alpha"), makeCluster("mid")];
  const r = run({ replicas: 1, placement: { replicaScheduling: divided.duplicated() } }, clusters);
  assert.deepEqual(r.clusters.map((t: TargetCluster) => t.name), ["alpha", "mid", "zeta"]);
});

// --- the assumed load: a burst spreads instead of piling onto the same clusters ---

test("a burst of bindings over equal clusters spreads when each decision's load is assumed", () => {
  const clusters = ["a", "b", "c", "d", "e", "f"].map((n) => makeCluster(n, { cpu: "2", pods: 110 }));
  const placement: Placement = { spreadConstraints: [{ spreadByField: "cluster", minGroups: 2, maxGroups: 2 }], replicaScheduling: divided.dynamic() };
  const assumed = new Map<string, { pods: number; resources: Record<string, number> }>();
  const used = new Map<string, number>();
  for (let i = 0; i < 6; i++) {
    const r = run({ name: `app${i}`, replicas: 3, resourceRequest: { cpu: "200m" }, placement }, clusters, { assumed });
    assert.equal(r.condition.reason, "Success");
    for (const t of r.clusters) {
      const n = t.name!;
      used.set(n, (used.get(n) ?? 0) + t.replicas!);
      const prev = assumed.get(n) ?? { pods: 0, resources: {} };
      assumed.set(n, { pods: prev.pods + t.replicas!, resources: { cpu: (prev.resources.cpu ?? 0) + 200 * t.replicas! } });
    }
  }
  // 18 replicas of 200m over six clusters of 10 each: nobody is asked for more than it has
  assert.equal([...used.values()].reduce((a, b) => a + b, 0), 18);
  assert.ok(used.size >= 5, `used ${JSON.stringify([...used])}`);
  for (const [n, v] of used) assert.ok(v <= 10, `${n} got ${v}`);
});

test("without an assumed load the same burst piles onto the first clusters (upstream)", () => {
  const clusters = ["a", "b", "c", "d"].map((n) => makeCluster(n, { cpu: "2", pods: 110 }));
  const placement: Placement = { spreadConstraints: [{ spreadByField: "cluster", minGroups: 2, maxGroups: 2 }], replicaScheduling: divided.dynamic() };
  const picks = new Set<string>();
  for (let i = 0; i < 4; i++) for (const t of run({ name: `app${i}`, replicas: 3, resourceRequest: { cpu: "200m" }, placement }, clusters).clusters) picks.add(t.name!);
  assert.deepEqual([...picks].sort(), ["a", "b"]);
});

test("a decision lists the replicas the assumed load took off each feasible cluster", () => {
  const clusters = [makeCluster("a", { cpu: "2" }), makeCluster("b", { cpu: "2" })];
  const r = run({ replicas: 2, resourceRequest: { cpu: "500m" }, placement: { replicaScheduling: divided.dynamic() } }, clusters, { assumed: new Map([["a", { pods: 1, resources: { cpu: 1000 } }]]) });
  const byName = Object.fromEntries(r.scores.map((e) => [e.name, e]));
  assert.equal(byName.a.assumedReplicas, 2);
  assert.equal(byName.a.allocatableReplicas, 2);
  assert.equal(byName.b.assumedReplicas, undefined);
  assert.equal(byName.b.allocatableReplicas, 4);
});
