import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster } from "@flotilla/api";
import { binding, cluster, notReadyNoSchedule, placements } from "../fixtures.test-support.js";
import { affectedBy, clusterChangeFansOut, mayUnpark } from "./cluster-change.js";

const bump = (c: Cluster, f: (c: Cluster) => void): Cluster => {
  const n = structuredClone(c);
  n.metadata.resourceVersion = String(Number(c.metadata.resourceVersion ?? "1") + 1);
  f(n);
  return n;
};
const m1 = { ...cluster("member1"), metadata: { ...cluster("member1").metadata, generation: 1, resourceVersion: "1" } };
const tainted = bump(m1, (c) => ((c.spec!.taints = [notReadyNoSchedule]), (c.metadata.generation = 2)));
const relabelled = bump(m1, (c) => (c.metadata.labels = { env: "prod" }));
const deleting = bump(m1, (c) => (c.metadata.deletionTimestamp = "2026-01-01T00:00:00Z"));
const heartbeat = bump(m1, (c) => (c.status!.conditions![0].lastHeartbeatTime = "2026-01-01T00:00:10Z"));
const drained = bump(m1, (c) => (c.status!.resourceSummary!.allocated = { pods: "100" }));

test("a new cluster alone does not re-schedule anything", () => assert.equal(clusterChangeFansOut(undefined, m1), false));
test("a cluster gone, deleting, relabelled or re-specced re-schedules", () => {
  assert.equal(clusterChangeFansOut(m1, undefined), true);
  assert.equal(clusterChangeFansOut(m1, deleting), true);
  assert.equal(clusterChangeFansOut(m1, relabelled), true);
  assert.equal(clusterChangeFansOut(m1, tainted), true);
});
test("a status-only change does not re-schedule", () => {
  assert.equal(clusterChangeFansOut(m1, heartbeat), false);
  assert.equal(clusterChangeFansOut(m1, drained), false);
});
test("parked bindings are retried on new clusters and capacity changes, not on heartbeats", () => {
  assert.equal(mayUnpark(undefined, m1), true);
  assert.equal(mayUnpark(m1, drained), true);
  assert.equal(mayUnpark(m1, tainted), true);
  assert.equal(mayUnpark(m1, heartbeat), false);
  assert.equal(mayUnpark(m1, undefined), false);
});

const rbAffinity = binding("nginx", { replicas: 3 }); // clusterNames member1, member2
const rbOther = binding("other", { replicas: 3, placement: placements.duplicated(["member2"]) });
const rbNoAffinity = binding("any", { replicas: 3, placement: placements.duplicated() });
const rbTargets = binding("pinned", { replicas: 3, placement: placements.duplicated(["member2"]), clusters: { member1: 3 } });
const foreign = { ...binding("foreign"), spec: { ...binding("foreign").spec, schedulerName: "other-scheduler" } };

test("a binding whose affinity matches the cluster, or that has none, is affected", () => {
  assert.equal(affectedBy(rbAffinity, "member1", m1, relabelled, "default-scheduler"), true);
  assert.equal(affectedBy(rbNoAffinity, "member1", m1, relabelled, "default-scheduler"), true);
  assert.equal(affectedBy(rbOther, "member1", m1, relabelled, "default-scheduler"), false);
});
test("a binding targeting a cluster that is gone is affected, others are not", () => {
  assert.equal(affectedBy(rbTargets, "member1", m1, undefined, "default-scheduler"), true);
  assert.equal(affectedBy(rbNoAffinity, "member1", m1, undefined, "default-scheduler"), false);
});
test("bindings for another scheduler are never affected", () => {
  assert.equal(affectedBy(foreign, "member1", m1, relabelled, "default-scheduler"), false);
});
