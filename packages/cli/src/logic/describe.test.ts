import { test } from "node:test";
import assert from "node:assert/strict";
import type { ResourceBinding } from "@flotilla/api";
import { describeBinding } from "./describe.js";

const now = new Date("2026-11-24T12:00:00Z");

test("a binding after a failover: placement, the eviction task, member status, conditions and the diagnosis", () => {
  const rb = {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name: "nginx-deployment", namespace: "default", creationTimestamp: "2026-11-24T11:50:00Z" },
    spec: {
      resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" },
      replicas: 3,
      clusters: [{ name: "member2", replicas: 3 }],
      gracefulEvictionTasks: [{ fromCluster: "member1", producer: "TaintManager", reason: "TaintUntolerated", purgeMode: "Gracefully", replicas: 1, creationTimestamp: "2026-11-24T11:59:00Z", message: "" }],
    },
    status: {
      conditions: [{ type: "Scheduled", status: "True", reason: "Success", message: "Binding has been scheduled successfully.", lastTransitionTime: "2026-11-24T11:59:30Z" }],
      aggregatedStatus: [{ clusterName: "member2", applied: true, health: "Healthy", status: { replicas: 3, readyReplicas: 3 } }],
      schedulingDiagnosis: {
        time: "2026-11-24T11:59:30Z",
        trigger: "rescheduleTriggered",
        result: "Success",
        clustersTotal: 3,
        rejected: [{ plugin: "TaintToleration", reason: "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}", clusters: ["member1"] }],
        feasible: [{ name: "member2", score: 100, availableReplicas: 40, selected: true, replicas: 3 }, { name: "member3", score: 0, availableReplicas: 40, selected: false }],
      },
    },
  } as unknown as ResourceBinding;
  const want = `Name:       nginx-deployment
Namespace:  default
Kind:       ResourceBinding
Resource:   apps/v1 Deployment default/nginx
Replicas:   3
Scheduler:  default-scheduler
Created:    2026-11-24T11:50:00Z (10m ago)
Placement:
  CLUSTER   REPLICAS
  member2   3
Eviction Tasks:
  FROM CLUSTER   PRODUCER       REASON             PURGE MODE   REPLICAS   AGE   MESSAGE
  member1        TaintManager   TaintUntolerated   Gracefully   1          60s
Aggregated Status:
  CLUSTER   APPLIED   HEALTH    STATUS                       MESSAGE
  member2   True      Healthy   replicas=3 readyReplicas=3
Conditions:
  TYPE        STATUS   REASON    AGE   MESSAGE
  Scheduled   True     Success   30s   Binding has been scheduled successfully.
Scheduling Diagnosis:
  Time:      2026-11-24T11:59:30Z (30s ago)
  Trigger:   rescheduleTriggered
  Result:    Success
  Clusters:  3 in the snapshot, 2 feasible
  Rejected:
    PLUGIN            REASON                                                                      CLUSTERS
    TaintToleration   cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}   member1
  Feasible:
    CLUSTER   SCORE   AVAILABLE   SELECTED   REPLICAS
    member2   100     40          yes        3
    member3   0       40          no
`;
  assert.equal(describeBinding(rb, now), want);
});

test("a new binding: nothing placed, nothing reported, no diagnosis yet", () => {
  const rb = { apiVersion: "work.karmada.io/v1alpha2", kind: "ClusterResourceBinding", metadata: { name: "ns-web" }, spec: { resource: { apiVersion: "v1", kind: "Namespace", name: "web" } } } as unknown as ResourceBinding;
  assert.equal(
    describeBinding(rb, now),
    `Name:       ns-web
Kind:       ClusterResourceBinding
Resource:   v1 Namespace web
Replicas:   0
Scheduler:  default-scheduler
Placement:  <none>
Eviction Tasks:  <none>
Aggregated Status:  <none>
Conditions:  <none>
Scheduling Diagnosis:  <none>
`,
  );
});
