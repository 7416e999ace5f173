import { test } from "node:test";
import assert from "node:assert/strict";
import { rfc3339, type Cluster, type Condition, type Taint } from "@flotilla/api";
import {
  noExecuteSignature,
  NotReadyNoExecute,
  NotReadyNoSchedule,
  TerminatingNoExecute,
  UnreachableNoExecute,
  UnreachableNoSchedule,
  applyTaintPlan,
  planTaints,
  taintString,
  type TaintPlan,
} from "./taints.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const MIN = 60_000;
const at = (ms: number) => rfc3339(T0 + ms);
const ready = (status: string, transitionMs: number, heartbeatMs?: number): Condition => ({
  type: "Ready",
  status,
  lastTransitionTime: at(transitionMs),
  ...(heartbeatMs !== undefined ? { lastHeartbeatTime: at(heartbeatMs) } : {}),
});
const names = (ts: Taint[]) => ts.map(taintString).sort();

const cases: Array<[string, Parameters<typeof planTaints>[0], { add: Taint[]; remove: Taint[]; recheckAt?: number }]> = [
  [
    "a new cluster without a Ready condition gets not-ready:NoSchedule",
    { ready: undefined, deleting: false, failover: true, failoverEvictionTimeoutMs: 5 * MIN, now: T0 },
    { add: [NotReadyNoSchedule], remove: [] },
  ],
  [
    "Ready False adds not-ready:NoSchedule at once, drops unreachable:NoSchedule, and waits for the timeout before NoExecute",
    { ready: ready("False", 0), deleting: false, failover: true, failoverEvictionTimeoutMs: 5 * MIN, now: T0 + MIN },
    { add: [NotReadyNoSchedule], remove: [UnreachableNoSchedule], recheckAt: T0 + 5 * MIN },
  ],
  [
    "Ready False for longer than failover-eviction-timeout adds not-ready:NoExecute and drops unreachable:NoExecute",
    { ready: ready("False", 0), deleting: false, failover: true, failoverEvictionTimeoutMs: 5 * MIN, now: T0 + 5 * MIN },
    { add: [NotReadyNoSchedule, NotReadyNoExecute], remove: [UnreachableNoSchedule, UnreachableNoExecute] },
  ],
  [
    "Ready Unknown adds unreachable:NoSchedule at once and drops not-ready:NoSchedule",
    { ready: ready("Unknown", 0), deleting: false, failover: true, failoverEvictionTimeoutMs: 5 * MIN, now: T0 + 1000 },
    { add: [UnreachableNoSchedule], remove: [NotReadyNoSchedule], recheckAt: T0 + 5 * MIN },
  ],
  [
    "Ready Unknown counts the timeout from the last heartbeat, not from the transition",
    { ready: ready("Unknown", 40_000, 0), deleting: false, failover: true, failoverEvictionTimeoutMs: 5 * MIN, now: T0 + 5 * MIN },
    { add: [UnreachableNoSchedule, UnreachableNoExecute], remove: [NotReadyNoSchedule, NotReadyNoExecute] },
  ],
  [
    "with failover off a long-unready cluster gets no NoExecute taint",
    { ready: ready("False", 0), deleting: false, failover: false, failoverEvictionTimeoutMs: 5 * MIN, now: T0 + 60 * MIN },
    { add: [NotReadyNoSchedule], remove: [UnreachableNoSchedule] },
  ],
  [
    "Ready True removes all four not-ready and unreachable taints",
    { ready: ready("True", 0), deleting: false, failover: true, failoverEvictionTimeoutMs: 5 * MIN, now: T0 },
    { add: [], remove: [NotReadyNoSchedule, UnreachableNoSchedule, NotReadyNoExecute, UnreachableNoExecute] },
  ],
  [
    "a cluster being deleted gets terminating:NoExecute and nothing else changes",
    { ready: ready("True", 0), deleting: true, failover: true, failoverEvictionTimeoutMs: 5 * MIN, now: T0 },
    { add: [TerminatingNoExecute], remove: [] },
  ],
];

for (const [name, input, want] of cases) {
  test(name, () => {
    const got = planTaints(input);
    assert.deepEqual(names(got.add), names(want.add));
    assert.deepEqual(names(got.remove), names(want.remove));
    assert.equal(got.recheckAt, want.recheckAt);
  });
}

const user: Taint = { key: "dedicated", value: "gpu", effect: "NoExecute", timeAdded: at(-MIN) };
const applyCases: Array<[string, Taint[] | undefined, TaintPlan, Taint[] | undefined]> = [
  ["a missing taint is added with timeAdded now", undefined, { add: [NotReadyNoSchedule], remove: [] }, [{ ...NotReadyNoSchedule, timeAdded: at(0) }]],
  [
    "an existing taint keeps its original timeAdded, so nothing changes",
    [{ ...NotReadyNoSchedule, timeAdded: at(-MIN) }],
    { add: [NotReadyNoSchedule], remove: [UnreachableNoSchedule] },
    undefined,
  ],
  [
    "a user's taint with another key is left alone while the controller's go",
    [user, { ...UnreachableNoSchedule, timeAdded: at(-MIN) }],
    { add: [NotReadyNoSchedule], remove: [UnreachableNoSchedule] },
    [user, { ...NotReadyNoSchedule, timeAdded: at(0) }],
  ],
  [
    "identity is key and effect: removing not-ready:NoSchedule keeps not-ready:NoExecute",
    [{ ...NotReadyNoSchedule, timeAdded: at(-MIN) }, { ...NotReadyNoExecute, timeAdded: at(-MIN) }],
    { add: [], remove: [NotReadyNoSchedule] },
    [{ ...NotReadyNoExecute, timeAdded: at(-MIN) }],
  ],
];

for (const [name, taints, plan, want] of applyCases) {
  test(name, () => {
    assert.deepEqual(applyTaintPlan(taints, plan, T0)?.taints, want);
  });
}

test("the NoExecute signature changes with the NoExecute taints only, not their order or other taints", () => {
  const c = (taints: Taint[]): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: { taints } });
  const a = { key: "a", effect: "NoExecute", timeAdded: "2026-11-27T08:00:00Z" } as Taint;
  const b = { key: "b", value: "x", effect: "NoExecute" } as Taint;
  const soft = { key: "s", effect: "NoSchedule" } as Taint;
  const cases: [string, Cluster | undefined, Cluster | undefined, boolean][] = [
    ["the same taints", c([a, b]), c([a, b]), true],
    ["another order", c([a, b]), c([b, a]), true],
    ["a NoSchedule taint added", c([a]), c([a, soft]), true],
    ["a NoExecute taint added", c([a]), c([a, b]), false],
    ["a taint added again later (timeAdded)", c([a]), c([{ ...a, timeAdded: "2026-11-27T08:05:00Z" }]), false],
    ["a value changed", c([b]), c([{ ...b, value: "y" }]), false],
    ["the cluster gone", c([]), undefined, false],
    ["no taints either way", c([]), c([soft]), true],
  ];
  for (const [name, x, y, same] of cases) assert.equal(noExecuteSignature(x) === noExecuteSignature(y), same, name);
});
