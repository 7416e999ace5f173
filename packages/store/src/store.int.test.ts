import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, eventually, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore, type WatchEvent } from "@flotilla/store";
import type { KubeObject } from "@flotilla/api";

const cm = (name: string, data: Record<string, string> = { a: "1" }, extra: Partial<KubeObject["metadata"]> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", ...extra },
  data,
});
const deploy = (name: string, replicas = 1): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default", labels: { app: name } },
  spec: { replicas },
});

describe("object store", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql, { indexers: { "apps/Deployment": (o) => [`replicas:${o.spec?.replicas}`] } });
  });
  after(async () => db.drop());

  test("create fills uid, creationTimestamp, generation and resourceVersion", async () => {
    const o = await store.create(deploy("web"));
    assert.match(o.metadata.uid!, /^[0-9a-f-]{36}$/);
    assert.match(o.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(o.metadata.generation, 1);
    assert.match(o.metadata.resourceVersion!, /^\d+$/);
    assert.deepEqual(await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }), o);
  });

  test("updateWithStatus writes the spec and the status in one change, with one generation step", async () => {
    const o = await store.create(deploy("both", 1));
    const [{ n: before }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox WHERE name = 'both'`;
    const w = await store.updateWithStatus({ ...o, spec: { replicas: 2 }, status: { observedGeneration: 2 } });
    assert.deepEqual([w.metadata.generation, w.spec, w.status], [2, { replicas: 2 }, { observedGeneration: 2 }]);
    const [{ n: after }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox WHERE name = 'both'`;
    assert.equal(after - before, 1);
    await assert.rejects(store.updateWithStatus({ ...o, status: {} }), { name: "ConflictError" });
  });

  test("reads and writes issued together are answered each on its own, missing objects included", async () => {
    const made = await Promise.all(Array.from({ length: 40 }, (_, i) => store.create(cm(`batch-${i}`))));
    const read = await Promise.all([...made.map((m) => store.get({ gk: "/ConfigMap", namespace: "default", name: m.metadata.name! })), store.get({ gk: "/ConfigMap", namespace: "default", name: "nope" })]);
    assert.deepEqual(read.slice(0, 40), made);
    assert.equal(read[40], undefined);
    // one write in the batch loses its check; the others still land
    const results = await Promise.allSettled(made.map((m, i) => store.update({ ...m, data: { a: String(i) }, metadata: { ...m.metadata, resourceVersion: i === 7 ? "1" : m.metadata.resourceVersion } })));
    assert.deepEqual(results.map((r, i) => (r.status === "fulfilled" ? "ok" : (r.reason as Error).name + i)).filter((x) => x !== "ok"), ["ConflictError7"]);
  });

  test("a second create of the same name is AlreadyExists and writes nothing", async () => {
    const before = await db.sql`SELECT count(*)::int AS n FROM outbox`;
    await assert.rejects(store.create(deploy("web")), { name: "AlreadyExistsError" });
    const afterRows = await db.sql`SELECT count(*)::int AS n FROM outbox`;
    assert.equal(afterRows[0].n, before[0].n);
  });

  test("generation moves on spec change only; resourceVersion on every write", async () => {
    const o = (await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }))!;
    const labelled = await store.update({ ...o, metadata: { ...o.metadata, labels: { app: "web", x: "y" } } });
    assert.equal(labelled.metadata.generation, 1);
    assert.notEqual(labelled.metadata.resourceVersion, o.metadata.resourceVersion);
    const scaled = await store.update({ ...labelled, spec: { replicas: 3 } });
    assert.equal(scaled.metadata.generation, 2);
    const status = await store.updateStatus({ ...scaled, status: { readyReplicas: 3 } });
    assert.equal(status.metadata.generation, 2);
    assert.deepEqual(status.status, { readyReplicas: 3 });
    const specAgain = await store.update({ ...status, spec: { replicas: 3 }, status: { readyReplicas: 0 } });
    assert.deepEqual(specAgain.status, { readyReplicas: 3 }, "update keeps the stored status");
    assert.equal(specAgain.metadata.resourceVersion, status.metadata.resourceVersion, "a no-op update writes nothing");
  });

  test("a stale resourceVersion is a Conflict", async () => {
    const o = (await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }))!;
    await store.update({ ...o, spec: { replicas: 4 } });
    await assert.rejects(store.update({ ...o, spec: { replicas: 5 } }), { name: "ConflictError" });
    const now = (await store.get({ gk: "apps/Deployment", namespace: "default", name: "web" }))!;
    assert.equal(now.spec.replicas, 4);
  });

  test("update of a missing object is NotFound", async () => {
    await assert.rejects(store.update(deploy("missing")), { name: "NotFoundError" });
  });

  test("delete with finalizers marks the object; removing the last finalizer deletes it", async () => {
    const o = await store.create(cm("fin", { a: "1" }, { finalizers: ["example.com/hold"] }));
    const marked = (await store.delete({ gk: "/ConfigMap", namespace: "default", name: "fin" }))!;
    assert.ok(marked.metadata.deletionTimestamp);
    assert.ok(await store.get({ gk: "/ConfigMap", namespace: "default", name: "fin" }), "still there while a finalizer holds it");
    await store.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    assert.equal(await store.get({ gk: "/ConfigMap", namespace: "default", name: "fin" }), undefined);
    assert.ok(o.metadata.uid);
  });

  test("deleting an owner cascades to its dependents, honouring their finalizers", async () => {
    const owner = await store.create(deploy("owner"));
    const ownerRefs = [{ apiVersion: "apps/v1", kind: "Deployment", name: "owner", uid: owner.metadata.uid! }];
    await store.create(cm("child-a", {}, { ownerReferences: ownerRefs }));
    await store.create(cm("child-b", {}, { ownerReferences: ownerRefs, finalizers: ["example.com/hold"] }));
    const grand = await store.create(cm("grandchild", {}, {}));
    const childA = (await store.get({ gk: "/ConfigMap", namespace: "default", name: "child-a" }))!;
    await store.update({ ...grand, metadata: { ...grand.metadata, ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "child-a", uid: childA.metadata.uid! }] } });
    await store.delete({ gk: "apps/Deployment", namespace: "default", name: "owner" });
    assert.equal(await store.get({ gk: "/ConfigMap", namespace: "default", name: "child-a" }), undefined);
    assert.equal(await store.get({ gk: "/ConfigMap", namespace: "default", name: "grandchild" }), undefined);
    const b = await store.get({ gk: "/ConfigMap", namespace: "default", name: "child-b" });
    assert.ok(b?.metadata.deletionTimestamp, "a dependent with a finalizer is marked, not removed");
  });

  test("list filters by namespace, label selector and secondary index", async () => {
    await store.create({ ...deploy("a1", 7), metadata: { name: "a1", namespace: "other", labels: { app: "a", tier: "web" } } });
    await store.create({ ...deploy("a2", 7), metadata: { name: "a2", namespace: "other", labels: { app: "a", tier: "api" } } });
    const byNs = await store.list("apps/Deployment", { namespace: "other" });
    assert.deepEqual(byNs.items.map((o) => o.metadata.name), ["a1", "a2"]);
    const bySel = await store.list("apps/Deployment", { labelSelector: "app=a,tier notin (web)" });
    assert.deepEqual(bySel.items.map((o) => o.metadata.name), ["a2"]);
    const byIdx = await store.list("apps/Deployment", { index: "replicas:7" });
    assert.deepEqual(byIdx.items.map((o) => o.metadata.name), ["a1", "a2"]);
    assert.match(byIdx.resourceVersion, /^\d+$/);
  });

  test("an outbox row is written iff the change committed", async () => {
    const count = async () => (await db.sql`SELECT count(*)::int AS n FROM outbox WHERE name = 'txn'`)[0].n as number;
    await store.create(cm("txn"));
    assert.equal(await count(), 1);
    const o = (await store.get({ gk: "/ConfigMap", namespace: "default", name: "txn" }))!;
    await assert.rejects(store.update({ ...o, metadata: { ...o.metadata, resourceVersion: "1" }, data: { b: "2" } }), { name: "ConflictError" });
    assert.equal(await count(), 1, "a rejected write leaves no outbox row");
    await store.update({ ...o, data: { b: "2" } });
    assert.equal(await count(), 2);
  });

  test("concurrent read-modify-writes with mutate lose nothing", async () => {
    await store.create(cm("counter", { n: "0" }));
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.mutate({ gk: "/ConfigMap", namespace: "default", name: "counter" }, (c) => ({ ...c, data: { n: String(Number((c.data as { n: string }).n) + 1) } }), { attempts: 100 }),
      ),
    );
    const c = (await store.get({ gk: "/ConfigMap", namespace: "default", name: "counter" }))!;
    assert.equal((c.data as { n: string }).n, "20");
  });

  test("watch resumes from a resourceVersion and sees every later change in order", async () => {
    const listed = await store.list("/ConfigMap", { namespace: "w" });
    const created = await store.create({ ...cm("w1"), metadata: { name: "w1", namespace: "w" } });
    const updated = await store.update({ ...created, data: { a: "2" } });
    await store.delete({ gk: "/ConfigMap", namespace: "w", name: "w1" });
    const events: WatchEvent[] = [];
    const ac = new AbortController();
    const run = (async () => {
      for await (const e of await store.watch("/ConfigMap", { namespace: "w", resourceVersion: listed.resourceVersion, signal: ac.signal })) events.push(e);
    })();
    await eventually(() => events.length >= 3);
    ac.abort();
    await run;
    assert.deepEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "DELETED"]);
    assert.equal(events[1]!.object.metadata.resourceVersion, updated.metadata.resourceVersion);
    // resume after the first event: only the later two
    const resumed: WatchEvent[] = [];
    const ac2 = new AbortController();
    const run2 = (async () => {
      for await (const e of await store.watch("/ConfigMap", { namespace: "w", resourceVersion: created.metadata.resourceVersion, signal: ac2.signal })) resumed.push(e);
    })();
    await eventually(() => resumed.length >= 2);
    ac2.abort();
    await run2;
    assert.deepEqual(resumed.map((e) => e.type), ["MODIFIED", "DELETED"]);
  });

  test("a live watch sees a change made after it started", async () => {
    const got: WatchEvent[] = [];
    const ac = new AbortController();
    const run = (async () => {
      for await (const e of await store.watch("apps/Deployment", { labelSelector: "app=live", signal: ac.signal })) got.push(e);
    })();
    await new Promise((r) => setTimeout(r, 100));
    await store.create(deploy("ignored"));
    await store.create({ ...deploy("live"), metadata: { name: "live", namespace: "default", labels: { app: "live" } } });
    await eventually(() => got.length >= 1);
    ac.abort();
    await run;
    assert.deepEqual(got.map((e) => e.object.metadata.name), ["live"]);
  });

  test("a watch from before the pruned history is Gone", async () => {
    await db.sql`UPDATE outbox SET published_at = now(), created_at = now() - interval '1 hour'`;
    const pruned = await store.pruneOutbox(60_000);
    assert.ok(pruned > 0);
    await assert.rejects(store.watch("/ConfigMap", { resourceVersion: "1" }), { name: "GoneError" });
  });
});
