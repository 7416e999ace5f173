import { test } from "node:test";
import assert from "node:assert/strict";
import { configMap, deployment, eventually, kube, simulator } from "./test-util.js";

/** The error code of a request to `url`; a client may first see its pooled connection die (UND_ERR_SOCKET). */
async function refused(url: string): Promise<string | undefined> {
  let code: string | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fetch(url);
      return undefined;
    } catch (e) {
      code = ((e as { cause?: { code?: string } }).cause ?? (e as { code?: string })).code;
      if (code === "ECONNREFUSED") return code;
    }
  }
  return code;
}

test("an unreachable cluster refuses connections and comes back on the same port with its objects", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 30 }, clusters: [{ name: "member1" }, { name: "member2" }] });
  const c = sim.cluster("member1");
  const url = c.url;
  await kube(c, "POST", "/api/v1/namespaces/default/configmaps", configMap("kept", { a: "1" }));
  await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 2));
  await eventually(async () => assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status?.readyReplicas, 2));

  const info = await sim.setFault("member1", { mode: "unreachable" });
  assert.equal(info.fault.mode, "unreachable");
  assert.equal(await refused(`${url}/readyz`), "ECONNREFUSED");
  assert.equal((await kube(sim.cluster("member2"), "GET", "/readyz")).status, 200, "other clusters are untouched");

  await sim.setFault("member1", { mode: "healthy" });
  assert.equal(c.url, url, "same port");
  assert.equal((await kube(c, "GET", "/readyz")).status, 200);
  assert.deepEqual((await kube(c, "GET", "/api/v1/namespaces/default/configmaps/kept")).body.data, { a: "1" });
  assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web")).body.status.readyReplicas, 2);
});

test("a cluster that starts unreachable on a free port can be brought up", async (t) => {
  const sim = await simulator(t, { clusters: [{ name: "member1", fault: { mode: "unreachable" } }] });
  const c = sim.cluster("member1");
  assert.ok(c.port > 0);
  assert.equal(await refused(`${c.url}/readyz`), "ECONNREFUSED");
  await sim.setFault("member1", { mode: "healthy" });
  assert.equal((await kube(c, "GET", "/readyz")).status, 200);
});

test("a not-ready cluster fails readyz and healthz but keeps serving the API", async (t) => {
  const sim = await simulator(t, { clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  await sim.setFault("member1", { mode: "not-ready" });
  for (const p of ["/readyz", "/healthz"]) {
    const r = await kube(c, "GET", p);
    assert.equal(r.status, 500, p);
    assert.match(String(r.body), new RegExp(`${p.slice(1)} check failed`));
  }
  assert.equal((await kube(c, "GET", "/livez")).status, 200);
  assert.equal((await kube(c, "POST", "/api/v1/namespaces/default/configmaps", configMap("x", {}))).status, 201);
  await sim.setFault("member1", { mode: "healthy" });
  assert.equal((await kube(c, "GET", "/readyz")).status, 200);
});

test("a slow cluster adds its latency to every request", async (t) => {
  const sim = await simulator(t, { clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  await sim.setFault("member1", { mode: "slow", latencyMs: 250 });
  assert.deepEqual(c.fault, { mode: "slow", latencyMs: 250 });
  for (const p of ["/readyz", "/api/v1/namespaces/default/configmaps"]) {
    const start = Date.now();
    assert.equal((await kube(c, "GET", p)).status, 200);
    assert.ok(Date.now() - start >= 245, `${p} took ${Date.now() - start}ms`);
  }
  await sim.setFault("member1", { mode: "healthy" });
  const start = Date.now();
  await kube(c, "GET", "/readyz");
  assert.ok(Date.now() - start < 200, `healthy took ${Date.now() - start}ms`);
});

test("switching faults quickly back and forth leaves the cluster in the last mode", async (t) => {
  const sim = await simulator(t, { clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  await Promise.all([
    sim.setFault("member1", { mode: "unreachable" }),
    sim.setFault("member1", { mode: "healthy" }),
    sim.setFault("member1", { mode: "unreachable" }),
    sim.setFault("member1", { mode: "healthy" }),
  ]);
  assert.equal(c.fault.mode, "healthy");
  assert.equal((await kube(c, "GET", "/readyz")).status, 200);
});
