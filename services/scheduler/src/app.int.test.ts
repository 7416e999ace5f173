import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { PolicyPlacementAnnotation, type AnyResourceBinding, type GracefulEvictionTask } from "@flotilla/api";
import { binding, cluster, notReadyNoSchedule, placements } from "./fixtures.test-support.js";
import { scheduledCondition, startHarness, targets, type Harness } from "./harness.test-support.js";

const NGINX = "default/nginx-deployment";
const scheduled = (b: AnyResourceBinding) => scheduledCondition(b)?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation;

/** What the taint manager does to evict a cluster: Karmada's GracefulEvictCluster. */
function gracefulEvict(b: AnyResourceBinding, name: string): AnyResourceBinding {
  const i = (b.spec?.clusters ?? []).findIndex((t) => t.name === name);
  if (i < 0) return b;
  const removed = b.spec!.clusters![i];
  const task: GracefulEvictionTask = { fromCluster: name, reason: "TaintUntolerated", producer: "TaintManager", ...(removed.replicas ? { replicas: removed.replicas } : {}) };
  return { ...b, spec: { ...b.spec, clusters: b.spec!.clusters!.filter((_, j) => j !== i), gracefulEvictionTasks: [...(b.spec!.gracefulEvictionTasks ?? []), task] } };
}

describe("the seed: nginx, 3 replicas, static weights member1:1 member2:2", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    for (const n of ["member1", "member2", "member3"]) await h.createCluster(cluster(n));
  });
  after(() => h.close());

  test("is scheduled to member1:1 and member2:2 with the condition, generation, time and applied placement", async () => {
    await h.createBinding(binding("nginx", { replicas: 3 }));
    const b = await h.until(NGINX, scheduled);
    assert.deepEqual(targets(b), ["member1:1", "member2:2"]);
    const c = scheduledCondition(b)!;
    assert.deepEqual([c.reason, c.message], ["Success", "Binding has been scheduled successfully."]);
    assert.ok(c.lastTransitionTime);
    assert.ok(b.status?.lastScheduledTime);
    assert.deepEqual(JSON.parse(b.metadata.annotations![PolicyPlacementAnnotation]), b.spec!.placement);
  });

  test("its diagnosis names why member3 was left out and how the others scored", async () => {
    const d = (await h.get(NGINX))!.status!.schedulingDiagnosis!;
    assert.equal(d.result, "Success");
    assert.equal(d.trigger, "placementChanged");
    assert.equal(d.clustersTotal, 3);
    assert.deepEqual(d.rejected, [{ plugin: "ClusterAffinity", reason: "cluster(s) did not match the placement cluster affinity constraint", clusters: ["member3"] }]);
    assert.deepEqual(
      d.feasible?.map((f) => [f.name, f.selected, f.replicas]),
      [
        ["member1", true, 1],
        ["member2", true, 2],
      ],
    );
  });

  test("scaling to 6 keeps the weights: member1:2 member2:4", async () => {
    await h.store.mutate(refOf(NGINX), (b: AnyResourceBinding) => ({ ...b, spec: { ...b.spec, replicas: 6 } }));
    const b = await h.until(NGINX, (x) => scheduled(x) && targets(x).join() === "member1:2,member2:4");
    assert.equal(b.status?.schedulingDiagnosis?.trigger, "replicasChanged");
  });

  test("a change that needs no scheduling only moves the observed generation", async () => {
    const before = (await h.get(NGINX))!;
    await h.store.mutate(refOf(NGINX), (b: AnyResourceBinding) => ({ ...b, spec: { ...b.spec, resource: { ...b.spec!.resource, resourceVersion: "777" } } }));
    const b = await h.until(NGINX, (x) => x.metadata.generation === before.metadata.generation! + 1 && x.status?.schedulerObservedGeneration === x.metadata.generation);
    assert.deepEqual(targets(b), targets(before));
    assert.equal(b.status?.lastScheduledTime, before.status?.lastScheduledTime);
    assert.deepEqual(b.status?.schedulingDiagnosis, before.status?.schedulingDiagnosis);
  });

  test("a binding placed without a recorded decision (a crash between the two writes) gets its status, placement unchanged", async () => {
    const b = binding("orphan", { replicas: 3, clusters: { member1: 1, member2: 2 } });
    b.metadata.annotations = { [PolicyPlacementAnnotation]: JSON.stringify(b.spec!.placement) };
    await h.createBinding(b);
    const got = await h.until("default/orphan-deployment", scheduled);
    assert.deepEqual(targets(got), ["member1:1", "member2:2"]);
    assert.equal(got.status?.schedulingDiagnosis?.trigger, "statusMissing");
    assert.equal(got.metadata.generation, 1, "the spec was not rewritten");
  });

  test("a ClusterResourceBinding goes through the same path (a ConfigMap to every cluster, no replicas)", async () => {
    await h.createBinding(binding("shared-config", { namespace: "", kind: "ConfigMap", placement: placements.duplicated() }));
    const b = await h.until("shared-config-configmap", scheduled);
    assert.equal(b.kind, "ClusterResourceBinding");
    assert.deepEqual(b.spec?.clusters, [{ name: "member1" }, { name: "member2" }, { name: "member3" }]);
    const bindings = (await h.store.list("work.karmada.io/ResourceBinding")).items.length + (await h.store.list("work.karmada.io/ClusterResourceBinding")).items.length;
    assert.equal(await h.app.controller.resync(), bindings, "a resync enqueues every ResourceBinding and ClusterResourceBinding");
  });

  test("bindings for another scheduler, or without a policy, are left alone", async () => {
    const other = binding("other", { replicas: 1 });
    other.spec!.schedulerName = "my-scheduler";
    await h.createBinding(other);
    const unclaimed = binding("unclaimed", { replicas: 1 });
    unclaimed.metadata.labels = {};
    await h.createBinding(unclaimed);
    await h.createBinding(binding("marker", { replicas: 1 }));
    await h.until("default/marker-deployment", scheduled);
    for (const k of ["default/other-deployment", "default/unclaimed-deployment"]) {
      const b = await h.get(k);
      assert.equal(b?.status, undefined, k);
      assert.equal(b?.spec?.clusters, undefined, k);
    }
  });
});

function refOf(key: string) {
  const [namespace, name] = key.includes("/") ? key.split("/") : ["", key];
  return { gk: namespace ? "work.karmada.io/ResourceBinding" : "work.karmada.io/ClusterResourceBinding", namespace, name };
}

describe("failover", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    for (const n of ["member1", "member2", "member3"]) await h.createCluster(cluster(n));
  });
  after(() => h.close());

  test("member1 tainted not-ready and evicted: the seed binding moves to member2:3, the eviction task kept", async () => {
    await h.createBinding(binding("nginx", { replicas: 3 }));
    await h.until(NGINX, (b) => targets(b).join() === "member1:1,member2:2");
    await h.mutateCluster("member1", (c) => (c.spec = { ...c.spec, taints: [notReadyNoSchedule] }));
    // a NoSchedule taint alone moves nothing: member1 is already in the result
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(targets(await h.get(NGINX)), ["member1:1", "member2:2"]);
    // the taint manager evicts member1 (graceful eviction task), the scheduler reschedules
    await h.store.mutate(refOf(NGINX), (b: AnyResourceBinding) => gracefulEvict(b, "member1"));
    const b = await h.until(NGINX, (x) => targets(x).join() === "member2:3" && scheduled(x));
    assert.deepEqual(b.spec?.gracefulEvictionTasks?.map((t) => t.fromCluster), ["member1"]);
    const d = b.status!.schedulingDiagnosis!;
    assert.equal(d.trigger, "replicasChanged");
    assert.deepEqual(
      d.rejected?.map((r) => [r.plugin, r.reason, (r.clusters ?? []).join()]),
      [
        ["ClusterAffinity", "cluster(s) did not match the placement cluster affinity constraint", "member3"],
        ["ClusterEviction", "cluster(s) is in the process of eviction", "member1"],
        ["TaintToleration", "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}", "member1"],
      ],
    );
  });

  test("a new binding never lands on the tainted member1", async () => {
    await h.createBinding(binding("fresh", { replicas: 3 }));
    const b = await h.until("default/fresh-deployment", scheduled);
    assert.deepEqual(targets(b), ["member2:3"]);
  });

  test("Duplicated moves to the spare cluster when its cluster is evicted", async () => {
    const placement = { ...placements.duplicated(), clusterTolerations: [{ key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoSchedule" }], spreadConstraints: [{ spreadByField: "cluster", minGroups: 2, maxGroups: 2 }] };
    await h.createBinding(binding("dup", { replicas: 2, placement }));
    const first = await h.until("default/dup-deployment", scheduled);
    assert.deepEqual(targets(first), ["member1:2", "member2:2"]);
    await h.store.mutate(refOf("default/dup-deployment"), (b: AnyResourceBinding) => gracefulEvict(b, "member1"));
    const b = await h.until("default/dup-deployment", (x) => targets(x).join() === "member2:2,member3:2" && scheduled(x));
    assert.deepEqual(b.spec?.gracefulEvictionTasks?.map((t) => [t.fromCluster, t.replicas]), [["member1", 2]]);
  });

  test("a target cluster that is gone is replaced", async () => {
    await h.createCluster(cluster("edge1"));
    await h.createCluster(cluster("edge2"));
    const placement = { ...placements.seed(), clusterAffinity: { clusterNames: ["edge1", "edge2"] } };
    placement.replicaScheduling!.weightPreference!.staticWeightList = [
      { targetCluster: { clusterNames: ["edge1"] }, weight: 1 },
      { targetCluster: { clusterNames: ["edge2"] }, weight: 1 },
    ];
    await h.createBinding(binding("edge", { replicas: 4, placement }));
    await h.until("default/edge-deployment", (x) => targets(x).join() === "edge1:2,edge2:2");
    await h.store.delete({ gk: "cluster.karmada.io/Cluster", name: "edge2" });
    const b = await h.until("default/edge-deployment", (x) => targets(x).join() === "edge1:4" && scheduled(x));
    assert.equal(b.status?.schedulingDiagnosis?.trigger, "targetClusterGone");
  });
});

describe("dynamic weights: scale up and down keep the placement", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await h.createCluster(cluster("small", { pods: 10 }));
    await h.createCluster(cluster("large", { pods: 30 }));
  });
  after(() => h.close());

  test("first by capacity, then grown and shrunk on top of the current placement", async () => {
    const key = "default/web-deployment";
    await h.createBinding(binding("web", { replicas: 4, placement: placements.dynamic() }));
    const first = await h.until(key, scheduled);
    assert.deepEqual(targets(first), ["large:3", "small:1"]);

    await h.createCluster(cluster("spare", { pods: 30 })); // a new cluster alone does not move anything
    await h.store.mutate(refOf(key), (b: AnyResourceBinding) => ({ ...b, spec: { ...b.spec, replicas: 8 } }));
    const up = await h.until(key, (x) => scheduled(x) && x.spec?.replicas === 8);
    const upT = Object.fromEntries(targets(up).map((s) => s.split(":")).map(([n, r]) => [n, Number(r)]));
    assert.ok(upT.large >= 3 && upT.small >= 1, `scale up keeps what was placed: ${targets(up)}`);
    assert.equal(Object.values(upT).reduce((a, b) => a + b, 0), 8);

    await h.store.mutate(refOf(key), (b: AnyResourceBinding) => ({ ...b, spec: { ...b.spec, replicas: 4 } }));
    const down = await h.until(key, (x) => scheduled(x) && x.spec?.replicas === 4);
    const downT = Object.fromEntries(targets(down).map((s) => s.split(":")).map(([n, r]) => [n, Number(r)]));
    for (const [n, r] of Object.entries(downT)) assert.ok(r <= upT[n], `scale down only shrinks: ${targets(down)} from ${targets(up)}`);
    assert.equal(Object.values(downT).reduce((a, b) => a + b, 0), 4);
    assert.equal(down.status?.schedulingDiagnosis?.trigger, "replicasChanged");
  });

  test("not enough capacity is Unschedulable, parked, and scheduled once a cluster grows", async () => {
    const key = "default/huge-deployment";
    await h.createBinding(binding("huge", { replicas: 100, placement: placements.dynamic(["small"]) }));
    const b = await h.until(key, (x) => scheduledCondition(x)?.reason === "Unschedulable");
    assert.match(scheduledCondition(b)!.message!, /Clusters available replicas 10 are not enough to schedule/);
    assert.equal(b.spec?.clusters, undefined);
    assert.match(await h.app.registry.text(), /^flotilla_scheduler_schedule_total\{result="Unschedulable"\} [1-9]\d*$/m);
    await h.mutateCluster("small", (c) => (c.status!.resourceSummary!.allocatable!.pods = "200"));
    const ok = await h.until(key, scheduled);
    assert.deepEqual(targets(ok), ["small:100"]);
  });
});

describe("the scale-up example: dynamic weights add replicas on top of the current placement, as Karmada", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await h.createCluster(cluster("m1", { pods: 10 }));
    await h.createCluster(cluster("m2", { pods: 20 }));
    await h.createCluster(cluster("m3", { pods: 30 }));
  });
  after(() => h.close());

  test("2/4/6 scaled to 24 on equal spare capacity is 6/8/10; back to 12 it is 3/4/5", async () => {
    const key = "default/app-deployment";
    await h.createBinding(binding("app", { replicas: 12, placement: placements.dynamic(["m1", "m2", "m3"]) }));
    const first = await h.until(key, scheduled);
    assert.deepEqual(targets(first), ["m1:2", "m2:4", "m3:6"], "12 by capacity 10:20:30");

    // every cluster now has room for 100 more: the 12 added replicas split 4/4/4 and are added
    for (const n of ["m1", "m2", "m3"]) await h.mutateCluster(n, (c) => (c.status!.resourceSummary!.allocatable!.pods = "100"));
    await eventually(() => ["m1", "m2", "m3"].every((n) => h.app.clusters.get(n)?.status?.resourceSummary?.allocatable?.pods === "100"), { message: "the snapshot sees the new capacity" });
    await h.store.mutate(refOf(key), (b: AnyResourceBinding) => ({ ...b, spec: { ...b.spec, replicas: 24 } }));
    const up = await h.until(key, (x) => scheduled(x) && x.spec?.replicas === 24);
    assert.deepEqual(targets(up), ["m1:6", "m2:8", "m3:10"]);
    assert.equal(up.status?.schedulingDiagnosis?.trigger, "replicasChanged");
    assert.deepEqual(
      up.status?.schedulingDiagnosis?.feasible?.map((f) => [f.name, f.allocatableReplicas]),
      [
        ["m3", 100],
        ["m2", 100],
        ["m1", 100],
      ],
    );

    // scale down divides by the current replicas, whatever the capacity
    await h.store.mutate(refOf(key), (b: AnyResourceBinding) => ({ ...b, spec: { ...b.spec, replicas: 12 } }));
    const down = await h.until(key, (x) => scheduled(x) && x.spec?.replicas === 12);
    assert.deepEqual(targets(down), ["m1:3", "m2:4", "m3:5"]);
  });
});

describe("spread constraints' errors become conditions", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await h.createCluster(cluster("a1", { region: "east" }));
    await h.createCluster(cluster("a2", { region: "east" }));
    await h.createCluster(cluster("b1", { region: "west", pods: 5 }));
  });
  after(() => h.close());

  const cases: Array<[string, Parameters<typeof binding>[1], string, RegExp]> = [
    ["too few clusters for minGroups", { replicas: 2, placement: { ...placements.duplicated(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 4, maxGroups: 5 }] } }, "SchedulerError", /the number of feasible clusters is less than spreadConstraint\.MinGroups/],
    [
      "too few regions for minGroups",
      { replicas: 2, placement: { ...placements.duplicated(), spreadConstraints: [{ spreadByField: "region", minGroups: 3, maxGroups: 3 }, { spreadByField: "cluster", minGroups: 1, maxGroups: 3 }] } },
      "SchedulerError",
      /the number of feasible region is less than spreadConstraint\.MinGroups/,
    ],
    [
      "maxGroups too small for the replicas",
      { replicas: 150, placement: { ...placements.dynamic(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 1, maxGroups: 1 }] } },
      "SchedulerError",
      /no enough resource when selecting 1 clusters/,
    ],
  ];
  for (const [name, o, reason, message] of cases) {
    test(name, async () => {
      const n = name.replace(/[^a-z]+/g, "-").replace(/-$/, "");
      await h.createBinding(binding(n, o));
      const b = await h.until(`default/${n}-deployment`, (x) => !!scheduledCondition(x));
      const c = scheduledCondition(b)!;
      assert.equal(c.status, "False");
      assert.equal(c.reason, reason);
      assert.match(c.message!, message);
      assert.equal(b.status?.schedulingDiagnosis?.result, reason);
      assert.equal(b.status?.schedulerObservedGeneration, undefined, "the generation is observed only on success");
    });
  }
});
