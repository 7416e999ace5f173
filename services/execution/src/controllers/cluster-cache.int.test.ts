import { test } from "node:test";
import assert from "node:assert/strict";
import { GK, type Cluster, type KubeObject } from "@flotilla/api";
import { createLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { eventually, freshDatabase } from "@flotilla/testkit";
import { ClusterCache, type ClusterTransition } from "./cluster-cache.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const log = createLogger({ name: "cluster-cache-test", level: "silent" });

test("a member's token goes only to its own Cluster: not to a later Cluster naming the same Secret, nor over plain http or to a link-local address", async () => {
  const db = await freshDatabase();
  try {
    const store = new ObjectStore(db.sql);
    const secret = (name: string, owner?: { name: string; uid: string }): KubeObject =>
      ({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: "karmada-cluster", ...(owner ? { ownerReferences: [{ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", ...owner }] } : {}) },
        data: { token: b64(`${name}-token`) },
      }) as KubeObject;
    const cluster = (name: string, apiEndpoint: string, secretName: string): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name }, spec: { apiEndpoint, secretRef: { namespace: "karmada-cluster", name: secretName } } });

    // as a join writes it: the Secret first (no owner), then the Cluster
    await store.create(secret("member1"));
    await store.create(cluster("member1", "https://10.0.0.1:6443", "member1"));
    await new Promise((r) => setTimeout(r, 20)); // a later creationTimestamp
    // the finding: a Cluster aimed at a listener of the writer's choice, naming member1's Secret
    await store.create(cluster("evil", "https://127.0.0.1:9999", "member1"));
    const m2 = await store.create(cluster("member2", "https://10.0.0.2:6443", "member2"));
    await store.create(secret("member2", { name: "member2", uid: m2.metadata.uid! }));
    await store.create(cluster("thief", "https://127.0.0.1:9998", "member2"));
    await store.create(secret("sim"));
    await store.create(cluster("sim", "http://127.0.0.1:7101", "sim"));
    await store.create(secret("meta"));
    await store.create(cluster("meta", "https://169.254.169.254/", "meta"));

    const strict = new ClusterCache(store, { refreshMs: 60_000, log });
    await strict.refreshAll();
    const endpoint = (c: ClusterCache, n: string) => c.get(n)!.endpoint;
    assert.deepEqual(endpoint(strict, "member1"), { ok: true, endpoint: { server: "https://10.0.0.1:6443", token: "member1-token" } });
    assert.deepEqual(endpoint(strict, "evil"), { ok: false, reason: 'the secret karmada-cluster/member1 is the credential of cluster "member1"' });
    assert.equal(endpoint(strict, "member2").ok, true);
    assert.deepEqual(endpoint(strict, "thief"), { ok: false, reason: 'the secret karmada-cluster/member2 belongs to cluster "member2"' });
    assert.match((endpoint(strict, "sim") as { reason: string }).reason, /is http: members are reached over https/);
    assert.match((endpoint(strict, "meta") as { reason: string }).reason, /link-local/);
    // one refresh (fresh) reads the same
    assert.equal((await strict.fresh("evil"))!.endpoint.ok, false);

    const local = new ClusterCache(store, { refreshMs: 60_000, log, policy: { allowHttp: "loopback" } });
    await local.refreshAll();
    assert.deepEqual(endpoint(local, "sim"), { ok: true, endpoint: { server: "http://127.0.0.1:7101", token: "sim-token" } });
    assert.equal(endpoint(local, "meta").ok, false, "no setting opens link-local addresses");
    await strict.stop();
    await local.stop();
  } finally {
    await db.drop();
  }
});

test("the entries follow the Clusters through the watch, without a fresh: a new cluster with its credentials, Ready, deleting, gone", async () => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  const transitions: [string, ClusterTransition][] = [];
  const cache = new ClusterCache(store, { refreshMs: 60_000, log, onTransition: (c, t) => transitions.push([c, t]) });
  try {
    await cache.start();
    assert.deepEqual(cache.names(), []);
    await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "m1", namespace: "karmada-cluster" }, data: { token: b64("m1-token") } } as KubeObject);
    await store.create<Cluster>({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1", finalizers: ["test/hold"] }, spec: { apiEndpoint: "https://10.0.0.1:6443", secretRef: { namespace: "karmada-cluster", name: "m1" } } });
    const entry = await eventually(() => cache.get("m1"), { timeoutMs: 5000, message: "the new cluster reaches the cache, its Secret read" });
    assert.deepEqual(entry.endpoint, { ok: true, endpoint: { server: "https://10.0.0.1:6443", token: "m1-token" } });
    assert.equal(entry.ready, false);
    assert.deepEqual(cache.names(), ["m1"]);
    assert.deepEqual(cache.referencing("karmada-cluster", "m1"), ["m1"]);

    const ref = { gk: GK.cluster, name: "m1" };
    const now = new Date().toISOString();
    await store.mutate<Cluster>(ref, (c) => ((c.status = { conditions: [{ type: "Ready", status: "True", reason: "ClusterReady", message: "", lastTransitionTime: now }] }), c), { status: true });
    await eventually(() => cache.get("m1")?.ready, { timeoutMs: 5000, message: "Ready reaches the cache" });
    await store.delete(ref); // held by its finalizer: deleting
    await eventually(() => cache.get("m1")?.deleting, { timeoutMs: 5000, message: "the deletion timestamp reaches the cache" });
    await store.mutate<Cluster>(ref, (c) => ((c.metadata.finalizers = []), c));
    await eventually(() => !cache.get("m1"), { timeoutMs: 5000, message: "the deletion reaches the cache" });
    assert.deepEqual(cache.names(), []);
    assert.deepEqual(transitions, [
      ["m1", "ready"],
      ["m1", "deleting"],
      ["m1", "gone"],
    ]);
  } finally {
    await cache.stop();
    await db.drop();
  }
});
