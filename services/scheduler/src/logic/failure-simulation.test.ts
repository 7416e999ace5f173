import { test } from "node:test";
import assert from "node:assert/strict";
import { BadRequestError, InvalidError, type AnyResourceBinding, type Cluster, type Toleration } from "@flotilla/api";
import { binding, cluster, placements } from "../fixtures.test-support.js";
import { failedCluster, parseFailureSimulation, simulateFailure, type BindingOutcome } from "./failure-simulation.js";

const NOW = new Date("2026-03-01T10:00:00.400Z");
const KNOWN = new Set(["member1", "member2", "member3"]);
const fleet = (): Cluster[] => [cluster("member1"), cluster("member2"), cluster("member3")];

function request(spec: unknown) {
  return { apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "FailureSimulation", metadata: { name: "what-if" }, spec };
}

function invalid(fn: () => unknown): Array<[string, string]> {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvalidError) return e.causes.map((c) => [c.field, c.reason]);
    throw e;
  }
  assert.fail("expected an InvalidError");
}

const brief = (o: BindingOutcome) => ({ name: o.name, result: o.result, after: o.after.map((p) => `${p.name}:${p.replicas}`) });
const unreachableFor = (seconds?: number): Toleration => ({ key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute", ...(seconds !== undefined ? { tolerationSeconds: seconds } : {}) });

test("a Divided binding on the failed cluster is evicted from it and moves to the survivor", () => {
  const nginx = binding("nginx", { replicas: 3, clusters: { member1: 1, member2: 2 } });
  const status = simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [nginx], now: NOW });
  assert.deepEqual(status.failedClusters, ["member1"]);
  assert.equal(status.bindings.length, 1);
  const [o] = status.bindings;
  assert.deepEqual(
    { kind: o.kind, namespace: o.namespace, name: o.name, result: o.result, before: o.before, after: o.after, tolerated: o.tolerated },
    {
      kind: "ResourceBinding",
      namespace: "default",
      name: "nginx-deployment",
      result: "Rescheduled",
      before: [
        { name: "member1", replicas: 1 },
        { name: "member2", replicas: 2 },
      ],
      after: [{ name: "member2", replicas: 3 }],
      tolerated: [],
    },
  );
  assert.deepEqual(o.evictions, [{ cluster: "member1", replicas: 1, taint: "cluster.karmada.io/unreachable:NoExecute", purgeMode: "Gracefully" }]);
  assert.equal(o.message, "Binding has been scheduled successfully.");
});

test("the capacity left per cluster counts the moved replicas; the failed cluster is marked and gets no after", () => {
  const nginx = binding("nginx", { replicas: 3, clusters: { member1: 1, member2: 2 }, cpu: "500m" });
  const status = simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [nginx], now: NOW });
  assert.deepEqual(status.capacity, [
    { name: "member1", failed: true, receives: 0, before: { pods: 110, cpu: "8", memory: "32Gi" } },
    { name: "member2", failed: false, receives: 1, before: { pods: 110, cpu: "8", memory: "32Gi" }, after: { pods: 109, cpu: "7500m", memory: "32Gi" } },
    { name: "member3", failed: false, receives: 0, before: { pods: 110, cpu: "8", memory: "32Gi" }, after: { pods: 110, cpu: "8", memory: "32Gi" } },
  ]);
});

test("a binding that no cluster fits keeps running where it is, and the answer names the FitError", () => {
  const only1 = binding("solo", { replicas: 2, clusters: { member1: 2 }, placement: placements.duplicated(["member1"]) });
  const [o] = simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [only1], now: NOW }).bindings;
  assert.equal(o.result, "NoClusterFit");
  assert.deepEqual(o.after, []);
  assert.equal(
    o.message,
    "no cluster fits, so it keeps running where it is until one does: 0/3 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable:NoSchedule}, 2 cluster(s) did not match the placement cluster affinity constraint.",
  );
});

test("a binding that tolerates the NoExecute taint without tolerationSeconds stays and is not rescheduled", () => {
  const b = binding("sticky", { replicas: 3, clusters: { member1: 1, member2: 2 } });
  b.spec!.placement!.clusterTolerations = [unreachableFor()];
  const status = simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [b], now: NOW });
  const [o] = status.bindings;
  assert.deepEqual(brief(o), { name: "sticky-deployment", result: "Tolerated", after: ["member1:1", "member2:2"] });
  assert.deepEqual(o.evictions, []);
  assert.deepEqual(o.tolerated, ["member1"]);
  assert.equal(status.capacity.find((c) => c.name === "member2")?.receives, 0);
});

test("a toleration with tolerationSeconds evicts after that many seconds, which is reported, and the binding moves", () => {
  const b = binding("patient", { replicas: 3, clusters: { member1: 1, member2: 2 } });
  b.spec!.placement!.clusterTolerations = [unreachableFor(300), { key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }];
  const [o] = simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [b], now: NOW }).bindings;
  assert.deepEqual(brief(o), { name: "patient-deployment", result: "Rescheduled", after: ["member2:3"] });
  assert.deepEqual(o.evictions, [{ cluster: "member1", replicas: 1, taint: "cluster.karmada.io/unreachable:NoExecute", afterSeconds: 300, purgeMode: "Gracefully" }]);
});

test("two bindings competing for the last capacity: the first in order wins, the second is Unschedulable", () => {
  const clusters = [cluster("member1"), cluster("member2", { pods: 1 })];
  const a = binding("a", { replicas: 1, clusters: { member1: 1 }, placement: placements.dynamic(["member1", "member2"]) });
  const b = binding("b", { replicas: 1, clusters: { member1: 1 }, placement: placements.dynamic(["member1", "member2"]) });
  // given in the other order: the answer's order is the simulation's own
  const status = simulateFailure({ failed: ["member1"], clusters, bindings: [b, a], now: NOW });
  assert.deepEqual(status.bindings.map(brief), [
    { name: "a-deployment", result: "Rescheduled", after: ["member2:1"] },
    { name: "b-deployment", result: "Unschedulable", after: [] },
  ]);
  assert.match(status.bindings[1].message, /^the evicted replicas are not placed elsewhere: .*Clusters available replicas 0 are not enough to schedule\.$/);
  assert.deepEqual(status.capacity.find((c) => c.name === "member2"), { name: "member2", failed: false, receives: 1, before: { pods: 1, cpu: "8", memory: "32Gi" }, after: { pods: 0, cpu: "8", memory: "32Gi" } });
});

test("the order is: evicted at once before evicted later, ClusterResourceBindings before ResourceBindings, then namespace/name", () => {
  const later = binding("later", { replicas: 1, clusters: { member1: 1 }, placement: placements.dynamic(["member1", "member2"]) });
  later.spec!.placement!.clusterTolerations = [unreachableFor(60)];
  const crb = binding("zz", { namespace: "", replicas: 1, clusters: { member1: 1 }, placement: placements.dynamic(["member1", "member2"]) });
  const rbB = binding("b", { namespace: "apps", replicas: 1, clusters: { member1: 1 }, placement: placements.dynamic(["member1", "member2"]) });
  const rbA = binding("a", { namespace: "web", replicas: 1, clusters: { member1: 1 }, placement: placements.dynamic(["member1", "member2"]) });
  const status = simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [later, rbA, rbB, crb], now: NOW });
  assert.deepEqual(
    status.bindings.map((o) => `${o.kind}/${o.namespace ?? ""}/${o.name}`),
    ["ClusterResourceBinding//zz-deployment", "ResourceBinding/apps/b-deployment", "ResourceBinding/web/a-deployment", "ResourceBinding/default/later-deployment"],
  );
});

test("the binding's failover.cluster.purgeMode is the eviction's, as the taint manager takes it", () => {
  const b = binding("direct", { replicas: 3, clusters: { member1: 1, member2: 2 } });
  b.spec!.failover = { cluster: { purgeMode: "Directly" } };
  const [o] = simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [b], now: NOW }).bindings;
  assert.equal(o.evictions[0].purgeMode, "Directly");
  assert.equal(o.result, "Rescheduled");
});

test("bindings not on a failed cluster, and deleting ones, are not listed", () => {
  const elsewhere = binding("elsewhere", { replicas: 2, clusters: { member2: 2 } });
  const going = binding("going", { replicas: 1, clusters: { member1: 1 } });
  going.metadata.deletionTimestamp = "2026-03-01T09:00:00Z";
  assert.deepEqual(simulateFailure({ failed: ["member1"], clusters: fleet(), bindings: [elsewhere, going], now: NOW }).bindings, []);
});

test("failing two clusters evicts from both; a binding another scheduler owns is evicted but not placed again", () => {
  const dup = binding("dup", { replicas: 2, clusters: { member1: 2, member2: 2, member3: 2 }, placement: placements.duplicated() });
  const other = binding("other", { replicas: 1, clusters: { member1: 1 } });
  other.spec!.schedulerName = "someone-else";
  const status = simulateFailure({ failed: ["member1", "member2"], clusters: fleet(), bindings: [dup, other], now: NOW });
  assert.deepEqual(status.bindings.map(brief), [
    { name: "dup-deployment", result: "Rescheduled", after: ["member3:2"] },
    { name: "other-deployment", result: "NotRescheduled", after: [] },
  ]);
  assert.deepEqual(status.bindings[0].evictions.map((e) => e.cluster), ["member1", "member2"]);
});

test("nothing given is changed: the bindings and clusters are as they were", () => {
  const nginx = binding("nginx", { replicas: 3, clusters: { member1: 1, member2: 2 } });
  const clusters = fleet();
  const copies = structuredClone({ nginx, clusters });
  simulateFailure({ failed: ["member1"], clusters, bindings: [nginx as AnyResourceBinding], now: NOW });
  assert.deepEqual({ nginx, clusters }, copies);
});

test("a failed cluster gets the unreachable member's taints and Ready Unknown; its other taints stay and not-ready goes", () => {
  const c = cluster("member1", { taints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }, { key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }] });
  const f = failedCluster(c, NOW);
  assert.deepEqual(f.spec?.taints, [
    { key: "dedicated", value: "gpu", effect: "NoSchedule" },
    { key: "cluster.karmada.io/unreachable", effect: "NoSchedule", timeAdded: "2026-03-01T10:00:00Z" },
    { key: "cluster.karmada.io/unreachable", effect: "NoExecute", timeAdded: "2026-03-01T10:00:00Z" },
  ]);
  assert.equal(f.status?.conditions?.find((x) => x.type === "Ready")?.status, "Unknown");
  assert.equal(c.spec?.taints?.length, 2, "the original is untouched");
});

test("a valid request gives the cluster names", () => {
  assert.deepEqual(parseFailureSimulation(request({ clusters: ["member1", "member3"] }), KNOWN).clusters, ["member1", "member3"]);
});

test("an unknown cluster name is refused, naming spec.clusters[i]", () => {
  assert.deepEqual(invalid(() => parseFailureSimulation(request({ clusters: ["member1", "member9"] }), KNOWN)), [["spec.clusters[1]", "FieldValueNotFound"]]);
});

test("a cluster named twice is refused as a duplicate, naming the second", () => {
  assert.deepEqual(invalid(() => parseFailureSimulation(request({ clusters: ["member2", "member2"] }), KNOWN)), [["spec.clusters[1]", "FieldValueDuplicate"]]);
});

test("an empty list, a missing list and a missing spec are refused", () => {
  assert.deepEqual(invalid(() => parseFailureSimulation(request({ clusters: [] }), KNOWN)), [["spec.clusters", "FieldValueRequired"]]);
  assert.deepEqual(invalid(() => parseFailureSimulation(request({}), KNOWN)), [["spec.clusters", "FieldValueRequired"]]);
  assert.deepEqual(invalid(() => parseFailureSimulation({ apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "FailureSimulation" }, KNOWN)), [["spec", "FieldValueRequired"]]);
});

test("hostile shapes are refused field by field", () => {
  assert.deepEqual(invalid(() => parseFailureSimulation({ apiVersion: "v1", kind: "Simulation", metadata: 3, spec: { clusters: [7, ""], extra: 1 }, junk: true }, KNOWN)), [
    ["apiVersion", "FieldValueInvalid"],
    ["kind", "FieldValueInvalid"],
    ["metadata", "FieldValueInvalid"],
    ["junk", "FieldValueUnknown"],
    ["spec.extra", "FieldValueUnknown"],
    ["spec.clusters[0]", "FieldValueInvalid"],
    ["spec.clusters[1]", "FieldValueInvalid"],
  ]);
  assert.deepEqual(invalid(() => parseFailureSimulation(request({ clusters: "member1" }), KNOWN)), [["spec.clusters", "FieldValueInvalid"]]);
  assert.throws(() => parseFailureSimulation([1], KNOWN), BadRequestError);
});
