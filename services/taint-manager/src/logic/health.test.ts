import { test } from "node:test";
import assert from "node:assert/strict";
import type { Condition } from "@flotilla/api";
import { monitorHealth, type MonitorDecision, type MonitorInput } from "./health.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
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
