import { test } from "node:test";
import assert from "node:assert/strict";
import { gracefulEvictCluster, removeCluster, type AnyResourceBinding, type Cluster } from "@flotilla/api";
import { schedule } from "@flotilla/scheduling";
import { binding, cluster, placements } from "../fixtures.test-support.js";
import { debounceUpdate, type DebounceInput, type DebounceVerdict } from "./debounce.js";
import { statusAfter, withScheduleResult, type Trigger } from "./status.js";

const clusters = [cluster("member1"), cluster("member2"), cluster("member3")];
const T0 = Date.parse("2026-03-01T10:00:00Z");
const D = 2000;

/** A binding as the scheduler leaves it: placed by a real decision, with its status and diagnosis. */
function placed(b: AnyResourceBinding, on: readonly Cluster[] = clusters): AnyResourceBinding {
  const result = schedule({ binding: b, clusters: on });
  const next = withScheduleResult(b, result) ?? b;
  return { ...next, status: statusAfter(next, result, { trigger: "placementChanged", now: new Date(T0 - 60_000), clustersTotal: on.length, maxFeasible: 10 }) };
}

/** The seed's nginx, 3 replicas on member1:1 member2:2. */
const seed = () => placed(binding("nginx", { replicas: 3 }));
const scaled = (b: AnyResourceBinding, replicas: number): AnyResourceBinding => ({ ...b, spec: { ...b.spec, replicas } });
const reweighted = (b: AnyResourceBinding): AnyResourceBinding => {
  const p = placements.seed();
  p.replicaScheduling!.weightPreference!.staticWeightList![1].weight = 5;
  return { ...b, spec: { ...b.spec, placement: p } };
};
const evicted = (b: AnyResourceBinding, name: string): AnyResourceBinding => {
  const spec = structuredClone(b.spec!);
  gracefulEvictCluster(spec, name, { purgeMode: "Gracefully", message: "cluster not ready" });
  return { ...b, spec };
};
const removed = (b: AnyResourceBinding, name: string): AnyResourceBinding => {
  const spec = structuredClone(b.spec!);
  removeCluster(spec, name);
  return { ...b, spec };
};
const withCondition = (b: AnyResourceBinding, status: "True" | "False", reason: string): AnyResourceBinding => ({
  ...b,
  status: { ...b.status, conditions: (b.status?.conditions ?? []).map((c) => (c.type === "Scheduled" ? { ...c, status, reason } : c)) },
});

const deleting = (c: Cluster): Cluster => ({ ...c, metadata: { ...c.metadata, deletionTimestamp: "2026-03-01T09:59:00Z" } });

type Case = [name: string, input: Partial<DebounceInput> & { binding: AnyResourceBinding; trigger: Trigger }, want: DebounceVerdict];

const cases: Case[] = [
  ["with no debounce set, a scale-up is scheduled at once", { binding: scaled(seed(), 6), trigger: "replicasChanged", debounceMs: 0 }, { wait: false, reason: "off" }],
  ["a scale-up of a placed binding waits the whole debounce when first seen", { binding: scaled(seed(), 6), trigger: "replicasChanged" }, { wait: true, ms: D, since: T0 }],
  ["a weight change of a placed binding waits too", { binding: reweighted(seed()), trigger: "placementChanged" }, { wait: true, ms: D, since: T0 }],
  ["a second update within the window waits only for what is left of the first one's", { binding: reweighted(scaled(seed(), 6)), trigger: "placementChanged", since: T0 - 1500 }, { wait: true, ms: 500, since: T0 - 1500 }],
  ["an update that has waited the debounce out is scheduled", { binding: scaled(seed(), 6), trigger: "replicasChanged", since: T0 - D }, { wait: false, reason: "settled" }],
  ["a remembered start in the future (another clock) counts from now", { binding: scaled(seed(), 6), trigger: "replicasChanged", since: T0 + 60_000 }, { wait: true, ms: D, since: T0 }],
  ["a first schedule is never delayed", { binding: binding("fresh", { replicas: 3 }), trigger: "placementChanged" }, { wait: false, reason: "firstSchedule" }],
  ["an eviction into a graceful-eviction task is scheduled at once", { binding: evicted(seed(), "member1"), trigger: "replicasChanged" }, { wait: false, reason: "targetsMoved" }],
  ["an eviction with graceful eviction off is scheduled at once", { binding: removed(seed(), "member1"), trigger: "replicasChanged" }, { wait: false, reason: "targetsMoved" }],
  ["an eviction and a scale-up together are scheduled at once", { binding: scaled(evicted(seed(), "member1"), 6), trigger: "replicasChanged", since: T0 - 100 }, { wait: false, reason: "targetsMoved" }],
  ["an eviction during the window of a weight change ends the wait", { binding: evicted(reweighted(seed()), "member2"), trigger: "placementChanged", since: T0 - 100 }, { wait: false, reason: "targetsMoved" }],
  ["a scale-up while a target cluster is being deleted is scheduled at once", { binding: scaled(seed(), 6), trigger: "replicasChanged", clusters: [deleting(cluster("member1")), cluster("member2")] }, { wait: false, reason: "targetLeaving" }],
  ["a scale-up while a target cluster is gone is scheduled at once", { binding: scaled(seed(), 6), trigger: "replicasChanged", clusters: [cluster("member2"), cluster("member3")] }, { wait: false, reason: "targetLeaving" }],
  ["an Unschedulable binding's retry is never delayed", { binding: withCondition(scaled(seed(), 6), "False", "Unschedulable"), trigger: "replicasChanged" }, { wait: false, reason: "notScheduled" }],
  ["a manual reschedule is never delayed", { binding: seed(), trigger: "rescheduleTriggered" }, { wait: false, reason: "notAnUpdate" }],
  ["a target cluster being deleted is never delayed", { binding: seed(), trigger: "targetClusterDeleting" }, { wait: false, reason: "notAnUpdate" }],
  ["a target cluster gone is never delayed", { binding: seed(), trigger: "targetClusterGone" }, { wait: false, reason: "notAnUpdate" }],
  ["a Duplicated binding looked at again is never delayed", { binding: placed(binding("dup", { replicas: 2, placement: placements.duplicated() })), trigger: "alwaysSchedule" }, { wait: false, reason: "notAnUpdate" }],
  ["a missing status is recorded at once", { binding: seed(), trigger: "statusMissing" }, { wait: false, reason: "notAnUpdate" }],
  ["a scaled Duplicated binding waits", { binding: scaled(placed(binding("dup", { replicas: 2, placement: placements.duplicated() })), 4), trigger: "replicasChanged" }, { wait: true, ms: D, since: T0 }],
  [
    "a binding whose decision left a selected cluster without replicas still waits (the targets are as decided)",
    { binding: scaled(placed(binding("one", { replicas: 1, placement: { ...placements.seed(), replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } } })), 4), trigger: "replicasChanged" },
    { wait: true, ms: D, since: T0 },
  ],
  ["a scaled ClusterResourceBinding waits like a ResourceBinding", { binding: scaled(placed(binding("crd", { namespace: "", replicas: 3 })), 6), trigger: "replicasChanged" }, { wait: true, ms: D, since: T0 }],
  [
    "a binding placed without a recorded diagnosis is scheduled at once (nothing to compare the targets with)",
    { binding: (() => { const b = scaled(seed(), 6); delete b.status!.schedulingDiagnosis; return b; })(), trigger: "replicasChanged" },
    { wait: false, reason: "targetsMoved" },
  ],
];

for (const [name, input, want] of cases) {
  test(name, () => assert.deepEqual(debounceUpdate({ clusters, since: undefined, now: T0, debounceMs: D, ...input }), want));
}

test("the fixtures are what the cases assume: the seed is placed on member1:1 member2:2 and a scaled binding is a replica change", () => {
  const b = seed();
  assert.deepEqual(b.spec?.clusters, [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]);
  assert.equal(b.status?.conditions?.find((c) => c.type === "Scheduled")?.status, "True");
  assert.deepEqual(evicted(b, "member1").spec?.gracefulEvictionTasks?.map((t) => t.fromCluster), ["member1"]);
  const one = placed(binding("one", { replicas: 1, placement: { ...placements.seed(), replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } } }));
  assert.equal(one.spec?.clusters?.length, 1, "one replica over two equally weighted clusters lands on one");
  assert.equal(one.status?.schedulingDiagnosis?.feasible?.filter((f) => f.selected).length, 2, "both were selected");
});
