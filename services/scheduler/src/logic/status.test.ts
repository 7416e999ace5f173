import { test } from "node:test";
import assert from "node:assert/strict";
import { KARMADA, PolicyPlacementAnnotation, decodeTyped, type AnyResourceBinding } from "@flotilla/api";
import { schedule } from "@flotilla/scheduling";
import { binding, cluster, notReadyNoSchedule, placements } from "../fixtures.test-support.js";
import { observedOnly, sameOutcome, statusAfter, withScheduleResult } from "./status.js";

/** jsonb hands objects back with their keys in another order. */
function reorderKeys<T>(v: T): T {
  if (Array.isArray(v)) return v.map(reorderKeys) as T;
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().reverse().map((k) => [k, reorderKeys((v as Record<string, unknown>)[k])])) as T;
  return v;
}

const now = new Date("2026-03-01T10:00:00.123Z");
const clusters = [cluster("member1"), cluster("member2"), cluster("member3")];

test("a first schedule writes spec.clusters and the placement it was computed from", () => {
  const rb = binding("nginx", { replicas: 3 });
  const result = schedule({ binding: rb, clusters });
  const next = withScheduleResult(rb, result)!;
  assert.deepEqual(next.spec?.clusters, [
    { name: "member1", replicas: 1 },
    { name: "member2", replicas: 2 },
  ]);
  assert.deepEqual(JSON.parse(next.metadata.annotations![PolicyPlacementAnnotation]), rb.spec!.placement);
  assert.equal(rb.spec?.clusters, undefined, "the input is not changed");
});

test("a result already in place is not written again", () => {
  const rb = binding("nginx", { replicas: 3 });
  const next = withScheduleResult(rb, schedule({ binding: rb, clusters }))!;
  assert.equal(withScheduleResult(next, schedule({ binding: next, clusters })), undefined);
});

test("a NoClusterFit result clears spec.clusters and still records the placement", () => {
  const rb = binding("nginx", { replicas: 3, clusters: { member1: 1, member2: 2 }, placement: { ...placements.seed(), clusterAffinity: { clusterNames: ["nowhere"] } } });
  const result = schedule({ binding: rb, clusters });
  assert.equal(result.condition.reason, "NoClusterFit");
  const next = withScheduleResult(rb, result)!;
  assert.equal(next.spec?.clusters, undefined);
  assert.ok(next.metadata.annotations?.[PolicyPlacementAnnotation]);
});

test("an Unschedulable result leaves the spec alone", () => {
  const rb = binding("big", { replicas: 50, cpu: "1", placement: placements.dynamic(["member1"]) });
  const result = schedule({ binding: rb, clusters: [cluster("member1", { cpu: "2" })] });
  assert.equal(result.condition.reason, "Unschedulable");
  assert.equal(withScheduleResult(rb, result), undefined);
});

test("a success records the generation after the spec write, the time and the diagnosis, and keeps the rest of the status", () => {
  const rb: AnyResourceBinding = {
    ...binding("nginx", { replicas: 3 }),
    status: { aggregatedStatus: [{ clusterName: "member1", applied: true }], conditions: [{ type: "FullyApplied", status: "True" }] },
  };
  rb.metadata.generation = 4;
  const status = statusAfter(rb, schedule({ binding: rb, clusters }), { trigger: "placementChanged", now, clustersTotal: 3, maxFeasible: 25 });
  assert.equal(status.schedulerObservedGeneration, 4);
  assert.equal(status.lastScheduledTime, "2026-03-01T10:00:00Z");
  assert.deepEqual(status.aggregatedStatus, rb.status!.aggregatedStatus);
  assert.deepEqual(
    status.conditions?.map((c) => [c.type, c.status, c.reason]),
    [
      ["FullyApplied", "True", undefined],
      ["Scheduled", "True", "Success"],
    ],
  );
  assert.equal(status.schedulingDiagnosis?.trigger, "placementChanged");
  assert.deepEqual(status.schedulingDiagnosis?.rejected, [{ plugin: "ClusterAffinity", reason: "cluster(s) did not match the placement cluster affinity constraint", clusters: ["member3"] }]);
});

test("a failure sets only the condition and the diagnosis", () => {
  const rb = binding("nginx", { replicas: 3, placement: { ...placements.seed(), clusterAffinity: { clusterNames: ["member1"] } } });
  const result = schedule({ binding: rb, clusters: [cluster("member1", { taints: [notReadyNoSchedule] }), cluster("member2")] });
  const status = statusAfter(rb, result, { trigger: "placementChanged", now, clustersTotal: 2, maxFeasible: 25 });
  assert.equal(status.schedulerObservedGeneration, undefined);
  assert.equal(status.lastScheduledTime, undefined);
  assert.equal(status.conditions?.[0].reason, "NoClusterFit");
  assert.equal(status.conditions?.[0].message, "0/2 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.");
});

test("the same decision made again is recognised whatever the time and the clusters' free capacity", () => {
  const rb = binding("web", { replicas: 2, placement: placements.duplicated() });
  const s1 = statusAfter(rb, schedule({ binding: rb, clusters }), { trigger: "placementChanged", now, clustersTotal: 3, maxFeasible: 25 });
  const stored = { ...rb, status: reorderKeys(s1) };
  const busier = [cluster("member1", { pods: 50 }), cluster("member2"), cluster("member3")];
  const s2 = statusAfter(stored, schedule({ binding: stored, clusters: busier }), { trigger: "alwaysSchedule", now: new Date("2026-03-01T11:00:00Z"), clustersTotal: 3, maxFeasible: 25 });
  assert.ok(sameOutcome(stored.status, s2));
  const tainted = [cluster("member1", { taints: [notReadyNoSchedule] }), cluster("member2"), cluster("member3")];
  const s3 = statusAfter(rb, schedule({ binding: rb, clusters: tainted }), { trigger: "alwaysSchedule", now, clustersTotal: 3, maxFeasible: 25 });
  assert.ok(!sameOutcome(s1, s3), "a cluster rejected for a new reason is a new decision");
});

test("nothing to schedule only moves the observed generation, once", () => {
  const rb = binding("nginx", { replicas: 3 });
  rb.metadata.generation = 3;
  assert.deepEqual(observedOnly(rb), { schedulerObservedGeneration: 3 });
  assert.equal(observedOnly({ ...rb, status: { schedulerObservedGeneration: 3 } }), undefined);
});

test("the status with its diagnosis is valid ResourceBinding JSON and survives the API's decoding unchanged", () => {
  const rb = binding("nginx", { replicas: 3 });
  rb.metadata.generation = 2;
  const status = statusAfter(rb, schedule({ binding: rb, clusters }), { trigger: "placementChanged", now, clustersTotal: 3, maxFeasible: 10 });
  const decoded = decodeTyped(KARMADA.resourceBinding, { ...rb, status });
  assert.deepEqual(decoded.status.schedulingDiagnosis, status.schedulingDiagnosis);
  assert.equal(decoded.status.schedulingDiagnosis.feasible[0].score, 0, "explicit zeros are kept");
});

test("scheduling a Duplicated binding again on top of its own result is the same decision", () => {
  const rb = binding("web", { replicas: 2, placement: placements.duplicated(["member1", "member2"]) });
  const first = schedule({ binding: rb, clusters });
  const placed = { ...withScheduleResult(rb, first)!, status: statusAfter(rb, first, { trigger: "placementChanged", now, clustersTotal: 3, maxFeasible: 10 }) };
  const again = statusAfter(placed, schedule({ binding: placed, clusters }), { trigger: "alwaysSchedule", now: new Date("2026-03-01T12:00:00Z"), clustersTotal: 3, maxFeasible: 10 });
  assert.notEqual(again.schedulingDiagnosis?.feasible?.[0].score, placed.status.schedulingDiagnosis?.feasible?.[0].score, "ClusterLocality now scores the placed clusters");
  assert.ok(sameOutcome(placed.status, again));
});
