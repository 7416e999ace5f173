import { test } from "node:test";
import assert from "node:assert/strict";
import type { AggregatedStatusItem, AnyResourceBinding } from "@flotilla/api";
import { AssumedLedger, bindingLoad, reportedReplicas, type BindingLoad } from "./assumed.js";

const SETTLE = 1000;

/** A load view: targets cluster → replicas, reported cluster → running replicas, 100m cpu each. */
const view = (targets: Record<string, number>, reported: Record<string, number> = {}, request: Record<string, number> = { cpu: 100 }): BindingLoad => ({
  targets: new Map(Object.entries(targets)),
  request,
  reported: new Map(Object.entries(reported)),
});

const loads = (l: AssumedLedger, now: number) => Object.fromEntries([...l.load(now)].map(([c, v]) => [c, v.pods]));

test("an assignment counts as assumed at once", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 2, m2: 1 }), 0);
  assert.deepEqual(loads(l, 0), { m1: 2, m2: 1 });
  assert.deepEqual(l.load(0).get("m1")?.resources, { cpu: 200 });
});

test("reported replicas stop counting only once they have settled", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 3 }), 0);
  l.observe("ns/a", "11", view({ m1: 3 }, { m1: 2 }), 100);
  assert.deepEqual(loads(l, 100), { m1: 3 });
  assert.deepEqual(loads(l, 100 + SETTLE - 1), { m1: 3 });
  assert.deepEqual(loads(l, 100 + SETTLE), { m1: 1 });
  l.observe("ns/a", "12", view({ m1: 3 }, { m1: 3 }), 2000);
  assert.deepEqual(loads(l, 2000 + SETTLE), {});
});

test("a report that drops counts at once", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 3 }, { m1: 3 }), 0, { initial: true });
  assert.deepEqual(loads(l, 0), {});
  l.observe("ns/a", "11", view({ m1: 3 }, { m1: 1 }), 10);
  assert.deepEqual(loads(l, 10), { m1: 2 });
});

test("what was reported before the scheduler started counts as settled", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 3, m2: 2 }, { m1: 3, m2: 1 }), 0, { initial: true });
  assert.deepEqual(loads(l, 0), { m2: 1 });
});

test("a binding that moves away or goes stops counting at once", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 3 }), 0);
  l.observe("ns/a", "11", view({ m2: 3 }), 5);
  assert.deepEqual(loads(l, 5), { m2: 3 });
  l.observe("ns/a", "12", undefined, 6);
  assert.deepEqual(loads(l, 6), {});
});

test("an older version arriving late is ignored", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "12", view({ m2: 3 }), 0);
  l.observe("ns/a", "11", view({ m1: 3 }), 1);
  assert.deepEqual(loads(l, 1), { m2: 3 });
  l.observe("ns/a", "13", undefined, 2);
  l.observe("ns/a", "12", view({ m2: 3 }), 3);
  assert.deepEqual(loads(l, 3), {});
});

test("a decision counts before it is written, and the version it was made on cannot undo it", () => {
  const l = new AssumedLedger(SETTLE);
  l.assume("ns/a", "10", view({ m1: 2 }), 0);
  l.observe("ns/a", "10", view({}), 1);
  assert.deepEqual(loads(l, 1), { m1: 2 });
  l.observe("ns/a", "11", view({ m1: 2 }), 2);
  assert.deepEqual(loads(l, 2), { m1: 2 });
});

test("a decision whose write failed is taken back", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 1 }), 0);
  const undo = l.assume("ns/a", "10", view({ m1: 1, m2: 2 }), 1);
  assert.deepEqual(loads(l, 1), { m1: 1, m2: 2 });
  undo();
  assert.deepEqual(loads(l, 1), { m1: 1 });
});

test("taking a decision back leaves a newer version seen meanwhile alone", () => {
  const l = new AssumedLedger(SETTLE);
  const undo = l.assume("ns/a", "10", view({ m1: 2 }), 0);
  l.observe("ns/a", "11", view({ m3: 4 }), 1);
  undo();
  assert.deepEqual(loads(l, 1), { m3: 4 });
});

test("loads of several bindings add up per cluster, resources included", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 2 }, {}, { cpu: 100, memory: 10 }), 0);
  l.observe("ns/b", "11", view({ m1: 1, m2: 1 }, {}, { cpu: 500 }), 0);
  l.observe("c", "12", view({ m2: 2 }, {}, {}), 0);
  const m1 = l.load(0).get("m1")!;
  assert.deepEqual([m1.pods, m1.resources], [3, { cpu: 700, memory: 20 }]);
  assert.equal(l.load(0).get("m2")!.pods, 3);
  l.forget("ns/b");
  assert.deepEqual(loads(l, 0), { m1: 2, m2: 2 });
});

test("more reported than assigned (a scale-down in flight) assumes nothing", () => {
  const l = new AssumedLedger(SETTLE);
  l.observe("ns/a", "10", view({ m1: 2 }, { m1: 5 }), 0, { initial: true });
  assert.deepEqual(loads(l, 0), {});
});

const item = (clusterName: string, applied: boolean, status?: Record<string, number>): AggregatedStatusItem => ({ clusterName, applied, ...(status ? { status } : {}) });

const reports: Array<[string, string, AggregatedStatusItem, number | undefined]> = [
  ["a Deployment not applied yet reports nothing", "Deployment", item("m", false), undefined],
  ["a Deployment counts its ready replicas", "Deployment", item("m", true, { replicas: 3, readyReplicas: 2 }), 2],
  ["a Deployment without readyReplicas has none ready", "Deployment", item("m", true, { replicas: 3 }), 0],
  ["a StatefulSet counts its ready replicas", "StatefulSet", item("m", true, { readyReplicas: 1 }), 1],
  ["a Job counts its active and succeeded pods", "Job", item("m", true, { active: 2, succeeded: 1 }), 3],
  ["another kind with readyReplicas counts them", "Widget", item("m", true, { readyReplicas: 4 }), 4],
  ["another kind without them counts as fully reported once applied", "Widget", item("m", true, {}), 7],
];
for (const [name, kind, it, want] of reports) test(name, () => assert.equal(reportedReplicas(kind, it, 7), want));

const binding = (o: { replicas?: number; clusters?: Record<string, number>; deleting?: boolean; cpu?: string; status?: AggregatedStatusItem[] }): AnyResourceBinding => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ResourceBinding",
  metadata: { name: "a", namespace: "ns", ...(o.deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
  spec: {
    resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "ns", name: "a" },
    replicas: o.replicas ?? 3,
    ...(o.cpu ? { replicaRequirements: { resourceRequest: { cpu: o.cpu, memory: "64Mi" } } } : {}),
    clusters: Object.entries(o.clusters ?? {}).map(([name, replicas]) => ({ name, replicas })),
  },
  ...(o.status ? { status: { aggregatedStatus: o.status } } : {}),
});

test("a binding's load holds its targets, its request per replica and what its members report", () => {
  const v = bindingLoad(binding({ clusters: { m1: 1, m2: 2 }, cpu: "250m", status: [item("m1", true, { readyReplicas: 1 }), item("m2", true, {}), item("m9", true, { readyReplicas: 5 })] }))!;
  assert.deepEqual(Object.fromEntries(v.targets), { m1: 1, m2: 2 });
  assert.deepEqual(v.request, { cpu: 250, memory: 64 * 2 ** 20 });
  assert.deepEqual(Object.fromEntries(v.reported), { m1: 1 });
});

const noLoad: Array<[string, AnyResourceBinding]> = [
  ["a deleting binding takes no capacity", binding({ clusters: { m1: 3 }, deleting: true })],
  ["a non-workload takes no capacity", binding({ replicas: 0, clusters: { m1: 0 } })],
  ["an unplaced binding takes no capacity", binding({})],
];
for (const [name, b] of noLoad) test(name, () => assert.equal(bindingLoad(b), undefined));
