import { test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { BadRequestError, InvalidError, type KubeStatus } from "@flotilla/api";
import { FitError, SchedulingError, UnschedulableError, wrapError } from "@flotilla/scheduling";
import { toGrpcError } from "./grpc.js";

const statusOf = (e: grpc.ServiceError) => JSON.parse(String(e.metadata.get("k8s-status")[0])) as KubeStatus;

// what the Simulate and SimulateFailure handlers answer for what a simulator throws
const cases: Array<[string, unknown, grpc.status, string, number, string | RegExp]> = [
  ["a FitError is a conflict with the clusters as they are, not INTERNAL", new FitError(2, [["cluster(s) did not match the placement cluster affinity constraint"]]), grpc.status.ABORTED, "Conflict", 409, "0/2 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint."],
  ["an UnschedulableError is a conflict too", new UnschedulableError("Clusters available replicas are not enough to schedule."), grpc.status.ABORTED, "Conflict", 409, "Clusters available replicas are not enough to schedule."],
  ["a wrapped scheduling failure keeps its reason and message", wrapError("failed to assign replicas", new UnschedulableError("short")), grpc.status.ABORTED, "Conflict", 409, "failed to assign replicas: short"],
  ["an unsupported placement is invalid", new SchedulingError("SchedulerError", "just support cluster and region spread constraint", { reason: "Invalid" }), grpc.status.INVALID_ARGUMENT, "Invalid", 422, "just support cluster and region spread constraint"],
  ["a scheduling failure around a bug is INTERNAL and says nothing of it", wrapError("scheduling failed", new TypeError("secret detail")), grpc.status.INTERNAL, "InternalError", 500, "Internal error occurred: scheduling failed"],
  ["a bad simulation is INVALID_ARGUMENT", new InvalidError({ group: "scheduling.flotilla.io", kind: "Simulation", name: "s" }, [{ field: "spec", reason: "FieldValueRequired", message: "Required value" }]), grpc.status.INVALID_ARGUMENT, "Invalid", 422, /spec: Required value/],
  ["a body that is no object is INVALID_ARGUMENT", new BadRequestError("the request body must be a Simulation object"), grpc.status.INVALID_ARGUMENT, "BadRequest", 400, "the request body must be a Simulation object"],
  ["a lost Postgres connection is UNAVAILABLE", Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), grpc.status.UNAVAILABLE, "ServiceUnavailable", 503, /try again/],
  ["a plain error is INTERNAL and says nothing of it", new Error("secret detail"), grpc.status.INTERNAL, "InternalError", 500, "Internal error occurred: the simulation could not be completed"],
];
for (const [name, err, code, reason, http, message] of cases) {
  test(name, () => {
    const ge = toGrpcError(err);
    assert.equal(ge.code, code);
    const s = statusOf(ge);
    assert.equal(s.reason, reason);
    assert.equal(s.code, http);
    if (typeof message === "string") assert.equal(s.message, message);
    else assert.match(s.message ?? "", message);
    assert.doesNotMatch(ge.details, /secret detail/);
  });
}
