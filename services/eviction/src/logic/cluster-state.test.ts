import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster, Taint, Toleration } from "@flotilla/api";
import { clusterState, type ClusterState } from "./cluster-state.js";

const cluster = (ready: string | undefined, taints: Taint[] = [], deleting = false): Cluster => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name: "member1", ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
  spec: { taints },
  status: { conditions: ready ? [{ type: "Ready", status: ready }] : [] },
});
const unreachable: Taint = { key: "cluster.karmada.io/unreachable", effect: "NoExecute" };
const maintenance: Taint = { key: "maintenance", effect: "NoExecute" };

const cases: Array<[string, Cluster | undefined, Toleration[], ClusterState]> = [
  ["a cluster that no longer exists is gone", undefined, [], "gone"],
  ["a cluster being deleted is deleting", cluster("True", [], true), [], "deleting"],
  ["a Ready cluster without NoExecute taints has recovered", cluster("True", [{ key: "x", effect: "NoSchedule" }]), [], "recovered"],
  ["a cluster that is not Ready has not recovered", cluster("Unknown"), [], "unhealthy"],
  ["a cluster without a Ready condition has not recovered", cluster(undefined), [], "unhealthy"],
  ["a Ready cluster with an untolerated NoExecute taint has not recovered", cluster("True", [maintenance]), [], "unhealthy"],
  ["a NoExecute taint tolerated only for a while still counts against it", cluster("True", [unreachable]), [{ key: unreachable.key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }], "unhealthy"],
  ["a NoExecute taint tolerated forever does not", cluster("True", [maintenance]), [{ key: "maintenance", operator: "Exists", effect: "NoExecute" }], "recovered"],
];
for (const [name, c, tols, want] of cases) test(name, () => assert.equal(clusterState(c, tols), want));
