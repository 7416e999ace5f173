import { test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase } from "@flotilla/testkit";
import { EventRecorder, listEventsFor, recordEvent } from "./events.js";
import { ObjectStore } from "./store.js";
import { GK } from "@flotilla/api";

const rb = { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "nginx-deployment", namespace: "web", uid: "u1", resourceVersion: "7" } };
const crb = { apiVersion: "work.karmada.io/v1alpha2", kind: "ClusterResourceBinding", metadata: { name: "reader-clusterrole", uid: "u2" } };

test("an event is a core/v1 Event in the object's namespace, and a repeat counts up instead of adding another", async () => {
  const db = await freshDatabase();
  try {
    const store = new ObjectStore(db.sql);
    const t0 = new Date("2026-01-01T00:00:00Z");
    const e1 = await recordEvent(store, { involvedObject: rb, reason: "EvictCluster", message: "Evicted from cluster member1", component: "taint-manager", now: t0 });
    assert.equal(e1.apiVersion, "v1");
    assert.equal(e1.kind, "Event");
    assert.equal(e1.metadata.namespace, "web");
    assert.match(e1.metadata.name!, /^nginx-deployment\.[0-9a-f]{16}$/);
    assert.deepEqual(e1.involvedObject, { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", namespace: "web", name: "nginx-deployment", uid: "u1", resourceVersion: "7" });
    assert.equal(e1.type, "Normal");
    assert.deepEqual(e1.source, { component: "taint-manager" });
    assert.equal(e1.count, 1);
    const e2 = await recordEvent(store, { involvedObject: rb, reason: "EvictCluster", message: "Evicted from cluster member1", component: "taint-manager", now: new Date("2026-01-01T00:00:05Z") });
    assert.equal(e2.metadata.name, e1.metadata.name);
    assert.equal(e2.count, 2);
    assert.equal(e2.firstTimestamp, "2026-01-01T00:00:00Z");
    assert.equal(e2.lastTimestamp, "2026-01-01T00:00:05Z");
    await recordEvent(store, { involvedObject: rb, type: "Warning", reason: "GracefulEvictionTaskKept", message: "kept", component: "eviction", now: t0 });
    const list = await listEventsFor(store, rb);
    assert.deepEqual(list.map((e) => e.reason), ["GracefulEvictionTaskKept", "EvictCluster"]);
    const c = await recordEvent(store, { involvedObject: crb, reason: "EvictCluster", message: "m", component: "taint-manager" });
    assert.equal(c.metadata.namespace, "default", "cluster-scoped objects' events go to default");
    assert.equal((await store.list(GK.event, { namespace: "default" })).items.length, 1);
  } finally {
    await db.drop();
  }
});

test("the recorder never throws and drops repeats within its dedupe window", async () => {
  const db = await freshDatabase();
  try {
    const store = new ObjectStore(db.sql);
    let t = Date.parse("2026-01-01T00:00:00Z");
    const errors: unknown[] = [];
    const rec = new EventRecorder(store, { component: "eviction", now: () => new Date(t), dedupeMs: 60_000, onError: (e) => errors.push(e) });
    await rec.warning(rb, "GracefulEvictionTaskKept", "kept");
    t += 1000;
    await rec.warning(rb, "GracefulEvictionTaskKept", "kept");
    assert.equal((await listEventsFor(store, rb))[0].count, 1);
    t += 60_000;
    await rec.warning(rb, "GracefulEvictionTaskKept", "kept");
    assert.equal((await listEventsFor(store, rb))[0].count, 2);
    await db.sql.end();
    await rec.normal(rb, "X", "y");
    assert.equal(errors.length, 1);
  } finally {
    await db.drop().catch(() => {});
  }
});
