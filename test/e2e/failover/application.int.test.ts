// Application failover end to end: nginx runs on one of member1/member2 (spread to exactly one
// cluster) under a policy with failover.application (toleration 2 s, purge Directly, the
// Deployment's status.replicas preserved as a label). The simulator makes member1's copy
// unhealthy (pods running, none ready); after the toleration the application moves to member2,
// whose copy carries the preserved label; member1's copy stays until member2's is healthy
// (the last running copy is never deleted first) and then goes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { DEPLOY, EVENTS, RB, clustersOf, nginx, nginxPolicy, startStack, type Obj } from "./harness.js";

const LABEL = "failover.karmada.io/replicas";

test("an unhealthy Deployment moves to another cluster with its preserved state", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(2));
    await s.post(
      "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies",
      nginxPolicy(
        {
          clusterAffinity: { clusterNames: ["member1", "member2"] },
          spreadConstraints: [{ spreadByField: "cluster", maxGroups: 1, minGroups: 1 }],
          replicaScheduling: { replicaSchedulingType: "Duplicated" },
        },
        {
          propagateDeps: true,
          failover: {
            application: {
              decisionConditions: { tolerationSeconds: 2 },
              purgeMode: "Directly",
              statePreservation: { rules: [{ aliasLabelName: LABEL, jsonPath: "{ .replicas }" }] },
            },
          },
        },
      ),
    );
    const m1 = s.sim.cluster("member1");
    const m2 = s.sim.cluster("member2");
    const copy = (c: typeof m1) => c.get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined;
    const first = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && Object.keys(clustersOf(b)).length === 1 ? b : undefined;
    }, { timeoutMs: 20_000, message: "scheduled to one cluster" });
    assert.deepEqual(clustersOf(first), { member1: 2 }, "member1 has the most room");
    assert.deepEqual(first.spec?.failover?.application?.purgeMode, "Directly", "the binding carries the policy's failover");
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return (b?.status?.aggregatedStatus as { clusterName: string; health: string }[] | undefined)?.some((i) => i.clusterName === "member1" && i.health === "Healthy");
    }, { timeoutMs: 20_000, message: "member1 reports nginx Healthy" });

    const r = await fetch(`${s.sim.adminUrl}/admin/clusters/member1/workload-health`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "Deployment", namespace: "default", name: "nginx", healthy: false }),
    });
    assert.equal(r.status, 200);
    const unhealthyAt = Date.now();

    const moved = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && (b.spec?.gracefulEvictionTasks ?? []).length > 0 ? b : undefined;
    }, { timeoutMs: 20_000, message: "member1 evicted" });
    const took = Date.now() - unhealthyAt;
    assert.ok(took >= 2000, `evicted ${took} ms after the fault (toleration 2 s)`);
    const [task] = moved.spec!.gracefulEvictionTasks as Record<string, unknown>[];
    assert.equal(task!.fromCluster, "member1");
    assert.equal(task!.reason, "ApplicationFailure");
    assert.equal(task!.producer, "resource-binding-application-failover-controller");
    assert.equal(task!.purgeMode, "Directly");
    assert.deepEqual(task!.preservedLabelState, { [LABEL]: "2" });

    // the new copy on member2 carries the preserved state, and member1's copy is still there
    const newCopy = await eventually(() => copy(m2), { timeoutMs: 20_000, message: "nginx on member2" });
    assert.equal((newCopy.metadata as { labels?: Record<string, string> }).labels?.[LABEL], "2", "the preserved state label is on member2's copy");
    assert.ok(copy(m1), "member1's copy is kept while member2's is not healthy yet (never the last running copy)");
    const rb = await s.get(RB("nginx-deployment"));
    assert.deepEqual(clustersOf(rb), { member2: 2 });

    await eventually(() => copy(m2)?.status?.readyReplicas === 2, { timeoutMs: 20_000, message: "nginx 2/2 on member2" });
    await eventually(() => copy(m1) === undefined, { timeoutMs: 20_000, message: "member1's copy removed once member2's is healthy" });
    await eventually(async () => ((await s.get(RB("nginx-deployment")))?.spec?.gracefulEvictionTasks ?? []).length === 0, { timeoutMs: 20_000, message: "the task is done" });

    const events = await s.list(EVENTS());
    assert.ok(events.some((e) => e.reason === "EvictWorkloadFromClusterSucceed"), "an event says why the application moved");
    const tmpl = await s.get(DEPLOY("nginx"));
    assert.equal(tmpl?.status?.readyReplicas, 2, "the template's status is member2's");
  } catch (e) {
    console.error(s.logs());
    throw e;
  }
});
