import { test } from "node:test";
import assert from "node:assert/strict";
import { KARMADA } from "@flotilla/api";
import { actorOf, describeChange, placementHistoryList, type ChangeRecord, type PlacementChange } from "./placement-history.js";

const T = "2026-01-01T00:00:00Z";
const rec = (o: Partial<ChangeRecord>): ChangeRecord => ({ resourceVersion: "7", time: T, from: [], to: [], cause: {}, ...o });
const c = (name: string, replicas?: number) => ({ name, ...(replicas ? { replicas } : {}) });
const taint = { fromCluster: "member1", reason: "TaintUntolerated", producer: "TaintManager", message: "taint {cluster.karmada.io/not-ready:NoExecute} is not tolerated" };

test("describeChange", async (t) => {
  const cases: [string, ChangeRecord, Omit<PlacementChange, "time" | "resourceVersion" | "from" | "to">][] = [
    [
      "a first schedule is the scheduler's trigger and result, with its condition's message",
      rec({ to: [c("member1", 1), c("member2", 2)], actor: "service:scheduler", cause: { diagnosis: { trigger: "placementChanged", result: "Success" }, scheduled: { reason: "Success", message: "Binding has been scheduled successfully." } } }),
      { trigger: "placementChanged", reason: "Success", message: "Binding has been scheduled successfully.", actor: { kind: "Service", name: "scheduler" } },
    ],
    [
      "a taint eviction names the task's reason, producer and message",
      rec({ from: [c("member1", 1), c("member2", 2)], to: [c("member2", 2)], actor: "service:taint-manager", cause: { addedTasks: [taint] } }),
      { trigger: "eviction", reason: "TaintUntolerated", message: taint.message, producer: "TaintManager", actor: { kind: "Service", name: "taint-manager" } },
    ],
    [
      "an application failover names its own reason",
      rec({ from: [c("a")], to: [], cause: { addedTasks: [{ fromCluster: "a", reason: "ApplicationFailure", producer: "ResourceBindingController" }] } }),
      { trigger: "eviction", reason: "ApplicationFailure", producer: "ResourceBindingController" },
    ],
    [
      "two clusters evicted in one write give both messages once each",
      rec({ from: [c("a"), c("b"), c("d")], to: [c("d")], cause: { addedTasks: [{ ...taint, fromCluster: "a" }, { ...taint, fromCluster: "b" }] } }),
      { trigger: "eviction", reason: "TaintUntolerated", message: taint.message, producer: "TaintManager" },
    ],
    [
      "a task added for a cluster still in the placement is no eviction: the scheduler's decision names it",
      rec({ from: [c("a")], to: [c("a"), c("b")], cause: { addedTasks: [{ ...taint, fromCluster: "a" }], diagnosis: { trigger: "replicasChanged", result: "Success" } } }),
      { trigger: "replicasChanged", reason: "Success" },
    ],
    [
      "an evicted cluster put back after it recovered is evictionReverted",
      rec({ from: [], to: [c("member1", 3)], actor: "service:eviction", cause: { removedTasks: [taint] } }),
      { trigger: "evictionReverted", reason: "ClusterRecovered", message: "member1 recovered with nothing scheduled in its place: put back into the placement", producer: "TaintManager", actor: { kind: "Service", name: "eviction" } },
    ],
    [
      "a task dropped while the scheduler moves the binding is the scheduler's change",
      rec({ from: [c("member2", 2)], to: [c("member2", 3)], cause: { removedTasks: [taint], diagnosis: { trigger: "replicasChanged", result: "Success" } } }),
      { trigger: "replicasChanged", reason: "Success" },
    ],
    [
      "NoClusterFit clearing the placement says so",
      rec({ from: [c("a", 1)], to: [], cause: { diagnosis: { trigger: "targetClusterGone", result: "NoClusterFit" }, scheduled: { reason: "NoClusterFit", message: "0/2 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint." } } }),
      { trigger: "targetClusterGone", reason: "NoClusterFit", message: "0/2 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint." },
    ],
    [
      "a diagnosis without a result takes the condition's reason",
      rec({ to: [c("a")], cause: { diagnosis: { trigger: "alwaysSchedule" }, scheduled: { reason: "Success" } } }),
      { trigger: "alwaysSchedule", reason: "Success" },
    ],
    ["a write that says nothing about why is an update by its writer", rec({ from: [c("a", 1)], to: [c("b", 1)], actor: "user:alice" }), { trigger: "update", actor: { kind: "User", name: "alice" } }],
    ["a write by an unnamed writer has no actor", rec({ from: [c("a", 1)], to: [c("b", 1)] }), { trigger: "update" }],
  ];
  for (const [name, r, want] of cases) {
    await t.test(name, () => {
      const { time, resourceVersion, from, to, ...rest } = describeChange(r);
      assert.deepEqual(rest, want);
      assert.deepEqual([time, resourceVersion, from, to], [r.time, r.resourceVersion, r.from, r.to]);
    });
  }
});

test("actorOf", async (t) => {
  const cases: [string, string | undefined, ReturnType<typeof actorOf>][] = [
    ["a service", "service:taint-manager", { kind: "Service", name: "taint-manager" }],
    ["a user whose name has colons keeps them", "user:system:serviceaccount:ns:sa", { kind: "User", name: "system:serviceaccount:ns:sa" }],
    ["an unknown prefix is kept whole", "robot:x", { kind: "Unknown", name: "robot:x" }],
    ["nothing recorded is no actor", undefined, undefined],
  ];
  for (const [name, raw, want] of cases) await t.test(name, () => assert.deepEqual(actorOf(raw), want));
});

test("placementHistoryList is a List naming its binding, replicas 0 left out as in spec.clusters", () => {
  const rb = placementHistoryList(KARMADA.resourceBinding, { namespace: "default", name: "nginx-deployment", uid: "u1" }, [rec({ to: [{ name: "a", replicas: 0 }] })]);
  assert.equal(rb.apiVersion, "scheduling.flotilla.io/v1alpha1");
  assert.equal(rb.kind, "PlacementChangeList");
  assert.deepEqual(rb.binding, { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", namespace: "default", name: "nginx-deployment", uid: "u1" });
  assert.deepEqual(rb.items[0]!.to, [{ name: "a" }]);
  const crb = placementHistoryList(KARMADA.clusterResourceBinding, { namespace: "", name: "x", uid: "u2" }, []);
  assert.deepEqual(crb.binding, { apiVersion: "work.karmada.io/v1alpha2", kind: "ClusterResourceBinding", name: "x", uid: "u2" });
  assert.deepEqual(crb.items, []);
});
