import { test } from "node:test";
import assert from "node:assert/strict";
import { FlotillaError, GrpcCode, InvalidError, type StatusReason } from "@flotilla/api";
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

// where each scheduling failure sits in the taxonomy, should one cross a front
const taxonomy: Array<[string, () => SchedulingError, string, StatusReason, number, GrpcCode, boolean]> = [
  ["a FitError: the binding does not fit the clusters as they are", () => new FitError(2, [["cluster(s) had untolerated taint {x:NoSchedule}"]]), "FitError", "Conflict", 409, GrpcCode.ABORTED, true],
  ["an UnschedulableError: not enough capacity", () => new UnschedulableError("Clusters available replicas are not enough to schedule."), "UnschedulableError", "Conflict", 409, GrpcCode.ABORTED, true],
  ["a scheduler error of the scheduler's own (a spread constraint not met)", () => new SchedulingError("SchedulerError", "the number of feasible clusters is less than spreadConstraint.MinGroups"), "SchedulingError", "Conflict", 409, GrpcCode.ABORTED, true],
  ["a placement the scheduler does not support", () => new SchedulingError("SchedulerError", "just support cluster and region spread constraint", { reason: "Invalid" }), "SchedulingError", "Invalid", 422, GrpcCode.INVALID_ARGUMENT, false],
  ["a wrapped FitError keeps its reason", () => wrapError("failed to select clusters", new FitError(1, [["x"]])), "FitError", "Conflict", 409, GrpcCode.ABORTED, true],
  ["a wrapped UnschedulableError keeps its reason", () => wrapError("failed to assign replicas", new UnschedulableError("short")), "UnschedulableError", "Conflict", 409, GrpcCode.ABORTED, true],
  ["a wrapped unsupported placement stays invalid", () => wrapError("failed to select clusters", new SchedulingError("SchedulerError", "x", { reason: "Invalid" })), "SchedulingError", "Invalid", 422, GrpcCode.INVALID_ARGUMENT, false],
  ["a wrapped FlotillaError keeps its reason", () => wrapError("scheduling failed", new InvalidError({ group: "", kind: "X", name: "x" }, [])), "SchedulingError", "Invalid", 422, GrpcCode.INVALID_ARGUMENT, false],
  ["a wrapped plain error (a bug) is internal", () => wrapError("scheduling failed", new TypeError("x is undefined")), "SchedulingError", "InternalError", 500, GrpcCode.INTERNAL, true],
  ["a wrapped thrown string is internal", () => wrapError("scheduling failed", "boom"), "SchedulingError", "InternalError", 500, GrpcCode.INTERNAL, true],
];
for (const [name, make, errName, reason, http, grpc, retryable] of taxonomy) {
  test(`taxonomy: ${name}`, () => {
    const e = make();
    assert.ok(e instanceof FlotillaError);
    assert.equal(FlotillaError.from(e), e);
    assert.equal(e.name, errName);
    assert.deepEqual([e.reason, e.httpStatus, e.code, e.retryable], [reason, http, grpc, retryable]);
    const status = e.toStatus();
    assert.deepEqual([status.reason, status.code], [reason, http]);
  });
}

test("taxonomy: a FitError keeps its fields and message, and its Status says it", () => {
  const e = new FitError(3, [["a"], ["a"]]);
  assert.equal(e.kind, "FitError");
  assert.equal(e.numAllClusters, 3);
  assert.equal(e.message, "0/3 clusters are available: 2 a.");
  assert.equal(e.toStatus().message, e.message);
});

test("taxonomy: an internal scheduling failure keeps its message and its Status says nothing of it", () => {
  const e = wrapError("scheduling failed", new TypeError("Cannot read properties of undefined (reading 'spec')"));
  assert.equal(e.message, "scheduling failed: Cannot read properties of undefined (reading 'spec')");
  assert.ok(e.cause instanceof TypeError);
  assert.equal(e.toStatus().message, "Internal error occurred: scheduling failed");
});
