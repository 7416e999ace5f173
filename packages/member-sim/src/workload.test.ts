import { test } from "node:test";
import assert from "node:assert/strict";
import { deployment, eventually, kube, simulator, sleep } from "./test-util.js";
import type { KObject } from "./store.js";

const twoSmallNodes = [
  { name: "node-1", cpu: "1", memory: "4Gi", pods: 110 },
  { name: "node-2", cpu: "1", memory: "4Gi", pods: 110 },
];

const podsOf = (items: KObject[], app: string) => items.filter((p) => p.metadata.labels?.app === app);

test("a Deployment becomes ready only after the cluster's delay", async (t) => {
  const sim = await simulator(t, { clusters: [{ name: "member1", readyDelayMs: 300 }] });
  const c = sim.cluster("member1");
  const start = Date.now();
  const created = await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 3));
  assert.equal(created.status, 201);
  await sleep(50);
  const early = (await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body;
  assert.equal(early.status, undefined, "nothing happens before the delay");
  assert.equal((await kube(c, "GET", "/api/v1/namespaces/default/pods")).body.items.length, 0);
  const ready = await eventually(async () => {
    const d = (await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body;
    assert.equal(d.status?.readyReplicas, 3);
    return d;
  });
  assert.ok(Date.now() - start >= 300);
  assert.equal(ready.status.replicas, 3);
  assert.equal(ready.status.updatedReplicas, 3);
  assert.equal(ready.status.availableReplicas, 3);
  assert.equal(ready.status.observedGeneration, 1);
  assert.equal(ready.status.unavailableReplicas, undefined);
  const cond = Object.fromEntries(ready.status.conditions.map((x: { type: string; status: string; reason: string }) => [x.type, `${x.status}/${x.reason}`]));
  assert.deepEqual(cond, { Available: "True/MinimumReplicasAvailable", Progressing: "True/NewReplicaSetAvailable" });
  const pods = (await kube(c, "GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")).body.items as KObject[];
  assert.equal(pods.length, 3);
  for (const p of pods) {
    assert.equal(p.status.phase, "Running");
    assert.ok(p.spec.nodeName);
    assert.equal(p.metadata.ownerReferences?.[0]?.uid, created.body.metadata.uid);
  }
});

test("replicas beyond node capacity stay Pending without a node", async (t) => {
  // 2 nodes × 1000m; each replica asks 600m, so each node takes one (400m left < 600m).
  const sim = await simulator(t, { defaults: { readyDelayMs: 50 }, clusters: [{ name: "member1", nodes: twoSmallNodes }] });
  const c = sim.cluster("member1");
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("big", 5, "600m", "256Mi"));
  const d = await eventually(async () => {
    const x = (await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/big")).body;
    assert.equal(x.status?.observedGeneration, 1);
    return x;
  });
  assert.equal(d.status.replicas, 5);
  assert.equal(d.status.readyReplicas, 2);
  assert.equal(d.status.availableReplicas, 2);
  assert.equal(d.status.unavailableReplicas, 3);
  assert.equal(d.status.conditions.find((x: { type: string }) => x.type === "Available").status, "False");

  const pods = (await kube(c, "GET", "/api/v1/pods")).body.items as KObject[];
  const running = pods.filter((p) => p.status.phase === "Running");
  const pending = pods.filter((p) => p.status.phase === "Pending");
  assert.deepEqual(running.map((p) => p.spec.nodeName).sort(), ["node-1", "node-2"]);
  assert.equal(pending.length, 3);
  for (const p of pending) {
    assert.equal(p.spec.nodeName, undefined);
    assert.equal(p.status.conditions[0].reason, "Unschedulable");
    assert.equal(p.status.conditions[0].message, "0/2 nodes are available: 2 Insufficient cpu.");
  }
  assert.deepEqual(c.summary(), {
    allocatable: { cpu: "2", memory: "8Gi", pods: "220" },
    allocated: { cpu: "1200m", memory: "512Mi", pods: "2" },
    allocating: { cpu: "1800m", memory: "768Mi", pods: "3" },
  });
});

test("memory and pod slots limit replicas too", async (t) => {
  const sim = await simulator(t, {
    defaults: { readyDelayMs: 30 },
    clusters: [
      { name: "mem", nodes: [{ name: "n", cpu: "64", memory: "1Gi", pods: 110 }] },
      { name: "slots", nodes: [{ name: "n", cpu: "64", memory: "64Gi", pods: 3 }] },
    ],
  });
  await kube(sim.cluster("mem"), "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("m", 4, "100m", "300Mi"));
  await kube(sim.cluster("slots"), "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("s", 5, "10m"));
  await eventually(async () => {
    assert.equal((await kube(sim.cluster("mem"), "GET", "/apis/apps/v1/namespaces/default/deployments/m")).body.status?.readyReplicas, 3);
    assert.equal((await kube(sim.cluster("slots"), "GET", "/apis/apps/v1/namespaces/default/deployments/s")).body.status?.readyReplicas, 3);
  });
});

test("scaling down removes pods, pending ones first", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 40 }, clusters: [{ name: "member1", nodes: twoSmallNodes }] });
  const c = sim.cluster("member1");
  const path = "/apis/apps/v1/namespaces/default/deployments/big";
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("big", 4, "600m"));
  await eventually(async () => assert.equal((await kube(c, "GET", path)).body.status?.replicas, 4));
  const patched = await kube(c, "PATCH", path, { spec: { replicas: 2 } }, { contentType: "application/merge-patch+json" });
  assert.equal(patched.body.metadata.generation, 2);
  const d = await eventually(async () => {
    const x = (await kube(c, "GET", path)).body;
    assert.equal(x.status?.observedGeneration, 2);
    return x;
  });
  assert.deepEqual([d.status.replicas, d.status.readyReplicas], [2, 2]);
  const pods = podsOf((await kube(c, "GET", "/api/v1/pods")).body.items, "big");
  assert.equal(pods.length, 2);
  assert.ok(pods.every((p) => p.status.phase === "Running"));
});

test("deleting a Deployment removes its pods and the freed room goes to pending pods", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 40 }, clusters: [{ name: "member1", nodes: twoSmallNodes }] });
  const c = sim.cluster("member1");
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("first", 2, "600m"));
  await eventually(async () => assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/first")).body.status?.readyReplicas, 2));
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("second", 2, "600m"));
  await eventually(async () => {
    const s = (await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/second")).body.status;
    assert.deepEqual([s?.replicas, s?.readyReplicas], [2, 0]);
  });
  assert.equal((await kube(c, "DELETE", "/apis/apps/v1/namespaces/default/deployments/first")).status, 200);
  assert.equal(podsOf((await kube(c, "GET", "/api/v1/pods")).body.items, "first").length, 0, "pods go with their Deployment at once");
  await eventually(async () => assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/second")).body.status?.readyReplicas, 2));
});

test("a changed pod template replaces the pods", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 30 }, clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  const path = "/apis/apps/v1/namespaces/default/deployments/web";
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 2));
  await eventually(async () => assert.equal((await kube(c, "GET", path)).body.status?.readyReplicas, 2));
  const before = podsOf((await kube(c, "GET", "/api/v1/pods")).body.items, "web").map((p) => p.metadata.name);
  await kube(c, "PATCH", path, { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:1.26" }] } } } }, { contentType: "application/merge-patch+json" });
  await eventually(async () => {
    const s = (await kube(c, "GET", path)).body.status;
    assert.deepEqual([s?.observedGeneration, s?.updatedReplicas, s?.readyReplicas], [2, 2, 2]);
  });
  const after = podsOf((await kube(c, "GET", "/api/v1/pods")).body.items, "web");
  assert.equal(after.length, 2);
  assert.ok(after.every((p) => !before.includes(p.metadata.name) && p.spec.containers[0].image === "nginx:1.26"));
});

test("a deleted pod is replaced by its Deployment", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 30 }, clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 1));
  const [pod] = await eventually(async () => {
    const pods = (await kube(c, "GET", "/api/v1/namespaces/default/pods")).body.items as KObject[];
    assert.equal(pods.length, 1);
    return pods;
  });
  assert.equal((await kube(c, "DELETE", `/api/v1/namespaces/default/pods/${pod!.metadata.name}`)).status, 200);
  await eventually(async () => {
    const pods = (await kube(c, "GET", "/api/v1/namespaces/default/pods")).body.items as KObject[];
    assert.equal(pods.length, 1);
    assert.notEqual(pods[0]!.metadata.name, pod!.metadata.name);
    assert.equal(pods[0]!.status.phase, "Running");
  });
});

test("a StatefulSet gets ordinal pods and the same status fields", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 30 }, clusters: [{ name: "member1", nodes: twoSmallNodes }] });
  const c = sim.cluster("member1");
  const sts = { ...deployment("db", 3, "400m"), kind: "StatefulSet" };
  assert.equal((await kube(c, "POST", "/apis/apps/v1/namespaces/default/statefulsets", sts)).status, 201);
  const s = await eventually(async () => {
    const x = (await kube(c, "GET", "/apis/apps/v1/namespaces/default/statefulsets/db")).body.status;
    assert.equal(x?.replicas, 3);
    return x;
  });
  assert.equal(s.readyReplicas, 3);
  assert.equal(s.availableReplicas, 3);
  assert.equal(s.updatedReplicas, 3);
  assert.equal(s.observedGeneration, 1);
  assert.ok(s.conditions.some((x: { type: string }) => x.type === "Available"));
  const names = (await kube(c, "GET", "/api/v1/namespaces/default/pods")).body.items.map((p: KObject) => p.metadata.name).sort();
  assert.deepEqual(names, ["db-0", "db-1", "db-2"]);
  await kube(c, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/db", { spec: { replicas: 1 } }, { contentType: "application/merge-patch+json" });
  await eventually(async () => {
    const pods = (await kube(c, "GET", "/api/v1/namespaces/default/pods")).body.items.map((p: KObject) => p.metadata.name);
    assert.deepEqual(pods, ["db-0"]);
  });
});

test("the delay can be set globally and per cluster at runtime, and flush skips it", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 60_000 }, clusters: [{ name: "a" }, { name: "b" }, { name: "c" }] });
  sim.setReadyDelay(30);
  sim.cluster("b").setReadyDelay(60_000);
  assert.equal(sim.cluster("a").readyDelayMs, 30);
  assert.equal(sim.cluster("b").readyDelayMs, 60_000);
  for (const n of ["a", "b", "c"]) await kube(sim.cluster(n), "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 1));
  await eventually(async () => assert.equal((await kube(sim.cluster("a"), "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status?.readyReplicas, 1));
  await sleep(50);
  assert.equal((await kube(sim.cluster("b"), "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status, undefined);
  sim.cluster("b").flush();
  assert.equal((await kube(sim.cluster("b"), "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status?.readyReplicas, 1);
});

test("new nodes take pending pods", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 30 }, clusters: [{ name: "member1", nodes: [{ name: "n1", cpu: "1", memory: "4Gi" }] }] });
  const c = sim.cluster("member1");
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 3, "600m"));
  await eventually(async () => assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status?.readyReplicas, 1));
  c.setNodes([{ name: "n1", cpu: "1", memory: "4Gi" }, { name: "n2", cpu: "2", memory: "4Gi" }]);
  assert.equal((await kube(c, "GET", "/api/v1/nodes")).body.items.length, 2);
  await eventually(async () => assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status?.readyReplicas, 3));
});

test("deleting a namespace removes its workloads and their pods", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 20 }, clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  await kube(c, "POST", "/apis/apps/v1/namespaces/shop/deployments", deployment("web", 2, "100m", undefined, "shop"));
  await eventually(async () => assert.equal((await kube(c, "GET", "/api/v1/namespaces/shop/pods")).body.items.length, 2));
  assert.equal((await kube(c, "DELETE", "/api/v1/namespaces/shop")).status, 200);
  assert.equal((await kube(c, "GET", "/api/v1/namespaces/shop/pods")).body.items.length, 0);
  assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/shop/deployments/web")).status, 404);
  assert.deepEqual(c.summary().allocated, { cpu: "0", memory: "0", pods: "0" });
});
