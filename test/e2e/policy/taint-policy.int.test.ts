// A ClusterTaintPolicy end to end: the gateway takes it, the simulator's member1 becomes
// unreachable, the execution service reports Ready Unknown, the taint-manager adds the policy's
// taint; a Deployment placed afterwards avoids member1 (its placement does not tolerate the
// taint); member1 recovers and the policy's taint goes, while a taint set by hand stays.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { CLUSTER, RB, clustersOf, nginx, nginxPolicy, ready, startStack, taints, type Obj } from "../failover/harness.js";
import { bearer } from "../../load/lib/stack.js";

const POLICY_TAINT = "example.com/not-ready:NoSchedule";

test("a ClusterTaintPolicy taints an unreachable member, placements avoid it, and the taint goes when it recovers", async (t) => {
  // no automatic NoExecute taints and a long grace: only the policy's taint decides here
  const s = await startStack({ env: { ENABLE_CLUSTER_NO_EXECUTE_TAINTS: "false", FAILOVER_EVICTION_TIMEOUT: "600s" } });
  t.after(() => s.close());
  try {
    await s.post("/apis/policy.karmada.io/v1alpha1/clustertaintpolicies", {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "ClusterTaintPolicy",
      metadata: { name: "detect-cluster-not-ready" },
      spec: {
        targetClusters: { clusterNames: ["member1", "member2"] },
        addOnConditions: [{ conditionType: "Ready", operator: "NotIn", statusValues: ["True"] }],
        removeOnConditions: [{ conditionType: "Ready", operator: "In", statusValues: ["True"] }],
        taints: [{ key: "example.com/not-ready", effect: "NoSchedule" }],
      },
    });
    // a taint set by hand on member1 that no policy owns
    const patch = await fetch(`${s.gw}${CLUSTER("member1")}`, {
      method: "PATCH",
      headers: { "content-type": "application/merge-patch+json", ...bearer(s.token) },
      body: JSON.stringify({ spec: { taints: [{ key: "example.com/by-hand", effect: "NoSchedule" }] } }),
    });
    assert.equal(patch.status, 200, await patch.text());
    assert.deepEqual(taints(await s.get(CLUSTER("member1"))), ["example.com/by-hand:NoSchedule"]);

    await s.sim.setFault("member1", { mode: "unreachable" });
    const tainted = await eventually(async () => {
      const c = await s.get(CLUSTER("member1"));
      return taints(c).includes(POLICY_TAINT) ? c : undefined;
    }, { timeoutMs: 30_000, message: "member1 gets the policy's taint" });
    assert.notEqual(ready(tainted), "True");
    assert.deepEqual(taints(await s.get(CLUSTER("member2"))), [], "member2 stays untainted");

    // a Duplicated placement over member1 and member2 that tolerates the hand-set taint and the
    // cluster controller's own NoSchedule taints: only the policy's taint can keep it off member1
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(1));
    await s.post(
      "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies",
      nginxPolicy({ clusterAffinity: { clusterNames: ["member1", "member2"] }, clusterTolerations: ["example.com/by-hand", "cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"].map((key) => ({ key, operator: "Exists", effect: "NoSchedule" })), replicaScheduling: { replicaSchedulingType: "Duplicated" } }),
    );
    const b = await eventually(async () => {
      const rb = await s.get(RB("nginx-deployment"));
      return Object.keys(clustersOf(rb)).length ? rb : undefined;
    }, { timeoutMs: 30_000, message: "nginx scheduled" });
    assert.deepEqual(Object.keys(clustersOf(b as Obj)), ["member2"], "the policy's taint keeps the new workload off member1");

    await s.sim.setFault("member1", { mode: "healthy" });
    await eventually(async () => {
      const c = await s.get(CLUSTER("member1"));
      return ready(c) === "True" && !taints(c).includes(POLICY_TAINT);
    }, { timeoutMs: 30_000, message: "member1 Ready and the policy's taint removed" });
    await eventually(async () => JSON.stringify(taints(await s.get(CLUSTER("member1")))) === JSON.stringify(["example.com/by-hand:NoSchedule"]), { timeoutMs: 15_000, message: "only the hand-set taint stays on member1" });
  } catch (e) {
    console.error(s.logs());
    throw e;
  }
});
