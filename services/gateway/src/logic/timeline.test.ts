import { test } from "node:test";
import assert from "node:assert/strict";
import { timelineFunction, type TimelineEntry } from "./timeline.js";

const steps = timelineFunction();

const cluster = (taints: { key: string; effect: string; value?: string }[], ready?: string, reason?: string) => ({
  metadata: { name: "member1" },
  spec: { taints },
  status: ready ? { conditions: [{ type: "Ready", status: ready, ...(reason ? { reason } : {}) }] } : {},
});
type Target = { name: string; replicas: number };
type Agg = { clusterName: string; health: string; status?: { readyReplicas?: number } };
const binding = (clusters: Target[], agg: Agg[] = [], tasks: { fromCluster: string; reason?: string }[] = []) => ({
  metadata: { name: "nginx-deployment", namespace: "default" },
  spec: { clusters, gracefulEvictionTasks: tasks },
  status: { aggregatedStatus: agg },
});
const only = (e: TimelineEntry[]) => e.map((x) => `${x.step} ${x.object} ${x.detail}`);

test("cluster changes become timeline steps", () => {
  const cases: { name: string; before: unknown; after: unknown; want: string[] }[] = [
    { name: "first sight of a Ready cluster", before: undefined, after: cluster([], "True"), want: ["ready member1 Ready"] },
    { name: "nothing changed", before: cluster([], "True"), after: cluster([], "True"), want: [] },
    {
      name: "turns NotReady and is tainted",
      before: cluster([], "True"),
      after: cluster([{ key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }], "False", "ClusterNotReachable"),
      want: ["tainted member1 cluster.karmada.io/not-ready:NoSchedule", "not-ready member1 Ready False (ClusterNotReachable)"],
    },
    {
      name: "a second taint only",
      before: cluster([{ key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }], "False"),
      after: cluster([{ key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }, { key: "cluster.karmada.io/not-ready", effect: "NoExecute" }], "False"),
      want: ["tainted member1 cluster.karmada.io/not-ready:NoExecute"],
    },
    {
      name: "False to Unknown is not a new step",
      before: cluster([], "False"),
      after: cluster([], "Unknown"),
      want: [],
    },
    {
      name: "back: Ready and untainted",
      before: cluster([{ key: "x", value: "y", effect: "NoExecute" }], "False"),
      after: cluster([], "True"),
      want: ["untainted member1 x=y:NoExecute", "ready member1 Ready"],
    },
  ];
  for (const c of cases) assert.deepEqual(only(steps("Cluster", c.before, c.after)), c.want, c.name);
});

test("binding changes become timeline steps, in a failover's order", () => {
  const m1m2 = [
    { name: "member1", replicas: 1 },
    { name: "member2", replicas: 2 },
  ];
  const healthyBoth = [
    { clusterName: "member1", health: "Healthy", status: { readyReplicas: 1 } },
    { clusterName: "member2", health: "Healthy", status: { readyReplicas: 2 } },
  ];
  const m2 = [{ name: "member2", replicas: 3 }];
  const task = [{ fromCluster: "member1", reason: "TaintUntolerated" }];
  const cases: { name: string; before: unknown; after: unknown; want: string[] }[] = [
    { name: "placed and healthy at first sight", before: undefined, after: binding(m1m2, healthyBoth), want: ["healthy default/nginx-deployment healthy on member1:1 member2:2"] },
    { name: "member1's health turns Unknown", before: binding(m1m2, healthyBoth), after: binding(m1m2, [{ clusterName: "member1", health: "Unknown" }, healthyBoth[1]!]), want: [] },
    {
      name: "evicted and rescheduled in one write",
      before: binding(m1m2, [{ clusterName: "member1", health: "Unknown" }, healthyBoth[1]!]),
      after: binding(m2, [{ clusterName: "member1", health: "Unknown" }, healthyBoth[1]!], task),
      want: ["eviction default/nginx-deployment from member1 (TaintUntolerated)", "reschedule default/nginx-deployment member2:2 → member2:3"],
    },
    {
      name: "evicted only: the eviction's own step, no reschedule",
      before: binding(m1m2, healthyBoth),
      after: binding([{ name: "member2", replicas: 2 }], [healthyBoth[1]!], task),
      want: ["eviction default/nginx-deployment from member1 (TaintUntolerated)"],
    },
    {
      name: "then rescheduled",
      before: binding([{ name: "member2", replicas: 2 }], [healthyBoth[1]!], task),
      after: binding(m2, [healthyBoth[1]!], task),
      want: ["reschedule default/nginx-deployment member2:2 → member2:3"],
    },
    {
      name: "member2 still has 2 of its 3 ready: not healthy yet",
      before: binding(m2, [healthyBoth[1]!], task),
      after: binding(m2, [{ clusterName: "member2", health: "Healthy", status: { readyReplicas: 2 } }], task),
      want: [],
    },
    {
      name: "3 ready on member2",
      before: binding(m2, [healthyBoth[1]!], task),
      after: binding(m2, [{ clusterName: "member2", health: "Healthy", status: { readyReplicas: 3 } }], task),
      want: ["healthy default/nginx-deployment healthy on member2:3"],
    },
    {
      name: "the task dropped",
      before: binding(m2, [{ clusterName: "member2", health: "Healthy", status: { readyReplicas: 3 } }], task),
      after: binding(m2, [{ clusterName: "member2", health: "Healthy", status: { readyReplicas: 3 } }]),
      want: ["task-dropped default/nginx-deployment from member1 (TaintUntolerated)"],
    },
    { name: "deleted: nothing", before: binding(m2), after: undefined, want: [] },
    { name: "no placement is never healthy", before: undefined, after: binding([]), want: [] },
  ];
  for (const c of cases) assert.deepEqual(only(steps("ResourceBinding", c.before, c.after)), c.want, c.name);
});
