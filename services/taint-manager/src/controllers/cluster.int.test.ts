import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster, KubeObject, Taint } from "@flotilla/api";
import { listEventsFor } from "@flotilla/store";
import { eventually, sleep } from "@flotilla/testkit";
import { clusterRef, k8sNow, makeBinding, makeCluster, readyCond, rbRef, setReady, setup } from "../int.test-support.js";

const taintsOf = async (store: Parameters<typeof listEventsFor>[0], name: string) =>
  ((await store.get<Cluster>(clusterRef(name)))?.spec?.taints ?? []).map((t: Taint) => `${t.key}:${t.effect}`).sort();

test("Ready False: not-ready:NoSchedule at once, not-ready:NoExecute after the failover-eviction timeout, each with timeAdded", async () => {
  const env = await setup({ FAILOVER_EVICTION_TIMEOUT: "2s" });
  try {
    await env.store.create(makeCluster("member1", { ready: readyCond("False") }));
    const t0 = Date.now();
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoSchedule"), { timeoutMs: 5000 });
    assert.deepEqual(await taintsOf(env.store, "member1"), ["cluster.karmada.io/not-ready:NoSchedule"]);
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoExecute"), { timeoutMs: 6000, intervalMs: 50 });
    assert.ok(Date.now() - t0 >= 500, "NoExecute waited for the timeout");
    const c = await env.store.mustGet<Cluster>(clusterRef("member1"));
    for (const t of c.spec!.taints!) assert.match(t.timeAdded ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, `${t.key}:${t.effect} has timeAdded`);
    const since = Date.parse(c.status!.conditions![0].lastTransitionTime!);
    const noExecuteAt = Date.parse(c.spec!.taints!.find((t) => t.effect === "NoExecute")!.timeAdded!);
    assert.ok(noExecuteAt - since >= 1000, `NoExecute added ${noExecuteAt - since} ms after the transition (2 s timeout, second-precision timestamps)`);
    assert.ok(c.metadata.finalizers?.includes("karmada.io/cluster-controller"));
    const events = await eventually(async () => {
      const e = await listEventsFor(env.store, c);
      return e.some((x) => x.reason === "TaintClusterSucceed" && x.message.includes("cluster.karmada.io/not-ready:NoExecute")) ? e : undefined;
    });
    assert.equal(events[0].involvedObject.kind, "Cluster");
    assert.equal(events[0].metadata.namespace, "default");
  } finally {
    await env.close();
  }
});

test("Ready Unknown: unreachable:NoSchedule replaces not-ready:NoSchedule, then unreachable:NoExecute", async () => {
  const env = await setup();
  try {
    await env.store.create(makeCluster("member1", { ready: readyCond("False") }));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoSchedule"));
    await setReady(env.store, "member1", readyCond("Unknown"));
    await eventually(async () => {
      const t = await taintsOf(env.store, "member1");
      return t.includes("cluster.karmada.io/unreachable:NoSchedule") && !t.includes("cluster.karmada.io/not-ready:NoSchedule");
    });
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/unreachable:NoExecute"), { timeoutMs: 5000 });
  } finally {
    await env.close();
  }
});

test("a new cluster without a Ready condition gets not-ready:NoSchedule and no NoExecute taint", async () => {
  const env = await setup();
  try {
    await env.store.create(makeCluster("member1"));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoSchedule"));
    await sleep(2500);
    assert.deepEqual(await taintsOf(env.store, "member1"), ["cluster.karmada.io/not-ready:NoSchedule"]);
  } finally {
    await env.close();
  }
});

test("Ready True removes the controller's taints and leaves a user's taint alone", async () => {
  const env = await setup();
  try {
    const user: Taint = { key: "dedicated", value: "gpu", effect: "NoSchedule", timeAdded: k8sNow() };
    await env.store.create(makeCluster("member1", { ready: readyCond("Unknown"), taints: [user] }));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/unreachable:NoExecute"), { timeoutMs: 5000 });
    await setReady(env.store, "member1", readyCond("True", { heartbeatMs: 0 }));
    await eventually(async () => (await taintsOf(env.store, "member1")).length === 1);
    const c = await env.store.mustGet<Cluster>(clusterRef("member1"));
    assert.deepEqual(c.spec!.taints, [user]);
  } finally {
    await env.close();
  }
});

test("with failover off a not-Ready cluster never gets a NoExecute taint", async () => {
  const env = await setup({ FAILOVER: "false" });
  try {
    await env.store.create(makeCluster("member1", { ready: readyCond("False") }));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/not-ready:NoSchedule"));
    await sleep(2500);
    assert.deepEqual(await taintsOf(env.store, "member1"), ["cluster.karmada.io/not-ready:NoSchedule"]);
  } finally {
    await env.close();
  }
});

test("the health monitor sets Ready to Unknown when no heartbeat came for the grace period, and the taints follow", async () => {
  const env = await setup({ CLUSTER_MONITOR_GRACE_PERIOD: "2s", FAILOVER_EVICTION_TIMEOUT: "3s" });
  try {
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    // a live reporter: heartbeats every 500 ms keep it Ready
    for (let i = 0; i < 6; i++) {
      await sleep(500);
      await setReady(env.store, "member1", readyCond("True", { heartbeatMs: 0 }));
    }
    let c = await env.store.mustGet<Cluster>(clusterRef("member1"));
    assert.equal(c.status!.conditions![0].status, "True");
    const stoppedAt = Date.now();
    // the reporter stops
    c = await eventually(async () => {
      const x = await env.store.mustGet<Cluster>(clusterRef("member1"));
      return x.status?.conditions?.find((k) => k.type === "Ready")?.status === "Unknown" ? x : undefined;
    }, { timeoutMs: 6000, intervalMs: 50 });
    const ready = c.status!.conditions!.find((k) => k.type === "Ready")!;
    assert.equal(ready.reason, "ClusterStatusUnknown");
    assert.ok(Date.now() - stoppedAt >= 1000);
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/unreachable:NoSchedule"));
    // the NoExecute timeout counts from the last heartbeat
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/unreachable:NoExecute"), { timeoutMs: 6000 });
    await eventually(async () => (await listEventsFor(env.store, c)).some((e) => e.reason === "ClusterStatusUnknown" && e.type === "Warning"));
  } finally {
    await env.close();
  }
});

test("a Pull cluster is judged by its Lease renewals as well: renewals keep it Ready without new heartbeats; when they stop it becomes Unknown", async () => {
  const env = await setup({ CLUSTER_MONITOR_GRACE_PERIOD: "2s", FAILOVER_EVICTION_TIMEOUT: "1h" });
  try {
    const leaseRef = (name: string) => ({ gk: "coordination.k8s.io/Lease", namespace: "karmada-cluster", name });
    const micro = () => new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
    const renew = async (name: string) => {
      const cur = await env.store.get<KubeObject>(leaseRef(name));
      const spec = { holderIdentity: name, leaseDurationSeconds: 40, renewTime: micro() };
      if (!cur) await env.store.create({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, namespace: "karmada-cluster" }, spec } as KubeObject);
      else await env.store.update({ ...cur, spec } as KubeObject);
    };
    const pull = makeCluster("member3", { ready: readyCond("True", { heartbeatMs: 0 }) });
    pull.spec = { syncMode: "Pull" };
    await env.store.create(pull);
    // a Push cluster with a Lease of its name: the Lease is not its heartbeat
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    const readyOf = async (name: string) => (await env.store.mustGet<Cluster>(clusterRef(name))).status?.conditions?.find((k) => k.type === "Ready")?.status;
    // the agent renews the lease every 300 ms for twice the grace period and never writes status again
    for (let i = 0; i < 14; i++) {
      await renew("member3");
      await renew("member1");
      await sleep(300);
    }
    assert.equal(await readyOf("member3"), "True");
    assert.equal(await readyOf("member1"), "Unknown");
    assert.deepEqual(await taintsOf(env.store, "member3"), []);
    const stoppedAt = Date.now();
    // the agent stops
    await eventually(async () => (await readyOf("member3")) === "Unknown", { timeoutMs: 6000, intervalMs: 50 });
    assert.ok(Date.now() - stoppedAt >= 1500, `Unknown after ${Date.now() - stoppedAt} ms, before the grace period`);
    const c = await env.store.mustGet<Cluster>(clusterRef("member3"));
    assert.equal(c.status!.conditions!.find((k) => k.type === "Ready")!.reason, "ClusterStatusUnknown");
    await eventually(async () => (await taintsOf(env.store, "member3")).includes("cluster.karmada.io/unreachable:NoSchedule"));
  } finally {
    await env.close();
  }
});

test("a cluster being deleted gets terminating:NoExecute, its bindings are evicted, and it goes once its bindings and Works are gone", async () => {
  const env = await setup();
  try {
    await env.store.create(makeCluster("member1", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    await env.store.create(makeCluster("member2", { ready: readyCond("True", { heartbeatMs: 0 }) }));
    await eventually(async () => (await env.store.get<Cluster>(clusterRef("member1")))?.metadata.finalizers?.includes("karmada.io/cluster-controller"));
    await env.store.create(makeBinding("nginx", [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }]));
    const work: KubeObject = { apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { namespace: "karmada-es-member1", name: "nginx-687f7fb96f" }, spec: {} };
    await env.store.create(work);
    await env.store.delete(clusterRef("member1"));
    await eventually(async () => (await taintsOf(env.store, "member1")).includes("cluster.karmada.io/terminating:NoExecute"));
    // the taint manager evicts the binding (terminating is not tolerated) into a graceful-eviction task
    const rb = await eventually(async () => {
      const b = await env.store.get(rbRef("nginx"));
      return b && !b.spec.clusters.some((c: { name: string }) => c.name === "member1") ? b : undefined;
    });
    assert.equal(rb.spec.gracefulEvictionTasks[0].fromCluster, "member1");
    await sleep(800);
    assert.ok(await env.store.get(clusterRef("member1")), "kept while a graceful-eviction task still refers to it");
    // the graceful-eviction controller drops the task
    await env.store.mutate(rbRef("nginx"), (b) => ({ ...b, spec: { ...b.spec, gracefulEvictionTasks: [] } }));
    await eventually(async () => !(await env.store.get({ gk: "work.karmada.io/Work", namespace: "karmada-es-member1", name: "nginx-687f7fb96f" })), { timeoutMs: 5000 });
    await eventually(async () => !(await env.store.get(clusterRef("member1"))), { timeoutMs: 5000 });
  } finally {
    await env.close();
  }
});
