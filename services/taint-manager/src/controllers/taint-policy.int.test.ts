import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyResourceBinding, Cluster, ClusterTaintPolicy, Condition, Taint } from "@flotilla/api";
import { listEventsFor, type ObjectStore } from "@flotilla/store";
import { eventually, sleep } from "@flotilla/testkit";
import { PolicyTaintsAnnotation, readPolicyTaints } from "../logic/taint-policies.js";
import { clusterRef, k8sNow, makeBinding, makeCluster, rbRef, readyCond, setCondition, setReady, setup } from "../int.test-support.js";

const CTP_GK = "policy.karmada.io/ClusterTaintPolicy";
const ctpRef = (name: string) => ({ gk: CTP_GK, namespace: "", name });

const policy = (name: string, spec: ClusterTaintPolicy["spec"]): ClusterTaintPolicy => ({ apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterTaintPolicy", metadata: { name }, spec });
const m = (conditionType: string, operator: string, ...statusValues: string[]) => ({ conditionType, operator, statusValues });

const taintsOf = async (store: ObjectStore, name: string) => ((await store.get<Cluster>(clusterRef(name)))?.spec?.taints ?? []).map((t: Taint) => `${t.key}:${t.effect}`).sort();
const recordsOf = async (store: ObjectStore, name: string) => readPolicyTaints((await store.mustGet<Cluster>(clusterRef(name))).metadata.annotations).map((r) => `${r.key}:${r.effect} by ${r.policy}`);

/** A condition a third party reports on the member. */
const custom = (type: string, status: string): Condition => ({ type, status, reason: "Reported", message: "", lastTransitionTime: k8sNow() });

test("a policy's taint comes with its conditions and goes when they recover, next to the cluster controller's", async () => {
  const env = await setup();
  try {
    await env.store.create(
      policy("detect-not-ready", {
        targetClusters: { clusterNames: ["member1"] },
        addOnConditions: [m("Ready", "NotIn", "True")],
        removeOnConditions: [m("Ready", "In", "True")],
        taints: [{ key: "example.com/not-ready", value: "yes", effect: "NoSchedule" }],
      }),
    );
    await env.store.create(makeCluster("member1", { ready: readyCond("False") }));
    await env.store.create(makeCluster("member2", { ready: readyCond("False") }));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("example.com/not-ready:NoSchedule"));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoSchedule"));
    const c = await env.store.mustGet<Cluster>(clusterRef("member1"));
    const t = c.spec!.taints!.find((x) => x.key === "example.com/not-ready")!;
    assert.equal(t.value, "yes");
    assert.match(t.timeAdded ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(await recordsOf(env.store, "member1"), ["example.com/not-ready:NoSchedule by detect-not-ready"], "only the policy's taint is recorded as a policy's");
    await eventually(async () => (await listEventsFor(env.store, c)).some((e) => e.reason === "TaintClusterSucceed" && e.message.startsWith("Update Cluster(member1) with taints(") && e.message.includes("example.com/not-ready=yes:NoSchedule")));
    // member2 is not a target
    await sleep(500);
    assert.ok(!(await taintsOf(env.store, "member2")).includes("example.com/not-ready:NoSchedule"));

    await setReady(env.store, "member1", readyCond("True", { heartbeatMs: 0 }));
    await eventually(async () => (await taintsOf(env.store, "member1")).length === 0);
    assert.equal((await env.store.mustGet<Cluster>(clusterRef("member1"))).metadata.annotations?.[PolicyTaintsAnnotation], undefined, "the record goes with the taint");
  } finally {
    await env.close();
  }
});

test("policy changes are followed: a new policy, a changed taint list, a deletion that removes nothing", async () => {
  const env = await setup();
  try {
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    await setCondition(env.store, "member1", custom("NetworkAvailable", "False"));
    await sleep(300);
    const p = await env.store.create(policy("network", { addOnConditions: [m("NetworkAvailable", "In", "False")], removeOnConditions: [m("NetworkAvailable", "In", "True")], taints: [{ key: "example.com/network", effect: "NoSchedule" }] }));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("example.com/network:NoSchedule"));

    await env.store.update({ ...p, spec: { ...p.spec, taints: [{ key: "example.com/network-down", effect: "NoSchedule" }] } });
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("example.com/network-down:NoSchedule"));
    assert.ok((await taintsOf(env.store, "member1")).includes("example.com/network:NoSchedule"), "a taint the policy no longer lists is left as it is");

    await env.store.delete(ctpRef("network"));
    await sleep(800);
    assert.deepEqual(await taintsOf(env.store, "member1"), ["example.com/network-down:NoSchedule", "example.com/network:NoSchedule"], "deleting the policy removes nothing");
    await setCondition(env.store, "member1", custom("NetworkAvailable", "True"));
    await sleep(800);
    assert.deepEqual(await taintsOf(env.store, "member1"), ["example.com/network-down:NoSchedule", "example.com/network:NoSchedule"], "nor does a recovery after it is gone");
  } finally {
    await env.close();
  }
});

test("with ENABLE_CLUSTER_NO_EXECUTE_TAINTS=false the NoExecute taint comes from a policy alone, evicts, and is removed by it", async () => {
  const env = await setup({ ENABLE_CLUSTER_NO_EXECUTE_TAINTS: "false", FAILOVER_EVICTION_TIMEOUT: "1s", NO_EXECUTE_TAINT_EVICTION_PURGE_MODE: "Directly" });
  try {
    // no policy yet: the cluster controller adds NoSchedule only, however long the cluster stays not Ready
    await env.store.create(makeCluster("member1", { ready: readyCond("False") }));
    await env.store.create(makeCluster("member2", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 2 }, { name: "member2", replicas: 1 }]));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoSchedule"));
    await sleep(2000);
    assert.deepEqual(await taintsOf(env.store, "member1"), ["cluster.karmada.io/not-ready:NoSchedule"]);
    assert.deepEqual((await env.store.mustGet<AnyResourceBinding>(rbRef("nginx"))).spec?.clusters?.map((c) => c.name), ["member1", "member2"]);

    await env.store.create(policy("evict-from-not-ready", { addOnConditions: [m("Ready", "In", "False")], removeOnConditions: [m("Ready", "NotIn", "False")], taints: [{ key: "cluster.karmada.io/not-ready", effect: "NoExecute" }] }));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoExecute"));
    assert.deepEqual(await recordsOf(env.store, "member1"), ["cluster.karmada.io/not-ready:NoExecute by evict-from-not-ready"]);
    // the taint manager evicts on the policy's taint (the binding has no tolerations)
    await eventually(async () => {
      const b = await env.store.mustGet<AnyResourceBinding>(rbRef("nginx"));
      return !(b.spec?.clusters ?? []).some((c) => c.name === "member1");
    }, { timeoutMs: 8000 });

    await setReady(env.store, "member1", readyCond("True", { heartbeatMs: 0 }));
    await eventually(async () => (await taintsOf(env.store, "member1")).length === 0);
  } finally {
    await env.close();
  }
});

test("the cluster controller never removes a policy's taint, and a policy never removes one it did not add", async () => {
  const env = await setup({ ENABLE_CLUSTER_NO_EXECUTE_TAINTS: "false" });
  try {
    const manual: Taint = { key: "example.com/maintenance", effect: "NoSchedule", timeAdded: k8sNow() };
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }), taints: [manual] }));
    await setCondition(env.store, "member1", custom("Maintenance", "True"));
    // a policy that sets the cluster controller's own key, on a condition of its own, and lists the manual taint
    await env.store.create(
      policy("maintenance", {
        addOnConditions: [m("Maintenance", "In", "True")],
        removeOnConditions: [m("Maintenance", "In", "False")],
        taints: [
          { key: "cluster.karmada.io/not-ready", effect: "NoExecute" },
          { key: "example.com/maintenance", effect: "NoSchedule" },
        ],
      }),
    );
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoExecute"));
    const addedAt = (await env.store.mustGet<Cluster>(clusterRef("member1"))).spec!.taints!.find((t) => t.effect === "NoExecute")!.timeAdded;
    // Ready is True: the cluster controller would remove not-ready:NoExecute if it were its own (and
    // the policy would put it back, again and again)
    await setReady(env.store, "member1", readyCond("True", { heartbeatMs: 0 }));
    await sleep(1000);
    const settled = await env.store.mustGet<Cluster>(clusterRef("member1"));
    await sleep(1000);
    const later = await env.store.mustGet<Cluster>(clusterRef("member1"));
    assert.equal(later.metadata.resourceVersion, settled.metadata.resourceVersion, "nobody rewrites the cluster: no tug of war");
    assert.equal(later.spec!.taints!.find((t) => t.effect === "NoExecute")?.timeAdded, addedAt, "the policy's taint was never removed and added again");
    assert.deepEqual(await taintsOf(env.store, "member1"), ["cluster.karmada.io/not-ready:NoExecute", "example.com/maintenance:NoSchedule"]);
    assert.deepEqual(await recordsOf(env.store, "member1"), ["cluster.karmada.io/not-ready:NoExecute by maintenance"], "the manual taint was there first: not the policy's");

    await setCondition(env.store, "member1", custom("Maintenance", "False"));
    await eventually(async () => !(await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoExecute"));
    await sleep(500);
    const c = await env.store.mustGet<Cluster>(clusterRef("member1"));
    assert.deepEqual(c.spec?.taints, [manual], "the manual taint stays, as it was");
    assert.equal(c.metadata.annotations?.[PolicyTaintsAnnotation], undefined);
  } finally {
    await env.close();
  }
});
