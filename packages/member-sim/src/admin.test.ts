import { test } from "node:test";
import assert from "node:assert/strict";
import { configMap, deployment, eventually, kube, simulator } from "./test-util.js";

async function admin(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    ...(body !== undefined ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: JSON.parse(await res.text() || "null") };
}

test("the admin API lists clusters with their server, token, topology and fault", async (t) => {
  const sim = await simulator(t, {
    admin: { port: 0 },
    clusters: [
      { name: "member1", token: "t1", region: "us-east-1", zone: "us-east-1a", provider: "aws", labels: { env: "prod" } },
      { name: "member2", region: "eu-west-1" },
    ],
  });
  assert.match(sim.adminUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
  const r = await admin(sim.adminUrl!, "GET", "/admin/clusters");
  assert.equal(r.status, 200);
  const [m1, m2] = r.body.clusters;
  assert.equal(m1.name, "member1");
  assert.equal(m1.server, sim.cluster("member1").url);
  assert.equal(m1.token, "t1");
  assert.deepEqual([m1.region, m1.zone, m1.provider, m1.labels], ["us-east-1", "us-east-1a", "aws", { env: "prod" }]);
  assert.deepEqual(m1.fault, { mode: "healthy" });
  assert.equal(m2.token, "member2-token");
});

test("the admin API switches faults, inspects objects and adds and removes clusters", async (t) => {
  const sim = await simulator(t, { admin: { port: 0 }, clusters: [{ name: "member1" }] });
  const base = sim.adminUrl!;
  const c = sim.cluster("member1");

  const slow = await admin(base, "PUT", "/admin/clusters/member1/fault", { mode: "slow", latencyMs: 20 });
  assert.equal(slow.status, 200);
  assert.deepEqual(slow.body.fault, { mode: "slow", latencyMs: 20 });
  assert.equal((await admin(base, "PUT", "/admin/clusters/member1/fault", { mode: "sideways" })).status, 400);
  assert.equal((await admin(base, "PUT", "/admin/clusters/nobody/fault", { mode: "healthy" })).status, 404);
  await admin(base, "PUT", "/admin/clusters/member1/fault", { mode: "healthy" });

  await kube(c, "POST", "/api/v1/namespaces/default/configmaps", configMap("cm", { k: "v" }));
  const objs = await admin(base, "GET", "/admin/clusters/member1/objects?kind=ConfigMap");
  assert.deepEqual(objs.body.items.map((o: { metadata: { name: string } }) => o.metadata.name), ["cm"]);
  const summary = await admin(base, "GET", "/admin/clusters/member1/summary");
  assert.deepEqual(summary.body.allocatable, { cpu: "24", memory: "96Gi", pods: "330" });

  const added = await admin(base, "POST", "/admin/clusters", { name: "member9", region: "ap-south-1", nodes: [{ cpu: "2", memory: "8Gi" }] });
  assert.equal(added.status, 201);
  assert.match(added.body.server, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal((await kube(sim.cluster("member9"), "GET", "/readyz")).status, 200);
  assert.equal((await admin(base, "POST", "/admin/clusters", { name: "member9" })).status, 409);
  assert.equal((await admin(base, "POST", "/admin/clusters", { name: "Bad_Name" })).status, 400);

  const nodes = await admin(base, "PUT", "/admin/clusters/member9/nodes", { nodes: [{ name: "a", cpu: "1", memory: "1Gi" }, { name: "b", cpu: "1", memory: "1Gi" }] });
  assert.equal(nodes.body.nodes, 2);
  const delay = await admin(base, "PUT", "/admin/clusters/member9/ready-delay", { readyDelayMs: 5 });
  assert.equal(delay.body.readyDelayMs, 5);
  assert.deepEqual((await admin(base, "PUT", "/admin/defaults", { readyDelayMs: 7 })).body, { readyDelayMs: 7 });
  assert.equal((await admin(base, "GET", "/admin/clusters/member1")).body.readyDelayMs, 7);

  assert.equal((await admin(base, "DELETE", "/admin/clusters/member9")).status, 200);
  assert.equal((await admin(base, "GET", "/admin/clusters")).body.clusters.length, 1);
});

test("the admin API makes one Deployment unhealthy (running pods, none ready) and healthy again", async (t) => {
  const sim = await simulator(t, { admin: { port: 0 }, defaults: { readyDelayMs: 0 }, clusters: [{ name: "member1" }] });
  const base = sim.adminUrl!;
  const c = sim.cluster("member1");
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 2));
  const status = async () => (await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status as { replicas: number; readyReplicas: number };
  await eventually(async () => (await status()).readyReplicas === 2);

  const bad = await admin(base, "PUT", "/admin/clusters/member1/workload-health", { kind: "Deployment", namespace: "default", name: "web", healthy: false });
  assert.equal(bad.status, 200);
  assert.deepEqual(bad.body, { unhealthy: ["Deployment/default/web"] });
  const s = await eventually(async () => ((await status()).readyReplicas === 0 ? status() : undefined));
  assert.equal(s?.replicas, 2, "the pods still run");

  await admin(base, "PUT", "/admin/clusters/member1/workload-health", { kind: "Deployment", name: "web", healthy: true });
  await eventually(async () => (await status()).readyReplicas === 2);
  assert.equal((await admin(base, "PUT", "/admin/clusters/member1/workload-health", { kind: "Pod", name: "web", healthy: true })).status, 400);
  assert.equal((await admin(base, "PUT", "/admin/clusters/member1/workload-health", { kind: "Deployment", name: "web" })).status, 400);
});
