import { test } from "node:test";
import assert from "node:assert/strict";
import type { Placement, TargetCluster } from "@flotilla/api";
import { assignReplicas } from "./assign.js";
import { SchedulingError } from "./errors.js";
import { divided, makeBinding, makeCluster, type BindingOptions } from "./fixtures.js";
import { buildContext } from "./framework.js";
import type { Candidate } from "./select.js";
import { uidTieBreaker } from "./webster.js";

/** Candidates named by the keys, with the given allocatable replicas, in that order. */
function run(o: BindingOptions, allocatable: Record<string, number>, order: Record<string, number> = {}, fresh = false): TargetCluster[] {
  const binding = makeBinding(o);
  const ctx = buildContext(binding, binding.status?.schedulerObservingAffinityName);
  const candidates: Candidate[] = Object.entries(allocatable).map(([name, a]) => ({
    cluster: makeCluster(name),
    name,
    score: 0,
    allocatable: a,
    available: a + (ctx.scheduled.get(name) ?? 0),
    overflowOrder: order[name] ?? 0,
  }));
  return assignReplicas(candidates, ctx, { tieBreaker: uidTieBreaker(""), fresh });
}
const asRecord = (ts: TargetCluster[]): Record<string, number> => Object.fromEntries(ts.map((t) => [t.name, t.replicas]));

const cases: Array<[string, BindingOptions, Record<string, number>, Record<string, number>]> = [
  ["a non-workload lands on every candidate with 0 replicas", { replicas: 0, placement: { replicaScheduling: divided.dynamic() } }, { a: 1, b: 0 }, { a: 0, b: 0 }],
  ["Duplicated gives every candidate all replicas", { replicas: 3, placement: { replicaScheduling: divided.duplicated() } }, { a: 0, b: 9 }, { a: 3, b: 3 }],
  ["no replica scheduling means Duplicated", { replicas: 2 }, { a: 1 }, { a: 2 }],
  ["static weights 1:2 split 3 replicas as 1 and 2", { replicas: 3, placement: { replicaScheduling: divided.staticWeights({ member1: 1, member2: 2 }) } }, { member1: 0, member2: 0 }, { member1: 1, member2: 2 }],
  ["static weights ignore capacity and the previous result", { replicas: 4, placement: { replicaScheduling: divided.staticWeights({ a: 1, b: 1 }) }, clusters: { a: 4 } }, { a: 0, b: 0 }, { a: 2, b: 2 }],
  ["a cluster off the static weight list gets nothing", { replicas: 4, placement: { replicaScheduling: divided.staticWeights({ a: 1 }) } }, { a: 0, b: 0 }, { a: 4 }],
  [
    "a cluster matching several static rules takes the largest weight",
    {
      replicas: 4,
      placement: {
        replicaScheduling: {
          replicaSchedulingType: "Divided",
          replicaDivisionPreference: "Weighted",
          weightPreference: { staticWeightList: [{ targetCluster: {}, weight: 1 }, { targetCluster: { clusterNames: ["b"] }, weight: 3 }] },
        },
      },
    },
    { a: 0, b: 0 },
    { a: 1, b: 3 },
  ],
  ["static rules matching no candidate weigh everyone 1", { replicas: 2, placement: { replicaScheduling: divided.staticWeights({ zzz: 5 }) } }, { a: 0, b: 0 }, { a: 1, b: 1 }],
  ["Weighted without a preference weighs everyone 1", { replicas: 3, placement: { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } } }, { a: 0, b: 0, c: 0 }, { a: 1, b: 1, c: 1 }],
  ["entries left with 0 replicas are dropped", { replicas: 1, placement: { replicaScheduling: divided.staticWeights({ a: 1, b: 1 }) } }, { a: 0, b: 0 }, { a: 1 }],
  ["dynamic weight divides by allocatable replicas on first schedule", { replicas: 3, placement: { replicaScheduling: divided.dynamic() } }, { a: 6, b: 3 }, { a: 2, b: 1 }],
  ["dynamic scale-up adds the difference onto the current placement", { replicas: 6, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 1, b: 2 } }, { a: 9, b: 9, c: 9 }, { a: 2, b: 3, c: 1 }],
  ["dynamic scale-up of 2/4/6 to 24 on equal capacity adds 4 to each: 6/8/10", { replicas: 24, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 2, b: 4, c: 6 } }, { a: 100, b: 100, c: 100 }, { a: 6, b: 8, c: 10 }],
  ["dynamic scale-up divides the added replicas by spare capacity, not by the current replicas", { replicas: 12, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 6, b: 2 } }, { a: 1, b: 3 }, { a: 7, b: 5 }],
  ["a current cluster with no spare capacity keeps its replicas and gets no more", { replicas: 8, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 5, b: 1 } }, { a: 0, b: 10 }, { a: 5, b: 3 }],
  ["dynamic scale-down of 6/8/10 to 12 shrinks each in proportion: 3/4/5", { replicas: 12, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 6, b: 8, c: 10 } }, { a: 100, b: 0, c: 0 }, { a: 3, b: 4, c: 5 }],
  ["replicas on clusters no longer candidates are added onto the remaining ones", { replicas: 8, placement: { replicaScheduling: divided.dynamic() }, clusters: { gone: 4, a: 2, b: 2 } }, { a: 10, b: 10 }, { a: 4, b: 4 }],
  ["a scale-down with a cluster no longer a candidate shrinks the remaining ones", { replicas: 4, placement: { replicaScheduling: divided.dynamic() }, clusters: { gone: 5, a: 3, b: 3 } }, { a: 0, b: 0 }, { a: 2, b: 2 }],
  ["dynamic scale-down shrinks in proportion to the current placement", { replicas: 3, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 4, b: 2 } }, { a: 0, b: 0, c: 99 }, { a: 2, b: 1 }],
  ["dynamic with the replicas already placed keeps the placement", { replicas: 3, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 1, b: 2 } }, { a: 50, b: 0, c: 50 }, { a: 1, b: 2 }],
  ["replicas on a cluster that is no longer a candidate are scheduled again", { replicas: 4, placement: { replicaScheduling: divided.dynamic() }, clusters: { gone: 2, a: 2 } }, { a: 0, b: 5 }, { a: 2, b: 2 }],
  ["Aggregated packs into as few clusters as possible", { replicas: 8, placement: { replicaScheduling: divided.aggregated() } }, { a: 5, b: 10, c: 1 }, { b: 8 }],
  ["Aggregated spills over only when the largest cluster is short", { replicas: 12, placement: { replicaScheduling: divided.aggregated() } }, { a: 5, b: 10, c: 1 }, { a: 4, b: 8 }],
  ["Aggregated scale-up prefers the clusters already used", { replicas: 4, placement: { replicaScheduling: divided.aggregated() }, clusters: { b: 2 } }, { a: 10, b: 5 }, { b: 4 }],
  ["Aggregated scale-up of 2/4/6 to 24 puts the added replicas on as few current clusters as possible", { replicas: 24, placement: { replicaScheduling: divided.aggregated() }, clusters: { a: 2, b: 4, c: 6 } }, { a: 100, b: 100, c: 100 }, { a: 14, b: 4, c: 6 }],
  ["Aggregated scale-up fills the current clusters' spare capacity before a larger new cluster", { replicas: 9, placement: { replicaScheduling: divided.aggregated() }, clusters: { a: 2, b: 2 } }, { a: 3, b: 2, c: 50 }, { a: 5, b: 4 }],
  ["Aggregated scale-up past the current clusters divides the added replicas over the prefix by spare capacity", { replicas: 10, placement: { replicaScheduling: divided.aggregated() }, clusters: { a: 2, b: 2 } }, { a: 3, b: 2, c: 50 }, { a: 2, b: 2, c: 6 }],
  ["Aggregated scale-down keeps the largest current cluster", { replicas: 4, placement: { replicaScheduling: divided.aggregated() }, clusters: { a: 3, b: 5 } }, { a: 0, b: 0 }, { b: 4 }],
];
for (const [name, o, allocatable, want] of cases) {
  test(name, () => assert.deepEqual(asRecord(run(o, allocatable)), want));
}

test("a manual reschedule divides afresh by allocatable plus current replicas", () => {
  const o: BindingOptions = {
    replicas: 4,
    placement: { replicaScheduling: divided.dynamic() },
    clusters: { a: 4 },
    rescheduleTriggeredAt: "2026-01-02T00:00:00Z",
    status: { lastScheduledTime: "2026-01-01T00:00:00Z" },
  };
  // weights a: 0+4, b: 4 → an even split instead of keeping a:4.
  assert.deepEqual(asRecord(run(o, { a: 0, b: 4 }, {}, true)), { a: 2, b: 2 });
});

const failures: Array<[string, BindingOptions, Record<string, number>, string, string]> = [
  ["no candidates is a scheduler error", { replicas: 1 }, {}, "SchedulerError", "no clusters available to schedule"],
  [
    "too little capacity to scale up is unschedulable",
    { replicas: 10, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 2 } },
    { a: 3, b: 2 },
    "Unschedulable",
    "failed to scale up: Clusters available replicas 5 are not enough to schedule.",
  ],
  [
    "an Aggregated first schedule short of capacity is unschedulable",
    { replicas: 10, placement: { replicaScheduling: divided.aggregated() } },
    { a: 3 },
    "Unschedulable",
    "failed to scale up: Clusters available replicas 3 are not enough to schedule.",
  ],
  [
    "an unknown division preference is unsupported",
    { replicas: 2, placement: { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Random" } } },
    { a: 3 },
    "SchedulerError",
    "unsupported replica scheduling strategy, replicaSchedulingType: Divided, replicaDivisionPreference: Random, please try another scheduling strategy",
  ],
];
for (const [name, o, allocatable, kind, message] of failures) {
  test(name, () => {
    assert.throws(
      () => run(o, allocatable),
      (e: unknown) => e instanceof SchedulingError && e.kind === kind && e.message === message,
    );
  });
}

test("an unsupported strategy is an invalid placement, not a server fault", () => {
  assert.throws(
    () => run({ replicas: 2, placement: { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Random" } } }, { a: 3 }),
    (e: unknown) => e instanceof SchedulingError && e.reason === "Invalid" && e.httpStatus === 422,
  );
});

const overflow: Placement = {
  replicaScheduling: divided.dynamic(),
  clusterAffinities: [{ affinityName: "main", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }],
};

test("overflow fills the primary tier first and the overflow tier with the rest", () => {
  const o: BindingOptions = { replicas: 5, placement: overflow, status: { schedulerObservingAffinityName: "main" } };
  assert.deepEqual(asRecord(run(o, { member1: 2, member2: 10 }, { member1: 0, member2: 1 })), { member1: 2, member2: 3 });
});

test("overflow stops once the primary tier holds everything", () => {
  const o: BindingOptions = { replicas: 2, placement: overflow, status: { schedulerObservingAffinityName: "main" } };
  assert.deepEqual(asRecord(run(o, { member1: 2, member2: 10 }, { member1: 0, member2: 1 })), { member1: 2 });
});

test("overflow short of capacity in every tier is unschedulable", () => {
  const o: BindingOptions = { replicas: 20, placement: overflow, status: { schedulerObservingAffinityName: "main" } };
  assert.throws(
    () => run(o, { member1: 2, member2: 10 }, { member1: 0, member2: 1 }),
    (e: unknown) => e instanceof SchedulingError && e.kind === "Unschedulable" && e.message === "Clusters available replicas are not enough to schedule.",
  );
});

test("an overflow scale-up fills the primary tier's spare capacity before the overflow tier", () => {
  const o: BindingOptions = { replicas: 6, placement: overflow, clusters: { member1: 2 }, status: { schedulerObservingAffinityName: "main" } };
  assert.deepEqual(asRecord(run(o, { member1: 1, member2: 10 }, { member1: 0, member2: 1 })), { member1: 3, member2: 3 });
});

test("an overflow scale-down gives back the overflow tier's replicas first", () => {
  const o: BindingOptions = { replicas: 4, placement: overflow, clusters: { member1: 3, member2: 3 }, status: { schedulerObservingAffinityName: "main" } };
  assert.deepEqual(asRecord(run(o, { member1: 0, member2: 0 }, { member1: 0, member2: 1 })), { member1: 3, member2: 1 });
});
