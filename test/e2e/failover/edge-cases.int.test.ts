// The failover's edge cases end to end: nothing fits (the workload keeps running where it was,
// and a recovered cluster takes it back), tolerations with and without seconds, and graceful
// eviction switched off.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, sleep } from "@flotilla/testkit";
import { CLUSTER, RB, WORKS, clustersOf, nginx, startStack, taints, tasksOf, type Obj } from "./harness.js";

const divided = {
  replicaSchedulingType: "Divided",
  replicaDivisionPreference: "Weighted",
  weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }, { targetCluster: { clusterNames: ["member2"] }, weight: 2 }] },
};
const policy = (name: string, deployment: string, placement: Record<string, unknown>) => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name, namespace: "default" },
  spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: deployment }], placement },
});
const named = (name: string, replicas: number): Obj => {
  const d = nginx(replicas);
  d.metadata.name = name;
  return d;
};

test("nothing fits: with every candidate down the workload keeps running where it was, and a recovered cluster takes it back", async (t) => {
  const s = await startStack({ env: { GRACEFUL_EVICTION_TIMEOUT: "5s" } });
  t.after(() => s.close());
  try {
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(3));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy("nginx-propagation", "nginx", { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: divided }));
    await eventually(async () => clustersOf(await s.get(RB("nginx-deployment"))).member2 === 2, { timeoutMs: 20_000, message: "scheduled" });
    const m1 = s.sim.cluster("member1");
    const m2 = s.sim.cluster("member2");
    await eventually(() => m1.get("apps/v1", "Deployment", "nginx", "default") && m2.get("apps/v1", "Deployment", "nginx", "default"), { timeoutMs: 20_000 });

    await s.sim.setFault("member1", { mode: "unreachable" });
    await s.sim.setFault("member2", { mode: "unreachable" });
    const gone = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && Object.keys(clustersOf(b)).length === 0 && tasksOf(b).length === 2 ? b : undefined;
    }, { timeoutMs: 20_000, message: "both clusters evicted, nothing scheduled" });
    assert.deepEqual(tasksOf(gone).sort(), ["member1", "member2"]);
    // well past the 5 s graceful-eviction timeout: the tasks and the old Works stay
    await sleep(8000);
    const b = await s.get(RB("nginx-deployment"));
    assert.deepEqual(tasksOf(b).sort(), ["member1", "member2"]);
    for (const c of ["member1", "member2"]) {
      const works = await s.list(WORKS(c));
      assert.equal(works.length, 1, `${c}'s Work kept`);
      assert.equal(works[0].metadata.deletionTimestamp, undefined, `${c}'s Work not deleting`);
    }
    assert.ok(m1.get("apps/v1", "Deployment", "nginx", "default") && m2.get("apps/v1", "Deployment", "nginx", "default"), "the workload is still on both members");
    const events = await s.list("/api/v1/namespaces/default/events");
    assert.ok(events.some((e) => e.reason === "GracefulEvictionTaskKept"), "a warning says why the tasks stay");

    // member1 recovers: its task is past the timeout with nothing in its place, so member1 is
    // scheduled again (its Work never orphaned) and takes the whole workload
    await s.sim.setFault("member1", { mode: "healthy" });
    await eventually(async () => taints(await s.get(CLUSTER("member1"))).length === 0, { timeoutMs: 15_000, message: "member1 untainted" });
    const back = await eventually(async () => {
      const x = await s.get(RB("nginx-deployment"));
      return x && clustersOf(x).member1 === 3 ? x : undefined;
    }, { timeoutMs: 20_000, message: "member1 takes all 3" });
    assert.ok(!tasksOf(back).includes("member1"));
    await eventually(() => (m1.get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.status?.readyReplicas === 3, { timeoutMs: 20_000, message: "3 ready on member1" });
    await eventually(async () => tasksOf(await s.get(RB("nginx-deployment"))).length === 0, { timeoutMs: 20_000, message: "member2's task dropped once member1 is healthy" });
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});

test("a toleration of 6 s delays the eviction by 6 s after the NoExecute taint; a toleration without seconds never evicts", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    const tol = (seconds?: number) =>
      ["cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"].map((key) => ({ key, operator: "Exists", effect: "NoExecute", ...(seconds !== undefined ? { tolerationSeconds: seconds } : {}) }));
    await s.post("/apis/apps/v1/namespaces/default/deployments", named("timed", 3));
    await s.post("/apis/apps/v1/namespaces/default/deployments", named("forever", 3));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy("timed", "timed", { clusterAffinity: { clusterNames: ["member1", "member2"] }, clusterTolerations: tol(6), replicaScheduling: divided }));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy("forever", "forever", { clusterAffinity: { clusterNames: ["member1", "member2"] }, clusterTolerations: tol(), replicaScheduling: divided }));
    for (const n of ["timed", "forever"]) await eventually(async () => clustersOf(await s.get(RB(`${n}-deployment`))).member1 === 1, { timeoutMs: 20_000, message: `${n} scheduled` });

    await s.sim.setFault("member1", { mode: "unreachable" });
    const c = await eventually(async () => {
      const x = await s.get(CLUSTER("member1"));
      return taints(x).includes("cluster.karmada.io/not-ready:NoExecute") ? x : undefined;
    }, { timeoutMs: 15_000, message: "NoExecute" });
    const added = Date.parse((c.spec!.taints as { effect: string; timeAdded: string }[]).find((x) => x.effect === "NoExecute")!.timeAdded);
    await sleep(3000);
    assert.equal(clustersOf(await s.get(RB("timed-deployment"))).member1, 1, "still tolerated 3 s in");
    await eventually(async () => !("member1" in clustersOf(await s.get(RB("timed-deployment")))), { timeoutMs: 10_000, intervalMs: 100, message: "evicted once the 6 s ran out" });
    const delay = Date.now() - added;
    assert.ok(delay >= 6000 && delay < 8500, `evicted ${delay} ms after the taint's timeAdded`);
    await sleep(3000);
    assert.equal(clustersOf(await s.get(RB("forever-deployment"))).member1, 1, "a toleration without seconds never evicts");
    assert.deepEqual(tasksOf(await s.get(RB("forever-deployment"))), []);
    t.diagnostic(`eviction ${delay} ms after the NoExecute taint's timeAdded (toleration 6 s, second-precision timestamps)`);
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});

test("graceful eviction off: the cluster is removed at once and its Work deleted without waiting for the replacement", async (t) => {
  const s = await startStack({ env: { GRACEFUL_EVICTION: "false" } });
  t.after(() => s.close());
  try {
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(3));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy("nginx-propagation", "nginx", { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: divided }));
    await eventually(async () => clustersOf(await s.get(RB("nginx-deployment"))).member1 === 1, { timeoutMs: 20_000, message: "scheduled" });
    await eventually(async () => (await s.list(WORKS("member1"))).length === 1, { timeoutMs: 20_000 });
    await s.sim.setFault("member1", { mode: "unreachable" });
    const b = await eventually(async () => {
      const x = await s.get(RB("nginx-deployment"));
      return x && !("member1" in clustersOf(x)) ? x : undefined;
    }, { timeoutMs: 20_000, message: "member1 removed" });
    assert.deepEqual(tasksOf(b), [], "no graceful-eviction task");
    await eventually(async () => (await s.list(WORKS("member1"))).every((w) => w.metadata.deletionTimestamp), { timeoutMs: 10_000, message: "member1's Work deleting at once" });
    await eventually(async () => clustersOf(await s.get(RB("nginx-deployment"))).member2 === 3, { timeoutMs: 15_000, message: "rescheduled to member2:3" });
    const events = await s.list("/api/v1/namespaces/default/events");
    assert.ok(events.some((e) => e.reason === "EvictCluster" && String(e.message).includes("graceful eviction off")));
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
