import { test } from "node:test";
import assert from "node:assert/strict";
import { DEPLOYMENT, NAMESPACE, POD } from "./api-catalog.js";
import { ObjectStore, type StoreEvent } from "./store.js";

const cm = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", singular: "configmap", namespaced: true, verbs: [], statusSubresource: false };

test("store: every write gets a higher resourceVersion and a no-op write gets none", () => {
  const s = new ObjectStore();
  const a = s.create(cm, "default", { metadata: { name: "a" }, data: { x: "1" } });
  const b = s.replace(cm, "default", "a", { metadata: { name: "a" }, data: { x: "2" } });
  const same = s.replace(cm, "default", "a", { metadata: { name: "a" }, data: { x: "2" } });
  assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
  assert.equal(same, b);
});

test("store: generation moves when anything but metadata and status changes", () => {
  const s = new ObjectStore();
  s.create(DEPLOYMENT, "ns", { metadata: { name: "d" }, spec: { replicas: 1 } });
  assert.equal(s.patch(DEPLOYMENT, "ns", "d", { metadata: { annotations: { a: "b" } } }).metadata.generation, 1);
  assert.equal(s.replace(DEPLOYMENT, "ns", "d", { metadata: { name: "d" }, spec: { replicas: 1 }, status: { replicas: 1 } }, { subresource: "status" }).metadata.generation, 1);
  assert.equal(s.patch(DEPLOYMENT, "ns", "d", { spec: { replicas: 2 } }).metadata.generation, 2);
});

test("store: a namespaced create makes the namespace, and generateName picks a free name", () => {
  const s = new ObjectStore();
  const o = s.create(cm, "new-ns", { metadata: { generateName: "cm-" } });
  assert.match(o.metadata.name, /^cm-[a-z0-9]{5}$/);
  assert.equal(s.get(NAMESPACE, "", "new-ns")?.status?.phase, "Active");
});

test("store: watchers see ADDED, MODIFIED and DELETED with increasing revisions", () => {
  const s = new ObjectStore();
  const seen: StoreEvent[] = [];
  const stop = s.subscribe((e) => seen.push(e));
  s.create(POD, "default", { metadata: { name: "p" }, spec: {} }); // also creates the namespace
  s.patch(POD, "default", "p", { metadata: { labels: { a: "b" } } });
  s.delete(POD, "default", "p");
  stop();
  s.create(POD, "default", { metadata: { name: "q" } });
  assert.deepEqual(seen.map((e) => `${e.type} ${e.resource.kind} ${e.object.metadata.name}`), ["ADDED Namespace default", "ADDED Pod p", "MODIFIED Pod p", "DELETED Pod p"]);
  assert.deepEqual(seen.map((e) => e.rv), [1, 2, 3, 4]);
  assert.equal(seen[3]!.object.metadata.resourceVersion, "4");
});

test("store: changes since a recent revision are replayed and an old one is too old", () => {
  const s = new ObjectStore(3);
  for (let i = 0; i < 10; i++) s.create(cm, "", { metadata: { name: `c${i}` } }); // cluster-scoped use: no namespace object
  assert.deepEqual(s.eventsSince(s.revision - 2)?.map((e) => e.object.metadata.name), ["c8", "c9"]);
  assert.deepEqual(s.eventsSince(s.revision), []);
  assert.equal(s.eventsSince(0), undefined);
});

test("store: delete preconditions must match", () => {
  const s = new ObjectStore();
  const o = s.create(cm, "default", { metadata: { name: "a" } });
  assert.throws(() => s.delete(cm, "default", "a", { preconditions: { uid: "other" } }), { reason: "Conflict" });
  assert.equal(s.delete(cm, "default", "a", { preconditions: { uid: o.metadata.uid } }).finalizing, false);
});
