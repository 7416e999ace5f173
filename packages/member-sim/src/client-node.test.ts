import { test } from "node:test";
import assert from "node:assert/strict";
import { AppsV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject, type V1Deployment } from "@kubernetes/client-node";
import { deployment, eventually, simulator } from "./test-util.js";
import type { SimCluster } from "./cluster.js";

function kubeConfig(c: SimCluster, token = c.token): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "m", server: c.url, skipTLSVerify: true }],
    users: [{ name: "u", token }],
    contexts: [{ name: "c", cluster: "m", user: "u" }],
    currentContext: "c",
  });
  return kc;
}

const code = (e: unknown) => (e as { code?: number }).code;

test("@kubernetes/client-node creates, reads, applies, lists and deletes through discovery", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 30 }, clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  const client = KubernetesObjectApi.makeApiClient(kubeConfig(c));

  const created = await client.create(deployment("web", 2, "100m", "64Mi", "shop") as KubernetesObject);
  assert.equal(created.metadata?.name, "web");
  assert.ok(created.metadata?.uid);

  const read = (await client.read({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" } })) as V1Deployment;
  assert.equal(read.spec?.replicas, 2);

  await eventually(async () => {
    const d = (await client.read({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" } })) as V1Deployment;
    assert.equal(d.status?.readyReplicas, 2);
    assert.equal(d.status?.observedGeneration, 1);
  });

  // Server-side apply: update an existing object, then create a missing one.
  const applied = { ...deployment("web", 3, "100m", "64Mi", "shop") };
  const patched = (await client.patch(applied as KubernetesObject, undefined, undefined, "flotilla", true, PatchStrategy.ServerSideApply)) as V1Deployment;
  assert.equal(patched.spec?.replicas, 3);
  assert.equal(patched.metadata?.generation, 2);
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "shop", labels: { app: "web" } }, data: { mode: "fast" } };
  const cmCreated = await client.patch(cm, undefined, undefined, "flotilla", true, PatchStrategy.ServerSideApply);
  assert.deepEqual((cmCreated as { data?: unknown }).data, { mode: "fast" });

  const merged = await client.patch(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "shop" }, data: { extra: "1" } } as KubernetesObject,
    undefined,
    undefined,
    undefined,
    undefined,
    PatchStrategy.MergePatch,
  );
  assert.deepEqual((merged as { data?: unknown }).data, { mode: "fast", extra: "1" });

  const list = await client.list("v1", "ConfigMap", "shop", undefined, undefined, undefined, undefined, "app=web");
  assert.deepEqual(list.items.map((i) => i.metadata?.name), ["settings"]);

  await assert.rejects(client.create(deployment("web", 1, "100m", undefined, "shop") as KubernetesObject), (e) => code(e) === 409);
  await assert.rejects(client.read({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "nope", namespace: "shop" } }), (e) => code(e) === 404);

  await client.delete({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" } });
  await assert.rejects(client.read({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" } }), (e) => code(e) === 404);
});

test("@kubernetes/client-node typed APIs read nodes and pods, and a wrong token gets 401", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 20 }, clusters: [{ name: "member1", nodes: [{ name: "node-1", cpu: "4", memory: "8Gi", pods: 20 }] }] });
  const c = sim.cluster("member1");
  const kc = kubeConfig(c);
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const nodes = await core.listNode();
  assert.equal(nodes.items.length, 1);
  assert.equal(nodes.items[0]!.status?.allocatable?.cpu, "4");
  assert.equal(nodes.items[0]!.status?.allocatable?.memory, "8Gi");
  await apps.createNamespacedDeployment({ namespace: "default", body: deployment("api", 2) as V1Deployment });
  await eventually(async () => {
    const pods = await core.listNamespacedPod({ namespace: "default", labelSelector: "app=api" });
    assert.equal(pods.items.length, 2);
    assert.ok(pods.items.every((p) => p.status?.phase === "Running" && p.spec?.nodeName === "node-1"));
  });
  const bad = kubeConfig(c, "wrong").makeApiClient(CoreV1Api);
  await assert.rejects(bad.listNode(), (e) => code(e) === 401);
});
