import { test } from "node:test";
import assert from "node:assert/strict";
import type { AggregatedStatusItem, AnyResourceBinding, KubeObject, Work } from "@flotilla/api";
import { aggregatedStatusItems, bindingStatusUpdate, fullyAppliedCondition, templateStatusUpdate } from "./status.js";

const resource = { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" };
const manifest = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default" } };
const identifier = { ordinal: 0, group: "apps", version: "v1", kind: "Deployment", resource: "deployments", namespace: "default", name: "nginx" };

const work = (cluster: string, o: { applied?: "True" | "False"; message?: string; status?: Record<string, unknown>; health?: string; identifier?: typeof identifier; deleting?: boolean } = {}): Work => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: "nginx-687f7fb96f", namespace: `karmada-es-${cluster}`, ...(o.deleting ? { deletionTimestamp: "2024-01-01T00:00:00Z" } : {}) },
  spec: { workload: { manifests: [manifest] } },
  status: {
    ...(o.applied ? { conditions: [{ type: "Applied", status: o.applied, reason: o.applied === "True" ? "AppliedSuccessful" : "AppliedFailed", message: o.message ?? "" }] } : {}),
    ...(o.status || o.health ? { manifestStatuses: [{ identifier: o.identifier ?? identifier, status: o.status as never, health: o.health }] } : {}),
  },
});

test("aggregated status: one item per Work not being deleted, sorted by cluster", () => {
  const items = aggregatedStatusItems(
    [
      work("member2", { applied: "True", status: { replicas: 2, readyReplicas: 2 }, health: "Healthy" }),
      work("member1", { applied: "False", message: "Failed to apply all manifests (0/1): boom" }),
      work("member3"),
      work("member4", { applied: "True" }),
      work("member5", { applied: "True", status: { replicas: 1 }, health: "Healthy", identifier: { ...identifier, name: "other" } }),
      work("member6", { applied: "True", deleting: true }),
    ],
    resource,
  );
  assert.deepEqual(items, [
    { clusterName: "member1", applied: false, appliedMessage: "Failed to apply all manifests (0/1): boom", health: "Unknown" },
    { clusterName: "member2", applied: true, health: "Healthy", status: { replicas: 2, readyReplicas: 2 } },
    { clusterName: "member3", applied: false, health: "Unknown" },
    { clusterName: "member4", applied: true, health: "Unknown" },
    { clusterName: "member5", applied: true, health: "Unknown" },
  ]);
});

test("FullyApplied: every kept cluster has an applied item, and nothing else", () => {
  const item = (c: string, applied = true): AggregatedStatusItem => ({ clusterName: c, applied, health: "Healthy" });
  const b = (clusters: string[], tasks: { fromCluster: string; purgeMode: string }[] = []): Pick<AnyResourceBinding, "spec"> => ({ spec: { clusters: clusters.map((name) => ({ name })), gracefulEvictionTasks: tasks } });
  const cases: [string, Pick<AnyResourceBinding, "spec">, AggregatedStatusItem[], string][] = [
    ["all scheduled clusters applied", b(["m1", "m2"]), [item("m1"), item("m2")], "True"],
    ["one not applied", b(["m1", "m2"]), [item("m1"), item("m2", false)], "False"],
    ["one missing", b(["m1", "m2"]), [item("m1")], "False"],
    ["an extra cluster", b(["m1"]), [item("m1"), item("m2")], "False"],
    ["not scheduled at all", b([]), [], "False"],
    ["an evicting cluster still kept must be applied too", b(["m1"], [{ fromCluster: "m2", purgeMode: "Gracefully" }]), [item("m1"), item("m2")], "True"],
  ];
  for (const [name, binding, items, want] of cases) assert.equal(fullyAppliedCondition(binding, items).status, want, name);
  const c = fullyAppliedCondition(b(["m1"]), [item("m1")]);
  assert.deepEqual(c, { type: "FullyApplied", status: "True", reason: "FullyAppliedSuccess", message: "All works have been successfully applied" });
});

test("the binding's status is written once scheduled, and only when it changes", () => {
  const now = new Date("2024-01-01T00:00:00Z");
  const rb: AnyResourceBinding = { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "nginx-deployment", namespace: "default" }, spec: { resource, clusters: [{ name: "member1", replicas: 1 }] } };
  const works = [work("member1", { applied: "True", status: { replicas: 1 }, health: "Healthy" })];
  assert.equal(bindingStatusUpdate(rb, works, now), undefined, "not before lastScheduledTime is set");
  const scheduled = { ...rb, status: { lastScheduledTime: "2024-01-01T00:00:00Z", schedulerObservedGeneration: 1, conditions: [{ type: "Scheduled", status: "True" }] } };
  const next = bindingStatusUpdate(scheduled, works, now)!;
  assert.deepEqual(next.aggregatedStatus, [{ clusterName: "member1", applied: true, health: "Healthy", status: { replicas: 1 } }]);
  assert.deepEqual(next.conditions?.map((c) => [c.type, c.status]), [["Scheduled", "True"], ["FullyApplied", "True"]]);
  assert.equal(next.schedulerObservedGeneration, 1, "the scheduler's fields stay");
  assert.equal(bindingStatusUpdate({ ...scheduled, status: next }, works, new Date("2024-01-02T00:00:00Z")), undefined, "unchanged: nothing to write");
});

test("the template's status is aggregated per kind", () => {
  const now = new Date("2024-01-01T00:00:00Z");
  const deploy: KubeObject = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default", generation: 4 }, spec: { replicas: 3 }, status: { conditions: [{ type: "Available", status: "True" }] } };
  const items: AggregatedStatusItem[] = [
    { clusterName: "member1", applied: true, health: "Healthy", status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1, observedGeneration: 9 } },
    { clusterName: "member2", applied: true, health: "Healthy", status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2 } },
    { clusterName: "member3", applied: false, health: "Unknown" },
  ];
  assert.deepEqual(
    templateStatusUpdate(deploy, items, now),
    { conditions: [{ type: "Available", status: "True" }], replicas: 3, readyReplicas: 3, updatedReplicas: 3, availableReplicas: 3, observedGeneration: 4 },
    "a Deployment sums its counters (3/3 ready) and reports its own generation as observed",
  );
  const settled = { ...deploy, status: templateStatusUpdate(deploy, items, now) };
  assert.equal(templateStatusUpdate(settled, items, now), undefined, "no change, no write");
  assert.deepEqual(templateStatusUpdate({ ...deploy, status: { replicas: 3 } }, [], now), {}, "no cluster reports: the counters go");
  const sts: KubeObject = { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "db", generation: 1 }, spec: {} };
  assert.deepEqual(templateStatusUpdate(sts, [{ clusterName: "a", status: { replicas: 2, currentReplicas: 2 } }, { clusterName: "b", status: { replicas: 1, readyReplicas: 1 } }], now), { replicas: 3, readyReplicas: 1, currentReplicas: 2, observedGeneration: 1 });
  const svc: KubeObject = { apiVersion: "v1", kind: "Service", metadata: { name: "web" }, spec: { type: "LoadBalancer" } };
  assert.deepEqual(templateStatusUpdate(svc, [{ clusterName: "a", status: { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } } }], now), { loadBalancer: { ingress: [{ ip: "1.2.3.4", hostname: "a" }] } }, "a LoadBalancer Service collects ingress points, naming the cluster");
  assert.equal(templateStatusUpdate({ ...svc, spec: { type: "ClusterIP" } }, [], now), undefined, "other Services are left alone");
  assert.equal(templateStatusUpdate({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, items, now), undefined, "a ConfigMap has no status to aggregate");
  const job: KubeObject = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "pi" }, spec: {} };
  const done = (c: string) => ({ clusterName: c, status: { succeeded: 2, startTime: `2024-01-01T00:0${c === "a" ? 1 : 2}:00Z`, completionTime: `2024-01-01T00:1${c === "a" ? 1 : 2}:00Z`, conditions: [{ type: "Complete", status: "True" }] } });
  const jobStatus = templateStatusUpdate(job, [done("a"), done("b")], now)!;
  assert.equal(jobStatus.succeeded, 4);
  assert.equal(jobStatus.startTime, "2024-01-01T00:01:00Z");
  assert.equal(jobStatus.completionTime, "2024-01-01T00:12:00Z");
  assert.deepEqual((jobStatus.conditions as { type: string }[]).map((c) => c.type), ["Complete"], "a Job completes once every cluster did");
  assert.equal(templateStatusUpdate({ ...job, status: jobStatus }, [done("a")], now), undefined, "a finished Job is never rewritten");
});
