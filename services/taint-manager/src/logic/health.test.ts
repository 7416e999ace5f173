import { test } from "node:test";
import assert from "node:assert/strict";
import { rfc3339, type Condition } from "@flotilla/api";
import { monitorHealth, type MonitorDecision, type MonitorInput } from "./health.js";
import { HeartbeatObserver } from "./heartbeats.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => rfc3339(T0 + ms);
const base = { creationTimestamp: at(0), deleting: false, graceMs: 40_000, startupGraceMs: 60_000 };
const ready = (status: string, heartbeatMs?: number): Condition => ({
  type: "Ready",
  status,
  lastTransitionTime: at(0),
  ...(heartbeatMs !== undefined ? { lastHeartbeatTime: at(heartbeatMs) } : {}),
});

const cases: Array<[string, Partial<MonitorInput> & { now: number; ready: Condition | undefined }, MonitorDecision["kind"], { reason?: string; recheckAt?: number }]> = [
  ["a heartbeat within the grace period keeps the status and looks again when it would run out", { ready: ready("True", 10_000), now: T0 + 30_000 }, "fresh", { recheckAt: T0 + 50_001 }],
  ["a Ready True whose heartbeat is older than the grace period becomes Unknown", { ready: ready("True", 0), now: T0 + 40_001 }, "stale", { reason: "ClusterStatusUnknown" }],
  ["a Ready False whose heartbeat is older than the grace period becomes Unknown too", { ready: ready("False", 0), now: T0 + 41_000 }, "stale", { reason: "ClusterStatusUnknown" }],
  ["a Ready condition without a heartbeat is not judged", { ready: ready("True"), now: T0 + 3_600_000 }, "fresh", {}],
  ["an Unknown condition stays as it is", { ready: ready("Unknown", 0), now: T0 + 3_600_000 }, "fresh", {}],
  ["a new cluster gets the startup grace period before anything happens", { ready: undefined, now: T0 + 59_000 }, "fresh", { recheckAt: T0 + 60_001 }],
  ["a cluster that never reported after the startup grace period becomes Unknown (never updated)", { ready: undefined, now: T0 + 61_000 }, "stale", { reason: "ClusterStatusNeverUpdated" }],
  ["a Pull cluster whose lease renewal was seen within the grace period stays, though its heartbeat is old", { ready: ready("True", 0), observedAt: T0, leaseObservedAt: T0 + 30_000, now: T0 + 60_000 }, "fresh", { recheckAt: T0 + 70_001 }],
  ["a Pull cluster whose heartbeat and lease both went quiet for the grace period becomes Unknown", { ready: ready("True", 0), observedAt: T0, leaseObservedAt: T0 + 5_000, now: T0 + 45_001 }, "stale", { reason: "ClusterStatusUnknown" }],
  ["a fresh heartbeat keeps a Pull cluster whose lease was last seen long ago", { ready: ready("True", 50_000), observedAt: T0 + 50_000, leaseObservedAt: T0, now: T0 + 80_000 }, "fresh", { recheckAt: T0 + 90_001 }],
  ["a Ready condition without a heartbeat is judged by the lease renewals seen", { ready: ready("True"), leaseObservedAt: T0 + 10_000, now: T0 + 50_001 }, "stale", { reason: "ClusterStatusUnknown" }],
  ["a Pull cluster without a Ready condition but with lease renewals gets the startup grace from the last renewal seen", { ready: undefined, leaseObservedAt: T0 + 50_000, now: T0 + 100_000 }, "fresh", { recheckAt: T0 + 110_001 }],
  ["a Pull cluster without a Ready condition whose lease stopped becomes Unknown (never updated) after the startup grace", { ready: undefined, leaseObservedAt: T0 + 50_000, now: T0 + 110_001 }, "stale", { reason: "ClusterStatusNeverUpdated" }],
  ["an Unknown Pull cluster stays Unknown while its lease renews (the agent's status brings it back)", { ready: ready("Unknown", 0), leaseObservedAt: T0 + 3_600_000, now: T0 + 3_600_000 }, "fresh", {}],
  ["a cluster being deleted is not monitored", { ready: ready("True", 0), now: T0 + 3_600_000, deleting: true }, "fresh", {}],
];

for (const [name, input, kind, want] of cases) {
  test(name, () => {
    const d = monitorHealth({ ...base, ...input });
    assert.equal(d.kind, kind);
    if (d.kind === "stale") {
      assert.equal(d.condition.status, "Unknown");
      assert.equal(d.condition.reason, want.reason);
      assert.equal(d.condition.lastTransitionTime, at(input.now - T0));
    } else {
      assert.equal(d.recheckAt, want.recheckAt);
    }
  });
}

test("the Unknown condition keeps the last heartbeat, so the NoExecute timeout still counts from it", () => {
  const d = monitorHealth({ ...base, ready: ready("True", 5_000), now: T0 + 50_000 });
  assert.equal(d.kind, "stale");
  assert.equal(d.kind === "stale" && d.condition.lastHeartbeatTime, at(5_000));
});

test("the grace period counts from when this controller first saw the heartbeat, not from its timestamp", () => {
  // the control plane was down for an hour: the heartbeat is old, but first seen just now
  const d = monitorHealth({ ...base, ready: ready("True", 0), observedAt: T0 + 3_600_000, now: T0 + 3_600_000 + 1_000 });
  assert.deepEqual(d, { kind: "fresh", recheckAt: T0 + 3_600_000 + 40_001 });
  const later = monitorHealth({ ...base, ready: ready("True", 0), observedAt: T0 + 3_600_000, now: T0 + 3_600_000 + 40_001 });
  assert.equal(later.kind, "stale");
});

const observed: Array<[string, Array<[string | undefined, number]>, Array<number | undefined>]> = [
  ["a heartbeat seen for the first time is seen now", [["b1", 100]], [100]],
  ["the same heartbeat keeps the time it was first seen", [["b1", 100], ["b1", 5_000]], [100, 100]],
  ["a new heartbeat is seen now", [["b1", 100], ["b2", 5_000]], [100, 5_000]],
  ["no heartbeat has no time", [[undefined, 100]], [undefined]],
];
for (const [name, steps, want] of observed) {
  test(name, () => {
    const o = new HeartbeatObserver();
    assert.deepEqual(steps.map(([beat, now]) => o.observe("m1", beat, now)), want);
  });
}

test("a forgotten cluster's heartbeat is seen anew", () => {
  const o = new HeartbeatObserver();
  o.observe("m1", "b1", 100);
  o.forget("m1");
  assert.equal(o.observe("m1", "b1", 900), 900);
});

test("a lease renewal seen after a restart starts the grace period afresh, as a heartbeat does", () => {
  // the control plane was down for an hour; the lease's renewTime is new to this process
  const leases = new HeartbeatObserver();
  const seen = leases.observe("member3", "2026-01-01T00:00:00.000000Z", T0 + 3_600_000);
  const d = monitorHealth({ ...base, ready: ready("True", 0), leaseObservedAt: seen, now: T0 + 3_600_000 + 39_000 });
  assert.deepEqual(d, { kind: "fresh", recheckAt: T0 + 3_600_000 + 40_001 });
  // the same renewTime seen again does not move the time
  assert.equal(leases.observe("member3", "2026-01-01T00:00:00.000000Z", T0 + 3_600_000 + 39_000), T0 + 3_600_000);
});
