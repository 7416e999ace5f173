import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore, bindingsIn, clustersIn, kindsIn, worksIn } from "@flotilla/store";
import type { AnyResourceBinding, KubeObject } from "@flotilla/api";

const rb = (namespace: string, name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ResourceBinding",
  metadata: { namespace, name, labels },
  spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace, name } },
});
const crb = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ClusterResourceBinding",
  metadata: { name, labels },
  spec: { resource: { apiVersion: "v1", kind: "Namespace", name } },
});

describe("repositories", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
  });
  after(async () => db.drop());

  test("bindings of both scopes are one repository: keys, reads, lists and writes by key", async () => {
    await store.create(rb("default", "web", { tier: "front" }));
    await store.create(rb("shop", "db"));
    await store.create(crb("ns1", { tier: "front" }));
    const bindings = bindingsIn(store);
    const keys = await bindings.keys();
    assert.deepEqual(keys.map((k) => k.key).sort(), ["default/web", "ns1", "shop/db"]);
    assert.ok(keys.every((k) => k.resourceVersion), "each key comes with its object's resourceVersion");
    assert.equal((await bindings.get("ns1"))?.kind, "ClusterResourceBinding");
    assert.equal((await bindings.get("default/web"))?.kind, "ResourceBinding");
    assert.deepEqual((await bindings.list({ labelSelector: "tier=front" })).map((b) => bindings.key(b)).sort(), ["default/web", "ns1"]);
    const r = await bindings.mutate("ns1", (b: AnyResourceBinding) => ({ ...b, metadata: { ...b.metadata, labels: { tier: "back" } } }));
    assert.equal(r.written, true);
    assert.equal(r.obj?.metadata.labels?.tier, "back");
    for (const bad of ["", "a/b/c", "/x"]) {
      assert.equal(bindings.ref(bad), undefined, bad);
      assert.equal(await bindings.get(bad), undefined, bad);
      assert.deepEqual(await bindings.mutate(bad, (b) => b), { obj: undefined, written: false }, bad);
    }
  });

  test("clusters are keyed by name and works by namespace/name; a key of the other shape names nothing", async () => {
    await store.create({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "member1" }, spec: { syncMode: "Push" } });
    await store.create({ apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { namespace: "karmada-es-member1", name: "web" }, spec: { workload: { manifests: [] } } });
    const clusters = clustersIn(store);
    const works = worksIn(store);
    assert.deepEqual((await clusters.keys()).map((k) => k.key), ["member1"]);
    assert.equal((await clusters.get("member1"))?.metadata.name, "member1");
    assert.equal(clusters.ref("a/member1"), undefined);
    assert.deepEqual((await works.keys()).map((k) => k.key), ["karmada-es-member1/web"]);
    assert.equal((await works.get("karmada-es-member1/web"))?.kind, "Work");
    assert.equal(works.ref("web"), undefined);
    assert.equal(works.ref("a/b/c"), undefined);
  });

  test("several kinds in one queue are keyed group/Kind|namespace|name; keep filters the keys; a key of another kind names nothing", async () => {
    await store.create({ apiVersion: "apps/v1", kind: "Deployment", metadata: { namespace: "default", name: "nginx" }, spec: {} });
    await store.create({ apiVersion: "apps/v1", kind: "Deployment", metadata: { namespace: "kube-system", name: "dns" }, spec: {} });
    await store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { namespace: "default", name: "cfg" }, data: {} });
    const templates = kindsIn(store, ["apps/Deployment", "/ConfigMap"]);
    const keys = (await templates.keys({ keep: (o) => o.metadata.namespace !== "kube-system" })).map((k) => k.key).sort();
    assert.deepEqual(keys, ["/ConfigMap|default|cfg", "apps/Deployment|default|nginx"]);
    assert.equal((await templates.get("apps/Deployment|default|nginx"))?.metadata.name, "nginx");
    assert.equal(templates.ref("apps/StatefulSet|default|nginx"), undefined, "not one of its kinds");
    assert.equal(templates.ref("nonsense"), undefined);
  });
});
