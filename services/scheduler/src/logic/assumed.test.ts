import { test } from "node:test";
import assert from "node:assert/strict";
import type { AggregatedStatusItem, AnyResourceBinding, Cluster } from "@flotilla/api";
import { allocatableReplicas } from "@flotilla/scheduling";
import { AssumedLedger, REPORT_CLOCK_SKEW_MS, bindingLoad, capacityInputs, reportedReplicas, summaryTakenAt, type BindingLoad } from "./assumed.js";

const SETTLE = 1000;

/** A load view: targets cluster → replicas, reported cluster → running replicas, 100m cpu each. */
const view = (targets: Record<string, number>, reported: Record<string, number> = {}, request: Record<string, number> = { cpu: 100 }): BindingLoad => ({
  targets: new Map(Object.entries(targets)),
  request,
  reported: new Map(Object.entries(reported)),
});

const loads = (l: AssumedLedger, now: number, reportTimes?: (cluster: string) => number | undefined) => Object.fromEntries([...l.load(now, reportTimes)].map(([c, v]) => [c, v.pods]));

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

// The member reports a binding's replicas running; the cluster's capacity report (its resource
// summary, stamped by the Ready heartbeat) may be taken before or after that.
const LONG_SETTLE = 30_000;
const SKEW = REPORT_CLOCK_SKEW_MS;
interface ReportCase {
  /** Replicas assigned per cluster at t=0. */
  assigned: Record<string, number>;
  /** Replicas reported running per cluster, seen at t=1000. */
  reported: Record<string, number>;
  /** When each cluster's capacity report was taken (absent: not known). */
  reportTimes: Record<string, number>;
  /** When the load is read. */
  now: number;
  /** Assumed pods per cluster then. */
  want: Record<string, number>;
}
const SEEN = 1000;
const reportCases: Array<[string, ReportCase]> = [
  ["a replica reported running stops counting as soon as a capacity report taken after it is held", { assigned: { m1: 3 }, reported: { m1: 3 }, reportTimes: { m1: SEEN + SKEW + 500 }, now: SEEN + SKEW + 600, want: {} }],
  ["a capacity report taken before the replica was seen running does not let it go", { assigned: { m1: 3 }, reported: { m1: 3 }, reportTimes: { m1: SEEN - 1 }, now: SEEN + 5000, want: { m1: 3 } }],
  ["a capacity report from a clock up to the allowed skew ahead does not let it go", { assigned: { m1: 3 }, reported: { m1: 3 }, reportTimes: { m1: SEEN + SKEW - 1 }, now: SEEN + 5000, want: { m1: 3 } }],
  ["a capacity report taken the allowed skew after the replica was seen lets it go", { assigned: { m1: 3 }, reported: { m1: 3 }, reportTimes: { m1: SEEN + SKEW }, now: SEEN + 5000, want: {} }],
  ["only the replicas reported by then are let go", { assigned: { m1: 3 }, reported: { m1: 2 }, reportTimes: { m1: SEEN + 5000 }, now: SEEN + 5000, want: { m1: 1 } }],
  ["a capacity report of one cluster lets nothing go on another", { assigned: { m1: 2, m2: 1 }, reported: { m1: 2, m2: 1 }, reportTimes: { m1: SEEN + 5000 }, now: SEEN + 5000, want: { m2: 1 } }],
  ["without a report time a replica still settles when the settle period ends", { assigned: { m1: 3 }, reported: { m1: 3 }, reportTimes: {}, now: SEEN + LONG_SETTLE, want: {} }],
  ["without a report time a replica counts until the settle period ends", { assigned: { m1: 3 }, reported: { m1: 3 }, reportTimes: {}, now: SEEN + LONG_SETTLE - 1, want: { m1: 3 } }],
  ["replicas not reported running count whatever the capacity reports", { assigned: { m1: 3 }, reported: {}, reportTimes: { m1: SEEN + 5000 }, now: SEEN + 5000, want: { m1: 3 } }],
];
for (const [name, c] of reportCases) {
  test(name, () => {
    const l = new AssumedLedger(LONG_SETTLE);
    l.observe("ns/a", "10", view(c.assigned), 0);
    l.observe("ns/a", "11", view(c.assigned, c.reported), SEEN);
    assert.deepEqual(loads(l, c.now, (n) => c.reportTimes[n]), c.want);
  });
}

test("reports let go stay let go when a later read passes no report times", () => {
  const l = new AssumedLedger(LONG_SETTLE);
  l.observe("ns/a", "10", view({ m1: 3 }, { m1: 3 }), SEEN);
  assert.deepEqual(loads(l, SEEN + 5000, () => SEEN + 5000), {});
  assert.deepEqual(loads(l, SEEN + 5001), {});
});

test("what the ledger has let go of on a cluster is the later of the settle period and its capacity report, less the skew", () => {
  const l = new AssumedLedger(LONG_SETTLE);
  assert.equal(l.settledThrough("m1", 100_000), 100_000 - LONG_SETTLE);
  assert.equal(l.settledThrough("m1", 100_000, () => 90_000), 90_000 - SKEW);
  assert.equal(l.settledThrough("m1", 100_000, () => 10_000), 100_000 - LONG_SETTLE);
});

const releaseCases: Array<[string, (l: AssumedLedger) => void, boolean]> = [
  ["a new assignment is no release", (l) => l.observe("ns/b", "20", view({ m1: 1 }), 10), false],
  ["an assignment that grows is no release", (l) => l.observe("ns/a", "11", view({ m1: 3 }), 10), false],
  ["the same version seen again is no release", (l) => l.observe("ns/a", "11", view({ m1: 2 }), 10), false],
  ["an assignment that shrinks is a release", (l) => l.observe("ns/a", "11", view({ m1: 1 }), 10), true],
  ["an assignment that moves is a release", (l) => l.observe("ns/a", "11", view({ m2: 2 }), 10), true],
  ["a binding that goes is a release", (l) => l.observe("ns/a", "11", undefined, 10), true],
  ["a report that settles is a release", (l) => (l.observe("ns/a", "11", view({ m1: 2 }, { m1: 2 }), 10), l.load(20, () => 10 + SKEW)), true],
  ["a report that has not settled yet is no release", (l) => (l.observe("ns/a", "11", view({ m1: 2 }, { m1: 2 }), 10), l.load(20, () => 10)), false],
  ["a decision taken back is a release", (l) => l.assume("ns/a", "10", view({ m1: 2, m2: 1 }), 10)(), true],
];
for (const [name, step, want] of releaseCases) {
  test(name, () => {
    const l = new AssumedLedger(LONG_SETTLE);
    l.observe("ns/a", "10", view({ m1: 2 }), 0);
    const before = l.releases;
    step(l);
    assert.equal(l.releases > before, want);
  });
}

const heartbeat = (status: string, at?: string, summary = true): Cluster => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name: "m1" },
  status: {
    conditions: [{ type: "Ready", status, ...(at ? { lastHeartbeatTime: at } : {}) }],
    ...(summary ? { resourceSummary: { allocatable: { pods: "750" } } } : {}),
  },
});
const takenCases: Array<[string, Cluster, number | undefined]> = [
  ["a Ready cluster's summary was taken at its heartbeat", heartbeat("True", "2026-11-29T10:00:05Z"), Date.parse("2026-11-29T10:00:05Z")],
  ["a cluster that is not Ready may keep an old summary under a new heartbeat", heartbeat("False", "2026-11-29T10:00:05Z"), undefined],
  ["a cluster without a heartbeat says nothing of its summary's time", heartbeat("True"), undefined],
  ["a cluster without a summary has no summary time", heartbeat("True", "2026-11-29T10:00:05Z", false), undefined],
  ["an unreadable heartbeat says nothing", heartbeat("True", "yesterday"), undefined],
];
for (const [name, c, want] of takenCases) test(name, () => assert.equal(summaryTakenAt(c), want));

// issue 22: 750 pod slots per cluster, 600 pods running (150 free). The last 150 of them were
// reported running a moment ago and are in the summary as allocated: the cluster has room for 150.
test("a cluster whose capacity report has room is not treated as full because of replicas the report already counts", () => {
  const seen = Date.parse("2026-11-29T10:00:00Z");
  const full: Cluster = {
    ...heartbeat("True", "2026-11-29T10:00:02Z"),
    status: {
      conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: "2026-11-29T10:00:02Z" }],
      resourceSummary: { allocatable: { pods: "750", cpu: "96", memory: "768Gi" }, allocated: { pods: "600", cpu: "60", memory: "37.5Gi" } },
    },
  };
  const l = new AssumedLedger(LONG_SETTLE);
  for (let i = 0; i < 50; i++) {
    l.observe(`ns/d${i}`, "10", view({ m1: 3 }, {}, { cpu: 100, memory: 64 * 2 ** 20 }), seen - 5000);
    l.observe(`ns/d${i}`, "11", view({ m1: 3 }, { m1: 3 }, { cpu: 100, memory: 64 * 2 ** 20 }), seen);
  }
  const spec = { replicas: 3, replicaRequirements: { resourceRequest: { cpu: "100m", memory: "64Mi" } } };
  const now = seen + 3000;
  assert.deepEqual(allocatableReplicas([full], spec, capacityInputs(l, [full], undefined, now)), [150]);
  // the estimator's answer from the same probe is not cut by them either
  const estimator = { replicas: new Map([["m1", 150]]), takenAt: new Map([["m1", Date.parse("2026-11-29T10:00:02.300Z")]]) };
  assert.deepEqual(allocatableReplicas([full], spec, capacityInputs(l, [full], estimator, now)), [150]);
});

test("an estimator answer taken before the replicas the ledger let go of is not used for that cluster", () => {
  const l = new AssumedLedger(LONG_SETTLE);
  l.observe("ns/a", "10", view({ m1: 3 }, { m1: 3 }), Date.parse("2026-11-29T10:00:00Z"));
  const c = heartbeat("True", "2026-11-29T10:00:05Z");
  const old = { replicas: new Map([["m1", 900]]), takenAt: new Map([["m1", Date.parse("2026-11-29T09:59:59Z")]]) };
  const got = capacityInputs(l, [c], old, Date.parse("2026-11-29T10:00:06Z"));
  assert.deepEqual([...got.estimates!], [["m1", -1]]);
  assert.deepEqual([...got.assumed!], []);
});

test("without the ledger the estimator's answers are used as they are", () => {
  const answer = { replicas: new Map([["m1", 9]]), takenAt: new Map([["m1", 0]]) };
  assert.deepEqual(capacityInputs(undefined, [heartbeat("True", "2026-11-29T10:00:05Z")], answer, Date.parse("2026-11-29T10:00:06Z")), { estimates: answer.replicas });
});
