import { test } from "node:test";
import assert from "node:assert/strict";
import { FitError, fitErrorMessage, SchedulingError, UnschedulableError, wrapError } from "./errors.js";

const messages: Array<[string, number, string[][], string]> = [
  ["no clusters at all reads as no cluster exists", 0, [], "0/0 clusters are available: no cluster exists."],
  ["clusters but no diagnosed failure also reads as no cluster exists", 2, [], "0/2 clusters are available: no cluster exists."],
  [
    "reasons are counted and sorted as strings",
    3,
    [
      ["cluster(s) did not match the placement cluster affinity constraint"],
      ["cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"],
      ["cluster(s) did not match the placement cluster affinity constraint"],
    ],
    "0/3 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}, 2 cluster(s) did not match the placement cluster affinity constraint.",
  ],
  [
    "counts sort as text, so 10 comes before 2",
    12,
    [...Array.from({ length: 10 }, () => ["b"]), ["a"], ["a"]],
    "0/12 clusters are available: 10 b, 2 a.",
  ],
];
for (const [name, n, reasons, want] of messages) {
  test(name, () => {
    assert.equal(fitErrorMessage(n, reasons), want);
    assert.equal(new FitError(n, reasons).message, want);
  });
}

test("wrapping keeps the kind and prefixes the message", () => {
  const e = wrapError("failed to assign replicas", wrapError("failed to scale up", new UnschedulableError("Clusters available replicas 2 are not enough to schedule.")));
  assert.equal(e.kind, "Unschedulable");
  assert.equal(e.message, "failed to assign replicas: failed to scale up: Clusters available replicas 2 are not enough to schedule.");
});

test("wrapping a plain error makes a scheduler error", () => {
  const e = wrapError("failed to select clusters", new Error("boom"));
  assert.ok(e instanceof SchedulingError);
  assert.equal(e.kind, "SchedulerError");
  assert.equal(e.message, "failed to select clusters: boom");
});
