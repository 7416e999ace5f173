// The seeds' Duplicated walk-through: nginx on one cluster of member1/member3 (spread to exactly
// one cluster); member1 fails and the application moves to member3, which the policy allows; the
// copy on member1 stays until member3's is healthy, and goes once member1 is back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { CLUSTER, DEPLOY, RB, WORKS, clustersOf, nginx, nginxPolicy, startStack, taints, tasksOf, type Obj } from "./harness.js";

test("the Duplicated walk-through: member1 fails and the application moves to member3", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(2));
    await s.post(
      "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies",
      nginxPolicy({
        clusterAffinity: { clusterNames: ["member1", "member3"] },
        spreadConstraints: [{ spreadByField: "cluster", maxGroups: 1, minGroups: 1 }],
        replicaScheduling: { replicaSchedulingType: "Duplicated" },
      }),
    );
    const m1 = s.sim.cluster("member1");
    const m3 = s.sim.cluster("member3");
    const readyOn = (c: typeof m1) => (c.get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.status?.readyReplicas;
    const first = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && Object.keys(clustersOf(b)).length === 1 ? b : undefined;
    }, { timeoutMs: 20_000, message: "scheduled to one cluster" });
    assert.deepEqual(clustersOf(first), { member1: 2 }, "member1 has the most room");
    await eventually(() => readyOn(m1) === 2, { timeoutMs: 20_000, message: "nginx 2/2 on member1" });

    await s.sim.setFault("member1", { mode: "unreachable" });
    await eventually(async () => taints(await s.get(CLUSTER("member1"))).includes("cluster.karmada.io/not-ready:NoExecute"), { timeoutMs: 15_000, message: "NoExecute" });
    const moved = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && clustersOf(b).member3 === 2 ? b : undefined;
    }, { timeoutMs: 20_000, message: "rescheduled to member3" });
    assert.deepEqual(clustersOf(moved), { member3: 2 });
    assert.deepEqual(tasksOf(moved), ["member1"], "member1's copy is kept while member3's comes up");
    await eventually(() => readyOn(m3) === 2, { timeoutMs: 20_000, message: "nginx 2/2 on member3" });
    await eventually(async () => tasksOf(await s.get(RB("nginx-deployment"))).length === 0, { timeoutMs: 20_000, message: "task dropped" });
    await eventually(async () => (await s.list(WORKS("member1"))).every((w) => w.metadata.deletionTimestamp), { timeoutMs: 15_000, message: "member1's Work deleting" });
    await eventually(async () => (await s.get(DEPLOY("nginx")))?.status?.readyReplicas === 2, { timeoutMs: 10_000, message: "control-plane nginx 2/2" });

    await s.sim.setFault("member1", { mode: "healthy" });
    await eventually(async () => (await s.list(WORKS("member1"))).length === 0, { timeoutMs: 20_000, message: "member1's Work gone" });
    await eventually(() => m1.get("apps/v1", "Deployment", "nginx", "default") === undefined, { timeoutMs: 10_000, message: "nginx removed from member1" });
    assert.deepEqual(clustersOf(await s.get(RB("nginx-deployment"))), { member3: 2 }, "no move back");
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
