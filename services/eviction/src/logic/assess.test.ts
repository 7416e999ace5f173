import { test } from "node:test";
import assert from "node:assert/strict";
import { rfc3339, type GracefulEvictionTask, type ResourceBindingSpec, type ResourceBindingStatus } from "@flotilla/api";
import { assessTasks, replacementScheduled, type AssessInput } from "./assess.js";
import type { ClusterState } from "./cluster-state.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const MIN = 60_000;
const TIMEOUT = 10 * MIN;
const at = (ms: number) => rfc3339(T0 + ms);
const divided = { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } };
const task = (o: Partial<GracefulEvictionTask> = {}): GracefulEvictionTask => ({
  fromCluster: "member1",
  replicas: 1,
  reason: "TaintUntolerated",
  producer: "TaintManager",
  purgeMode: "Gracefully",
  creationTimestamp: at(0),
  ...o,
});
const healthyStatus = (gen: number, ...clusters: string[]): ResourceBindingStatus => ({
  schedulerObservedGeneration: gen,
  aggregatedStatus: clusters.map((c) => ({ clusterName: c, applied: true, health: "Healthy" })),
});

function input(o: Partial<AssessInput> & { spec: ResourceBindingSpec }): AssessInput {
  return { status: undefined, generation: 2, clusters: new Map<string, ClusterState>([["member1", "unhealthy"]]), timeoutMs: TIMEOUT, now: T0 + MIN, ...o };
}

type Want = { verdict: string; kept: number; clusters?: string[]; retryMs?: number | "none" };
const cases: Array<[string, AssessInput, Want]> = [
  [
    "a new task gets its creationTimestamp and is kept, nothing else is judged",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [task({ creationTimestamp: undefined })] }, status: healthyStatus(2, "member2") }),
    { verdict: "keep:Stamped", kept: 1, retryMs: MIN },
  ],
  [
    "the task is dropped once the scheduler caught up and every scheduled cluster is Healthy",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [task()] }, status: healthyStatus(2, "member2") }),
    { verdict: "drop:ReplacementHealthy", kept: 0, retryMs: "none" },
  ],
  [
    "the task is kept while the scheduler has not observed the latest generation",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [task()] }, status: healthyStatus(1, "member2") }),
    { verdict: "keep:WaitingForReplacement", kept: 1, retryMs: MIN },
  ],
  [
    "the task is kept while a scheduled cluster reports Unhealthy, Unknown or nothing",
    input({
      spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 2 }, { name: "member3", replicas: 1 }], gracefulEvictionTasks: [task()] },
      status: { schedulerObservedGeneration: 2, aggregatedStatus: [{ clusterName: "member2", health: "Healthy" }, { clusterName: "member3", health: "Unknown" }] },
    }),
    { verdict: "keep:WaitingForReplacement", kept: 1 },
  ],
  [
    "an empty schedule is not a healthy replacement (Karmada #7455 would delete the last copy)",
    input({ spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task()] }, status: { schedulerObservedGeneration: 2, aggregatedStatus: [] } }),
    { verdict: "keep:WaitingForReplacement", kept: 1 },
  ],
  [
    "fewer replicas scheduled than desired, all healthy, is not a replacement either",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 2 }], gracefulEvictionTasks: [task()] }, status: healthyStatus(2, "member2") }),
    { verdict: "keep:WaitingForReplacement", kept: 1 },
  ],
  [
    "at the timeout a task whose replacement is scheduled but not yet healthy is dropped",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [task()] }, now: T0 + TIMEOUT + 1000 }),
    { verdict: "drop:Timeout", kept: 0, retryMs: "none" },
  ],
  [
    "past the timeout with nothing scheduled and the cluster still down the task is kept, and so the last copy",
    input({ spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task({ replicas: 3 })] }, now: T0 + TIMEOUT + 1000 }),
    { verdict: "keep:NoReplacement", kept: 1, retryMs: MIN },
  ],
  [
    "past the timeout with nothing scheduled and the cluster recovered the task goes and the cluster returns to the schedule (Karmada #5782)",
    input({
      spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task({ replicas: 3 })] },
      clusters: new Map([["member1", "recovered"]]),
      now: T0 + TIMEOUT + 1000,
    }),
    { verdict: "drop:ClusterRecovered", kept: 0, clusters: ["member1:3"], retryMs: "none" },
  ],
  [
    "a recovered cluster comes back with only the replicas still missing",
    input({
      spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 2 }], gracefulEvictionTasks: [task({ replicas: 2 })] },
      clusters: new Map([["member1", "recovered"]]),
      now: T0 + TIMEOUT + 1000,
    }),
    { verdict: "drop:ClusterRecovered", kept: 0, clusters: ["member2:2", "member1:1"] },
  ],
  [
    "a recovered cluster of a Duplicated workload comes back with all replicas",
    input({ spec: { replicas: 2, clusters: [], gracefulEvictionTasks: [task({ replicas: 2 })] }, clusters: new Map([["member1", "recovered"]]), now: T0 + TIMEOUT + 1000 }),
    { verdict: "drop:ClusterRecovered", kept: 0, clusters: ["member1:2"] },
  ],
  [
    "before its timeout a task is kept even if its cluster recovered",
    input({ spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task({ replicas: 3 })] }, clusters: new Map([["member1", "recovered"]]) }),
    { verdict: "keep:WaitingForReplacement", kept: 1, clusters: [] },
  ],
  [
    "past the timeout a task whose cluster is gone is dropped",
    input({ spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task({ replicas: 3 })] }, clusters: new Map([["member1", "gone"]]), now: T0 + TIMEOUT + 1000 }),
    { verdict: "drop:Timeout", kept: 0, clusters: [] },
  ],
  [
    "the task's own gracePeriodSeconds replaces the controller's timeout",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [task({ gracePeriodSeconds: 30 })] }, now: T0 + 31_000 }),
    { verdict: "drop:Timeout", kept: 0 },
  ],
  [
    "suppressDeletion true keeps the task for good and asks for no retry",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [task({ suppressDeletion: true })] }, status: healthyStatus(2, "member2"), now: T0 + 2 * TIMEOUT }),
    { verdict: "keep:SuppressDeletion", kept: 1, retryMs: "none" },
  ],
  [
    "suppressDeletion false drops the task at once",
    input({ spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task({ suppressDeletion: false })] } }),
    { verdict: "drop:SuppressDeletionFalse", kept: 0 },
  ],
  [
    "a task whose cluster is scheduled again is dropped, the Work being in use again",
    input({ spec: { replicas: 3, placement: divided, clusters: [{ name: "member1", replicas: 3 }], gracefulEvictionTasks: [task()] } }),
    { verdict: "drop:ScheduledAgain", kept: 0 },
  ],
  [
    "the retry comes at the soonest expiry when that is sooner than a tenth of the timeout",
    input({ spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task({ creationTimestamp: at(0) })] }, now: T0 + TIMEOUT - 5000 }),
    { verdict: "keep:WaitingForReplacement", kept: 1, retryMs: 5001 },
  ],
  [
    "a non-workload (no replicas) is replaced by any scheduled cluster",
    input({ spec: { clusters: [{ name: "member2" }], gracefulEvictionTasks: [task({ replicas: undefined })] }, status: healthyStatus(2, "member2") }),
    { verdict: "drop:ReplacementHealthy", kept: 0 },
  ],
];

for (const [name, inp, want] of cases) {
  test(name, () => {
    const a = assessTasks(inp);
    const v = a.outcomes[0].verdict;
    assert.equal(`${v.action}:${v.why}`, want.verdict);
    assert.equal(a.tasks.length, want.kept);
    if (want.clusters) assert.deepEqual(a.clusters.map((c) => `${c.name}:${c.replicas ?? 0}`), want.clusters);
    if (want.retryMs === "none") assert.equal(a.retryMs, undefined);
    else if (want.retryMs !== undefined) assert.equal(a.retryMs, want.retryMs);
    assert.equal(a.changed, v.action === "drop" || v.why === "Stamped");
  });
}

test("tasks are judged one by one and the kept ones keep their order", () => {
  const a = assessTasks(
    input({
      spec: {
        replicas: 3,
        placement: divided,
        clusters: [{ name: "member3", replicas: 3 }],
        gracefulEvictionTasks: [task({ fromCluster: "a", suppressDeletion: true }), task({ fromCluster: "b", suppressDeletion: false }), task({ fromCluster: "c", creationTimestamp: undefined })],
      },
    }),
  );
  assert.deepEqual(a.tasks.map((t) => t.fromCluster), ["a", "c"]);
  assert.equal(a.tasks[1].creationTimestamp, at(MIN));
});

test("nothing to change leaves the binding alone", () => {
  const a = assessTasks(input({ spec: { replicas: 3, placement: divided, clusters: [], gracefulEvictionTasks: [task()] } }));
  assert.equal(a.changed, false);
});

const sched: Array<[string, ResourceBindingSpec, boolean]> = [
  ["no cluster is no replacement", { replicas: 3, clusters: [] }, false],
  ["a Duplicated workload is replaced by one full copy", { replicas: 3, clusters: [{ name: "m2", replicas: 3 }] }, true],
  ["a Divided workload needs all its replicas scheduled", { replicas: 3, placement: divided, clusters: [{ name: "m2", replicas: 2 }] }, false],
  ["a Divided workload with all replicas scheduled is replaced", { replicas: 3, placement: divided, clusters: [{ name: "m2", replicas: 1 }, { name: "m3", replicas: 2 }] }, true],
];
for (const [name, spec, want] of sched) test(name, () => assert.equal(replacementScheduled(spec), want));

test("a Healthy report from before the reschedule (fewer ready replicas than now scheduled there) is not the replacement", () => {
  const spec: ResourceBindingSpec = { replicas: 3, placement: divided, clusters: [{ name: "member2", replicas: 3 }], gracefulEvictionTasks: [task()] };
  const stale = assessTasks(input({ spec, status: { schedulerObservedGeneration: 2, aggregatedStatus: [{ clusterName: "member2", health: "Healthy", status: { replicas: 2, readyReplicas: 2 } }] } }));
  assert.equal(stale.outcomes[0].verdict.why, "WaitingForReplacement");
  const fresh = assessTasks(input({ spec, status: { schedulerObservedGeneration: 2, aggregatedStatus: [{ clusterName: "member2", health: "Healthy", status: { replicas: 3, readyReplicas: 3 } }] } }));
  assert.equal(fresh.outcomes[0].verdict.why, "ReplacementHealthy");
});
