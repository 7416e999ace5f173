import { test } from "node:test";
import assert from "node:assert/strict";
import { generateClusters } from "./config.js";
import { kube, simulator } from "./test-util.js";

test("one process holds 100 clusters with 1,000 objects each and still answers quickly", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 20 }, clusters: generateClusters(100, { nodes: [{ name: "node", count: 2 }] }) });
  assert.equal(sim.clusters.length, 100);
  assert.equal(new Set(sim.clusters.map((c) => c.port)).size, 100);
  for (const c of sim.clusters) {
    for (let i = 0; i < 1000; i++) {
      c.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: `ns-${i % 10}`, labels: { app: `a${i % 50}` } }, data: { k: "v".repeat(100) } });
    }
  }
  assert.ok(sim.clusters.every((c) => c.store.count() >= 1000));
  const c = sim.cluster("member57");
  const start = Date.now();
  const r = await kube(c, "GET", "/api/v1/configmaps?labelSelector=app%3Da7");
  assert.equal(r.status, 200);
  assert.equal(r.body.items.length, 20);
  const all = await kube(c, "GET", "/api/v1/configmaps");
  assert.equal(all.body.items.length, 1000);
  assert.ok(Date.now() - start < 1000, `two lists took ${Date.now() - start}ms`);
});
