import { test } from "node:test";
import assert from "node:assert/strict";
import { SimulateFailureError, failureSimulation, failureSimulationTables } from "./simulate-failure.js";

test("the request names the clusters to fail", () => {
  assert.deepEqual(failureSimulation(["member1", "member2"]), {
    apiVersion: "scheduling.flotilla.io/v1alpha1",
    kind: "FailureSimulation",
    metadata: { name: "fail-member1-member2" },
    spec: { clusters: ["member1", "member2"] },
  });
});

test("no cluster name is an error before anything is sent", () => {
  assert.throws(() => failureSimulation([]), SimulateFailureError);
});

test("the answer prints one row per binding and the capacity left per cluster, before -> after", () => {
  const out = failureSimulationTables({
    failedClusters: ["member1"],
    bindings: [
      { kind: "ResourceBinding", namespace: "default", name: "nginx-deployment", result: "Rescheduled", before: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }], after: [{ name: "member2", replicas: 3 }], evictions: [{ cluster: "member1", replicas: 1, purgeMode: "Gracefully" }] },
      { kind: "ResourceBinding", namespace: "default", name: "patient-deployment", result: "Rescheduled", before: [{ name: "member1", replicas: 2 }], after: [{ name: "member3", replicas: 2 }], evictions: [{ cluster: "member1", replicas: 2, afterSeconds: 300, purgeMode: "Directly" }] },
      { kind: "ClusterResourceBinding", name: "solo-deployment", result: "NoClusterFit", before: [{ name: "member1", replicas: 2 }], after: [], message: "no cluster fits, so it keeps running where it is until one does: 0/3 clusters are available: x." },
      { kind: "ResourceBinding", namespace: "ops", name: "sticky-deployment", result: "Tolerated", before: [{ name: "member1", replicas: 1 }], after: [{ name: "member1", replicas: 1 }], tolerated: ["member1"], message: "tolerates the NoExecute taints of member1 without a time limit: stays" },
    ],
    capacity: [
      { name: "member1", failed: true, receives: 0, before: { pods: 110, cpu: "8", memory: "32Gi" } },
      { name: "member2", failed: false, receives: 1, before: { pods: 108, cpu: "8", memory: "32Gi" }, after: { pods: 107, cpu: "7500m", memory: "32Gi" } },
    ],
  });
  assert.equal(
    out,
    [
      "Failing member1: 4 binding(s) placed there",
      "BINDING                      FROM                  TO          RESULT         DETAIL",
      "default/nginx-deployment     member1:1,member2:2   member2:3   Rescheduled    -",
      "default/patient-deployment   member1:2             member3:2   Rescheduled    evicted from member1 after 300s; purgeMode Directly",
      "crb/solo-deployment          member1:2             -           NoClusterFit   no cluster fits, so it keeps running where it is until one does: 0/3 clusters are available: x.",
      "ops/sticky-deployment        member1:1             member1:1   Tolerated      tolerates the NoExecute taints of member1 without a time limit: stays",
      "",
      "Capacity left:",
      "CLUSTER   STATE    RECEIVES   PODS         CPU          MEMORY",
      "member1   failed   0          -            -            -",
      "member2   up       1          108 -> 107   8 -> 7500m   32Gi",
      "",
    ].join("\n"),
  );
});
