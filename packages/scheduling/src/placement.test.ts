import { test } from "node:test";
import assert from "node:assert/strict";
import type { Placement, ResourceBindingSpec } from "@flotilla/api";
import { divided, makeBinding } from "./fixtures.js";
import { assignStrategy, hasReplicas, isStaticWeight, isWorkload, rescheduleRequired, startAffinityIndex, type AssignStrategy } from "./placement.js";

const strategies: Array<[string, Placement, AssignStrategy | undefined]> = [
  ["no replica scheduling is Duplicated", {}, "Duplicated"],
  ["an empty scheduling type is Duplicated", { replicaScheduling: {} }, "Duplicated"],
  ["Divided and Aggregated is Aggregated", { replicaScheduling: divided.aggregated() }, "Aggregated"],
  ["Divided and Weighted with a dynamic weight is DynamicWeight", { replicaScheduling: divided.dynamic() }, "DynamicWeight"],
  ["a dynamic weight overrides a static list", { replicaScheduling: { ...divided.staticWeights({ a: 1 }), weightPreference: { staticWeightList: [{ targetCluster: {}, weight: 1 }], dynamicWeight: "AvailableReplicas" } } }, "DynamicWeight"],
  ["Divided and Weighted with a static list is StaticWeight", { replicaScheduling: divided.staticWeights({ a: 1 }) }, "StaticWeight"],
  ["Divided without a preference is unsupported", { replicaScheduling: { replicaSchedulingType: "Divided" } }, undefined],
  ["an unknown scheduling type is unsupported", { replicaScheduling: { replicaSchedulingType: "Sharded" } }, undefined],
];
for (const [name, placement, want] of strategies) {
  test(name, () => assert.equal(assignStrategy(placement), want));
}

const statics: Array<[string, Placement, boolean]> = [
  ["a static list is static weight", { replicaScheduling: divided.staticWeights({ a: 1 }) }, true],
  ["Weighted without a preference is static weight", { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } }, true],
  ["an empty weight preference is not static weight", { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: {} } }, false],
  ["dynamic weight is not static weight", { replicaScheduling: divided.dynamic() }, false],
  ["Duplicated is not static weight", { replicaScheduling: divided.duplicated() }, false],
];
for (const [name, placement, want] of statics) {
  test(name, () => assert.equal(isStaticWeight(placement), want));
}

const reschedules: Array<[string, string | undefined, string | undefined, boolean]> = [
  ["a trigger after the last schedule asks for a reschedule", "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z", true],
  ["a trigger before the last schedule does not", "2025-12-31T00:00:00Z", "2026-01-01T00:00:00Z", false],
  ["a trigger without a last schedule does not", "2026-01-02T00:00:00Z", undefined, false],
  ["no trigger does not", undefined, "2026-01-01T00:00:00Z", false],
];
for (const [name, triggered, last, want] of reschedules) {
  test(name, () => {
    const b = makeBinding({ replicas: 1, rescheduleTriggeredAt: triggered, status: last ? { lastScheduledTime: last } : {} });
    assert.equal(rescheduleRequired(b.spec!, b.status), want);
  });
}

const list: Placement = { clusterAffinities: [{ affinityName: "a" }, { affinityName: "b" }, { affinityName: "c" }] };
const starts: Array<[string, string | undefined, string | undefined, number]> = [
  ["an unobserved list starts at the first term", undefined, undefined, 0],
  ["an observed term is where scheduling resumes", "b", undefined, 1],
  ["an unknown observed term starts at the first term", "zzz", undefined, 0],
  ["a manual reschedule starts at the first term", "c", "2027-01-01T00:00:00Z", 0],
];
for (const [name, observed, triggered, want] of starts) {
  test(name, () => {
    const b = makeBinding({
      replicas: 1,
      placement: list,
      rescheduleTriggeredAt: triggered,
      status: { schedulerObservingAffinityName: observed, lastScheduledTime: "2026-01-01T00:00:00Z" },
    });
    assert.equal(startAffinityIndex(b), want);
  });
}

const workloads: Array<[string, ResourceBindingSpec, boolean, boolean]> = [
  ["replicas make a workload with replicas", { replicas: 3 }, true, true],
  ["a Deployment scaled to 0 whose pods request resources is a workload without replicas", { replicas: 0, replicaRequirements: { resourceRequest: { cpu: "100m" } } }, true, false],
  ["empty replica requirements still make a workload, as a non-nil pointer upstream", { replicaRequirements: {} }, true, false],
  ["no replicas and no requirements is not a workload", { replicas: 0 }, false, false],
  ["a ConfigMap's binding is not a workload", {}, false, false],
];
for (const [name, spec, workload, replicas] of workloads) {
  test(name, () => {
    assert.equal(isWorkload(spec), workload);
    assert.equal(hasReplicas(spec), replicas);
  });
}
