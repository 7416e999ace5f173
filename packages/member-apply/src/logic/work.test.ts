import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject, Work } from "@flotilla/api";
import { appliedCondition, desiredObject, digest, healthUnknown, objectVersion, overwrites, sameWorkStatus, updateVerdict, withoutClaim, workKeyOf } from "./work.js";

const work = (annotations?: Record<string, string>): Work => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: "web-687f7fb96f", namespace: "karmada-es-member1", labels: { "work.karmada.io/permanent-id": "pid-1" }, ...(annotations ? { annotations } : {}) },
  spec: {},
});
const cm = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c", namespace: "default", resourceVersion: "9", uid: "u", labels: { app: "x" }, ...(annotations ? { annotations } : {}) },
  data: { a: "1" },
  status: { x: 1 },
});

test("the desired object carries the managed label, the Work's permanent id and the Work's name, and no server-owned fields", () => {
  const d = desiredObject(work(), cm());
  assert.deepEqual(d, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "c",
      namespace: "default",
      labels: { app: "x", "karmada.io/managed": "true", "work.karmada.io/permanent-id": "pid-1" },
      annotations: { "work.karmada.io/namespace": "karmada-es-member1", "work.karmada.io/name": "web-687f7fb96f" },
    },
    data: { a: "1" },
  });
  assert.equal(workKeyOf(d), "karmada-es-member1/web-687f7fb96f");
});

const conflict: [string, Work, KubeObject, boolean][] = [
  ["no annotation anywhere means abort", work(), cm(), false],
  ["overwrite on the manifest wins", work({ "work.karmada.io/conflict-resolution": "abort" }), cm({ "work.karmada.io/conflict-resolution": "overwrite" }), true],
  ["abort on the manifest wins over overwrite on the Work", work({ "work.karmada.io/conflict-resolution": "overwrite" }), cm({ "work.karmada.io/conflict-resolution": "abort" }), false],
  ["overwrite on the Work applies when the manifest says nothing", work({ "work.karmada.io/conflict-resolution": "overwrite" }), cm(), true],
];
for (const [name, w, m, want] of conflict) test(`conflict resolution: ${name}`, () => assert.equal(overwrites(w, m), want));

test("an unmanaged member object may only be taken over with overwrite; a managed one is always updated", () => {
  const theirs = cm();
  assert.equal(updateVerdict(theirs, true, "member1"), true);
  assert.equal(
    updateVerdict(theirs, false, "member1"),
    "resource(kind=ConfigMap, default/c) already exists in the cluster member1 and the work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this resource",
  );
  const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } };
  assert.match(String(updateVerdict(ns, false, "member1")), /^resource\(kind=Namespace, \/team\) already exists/, "a cluster-scoped object has an empty namespace, as upstream prints it");
  const ours = { ...theirs, metadata: { ...theirs.metadata, labels: { "karmada.io/managed": "true" } } };
  assert.equal(updateVerdict(ours, false, "member1"), true);
});

test("the Applied condition counts the manifests that went through", () => {
  assert.deepEqual(appliedCondition(2, [], 3), { type: "Applied", status: "True", reason: "AppliedSuccessful", message: "Manifest has been successfully applied", observedGeneration: 3 });
  assert.equal(appliedCondition(3, ["boom"], 1).message, "Failed to apply all manifests (2/3): boom");
  assert.equal(appliedCondition(3, ["a", "b"], 1).message, "Failed to apply all manifests (1/3): [a, b]");
});

test("the object version is the generation when there is one, else the resourceVersion", () => {
  assert.equal(objectVersion({ apiVersion: "v1", kind: "X", metadata: { generation: 4, resourceVersion: "10" } }), "gen:4");
  assert.equal(objectVersion({ apiVersion: "v1", kind: "X", metadata: { resourceVersion: "10" } }), "rv:10");
});

test("the digest ignores key order", () => {
  assert.equal(digest({ a: 1, b: { c: [1, 2], d: "x" } }), digest({ b: { d: "x", c: [1, 2] }, a: 1 }));
  assert.notEqual(digest({ a: 1 }), digest({ a: 2 }));
});

test("preserving on deletion strips Karmada's claim and keeps everything else", () => {
  const d = desiredObject(work({ x: "y" }), cm({ "work.karmada.io/conflict-resolution": "overwrite", keep: "me" }));
  const stripped = withoutClaim(d);
  assert.deepEqual(stripped.metadata.labels, { app: "x" });
  assert.deepEqual(stripped.metadata.annotations, { keep: "me" });
});

test("statuses that differ only in condition transition times are the same", () => {
  const a = { conditions: [{ type: "Applied", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" }] };
  const b = { conditions: [{ type: "Applied", status: "True", lastTransitionTime: "2026-01-02T00:00:00Z" }] };
  assert.ok(sameWorkStatus(a, b));
  assert.ok(!sameWorkStatus(a, { conditions: [{ type: "Applied", status: "False" }] }));
});

test("a member that cannot be read keeps its objects' last reflected status but none of them is Healthy", () => {
  const id = (ordinal: number, kind: string) => ({ ordinal, group: "", version: "v1", kind, resource: `${kind.toLowerCase()}s`, namespace: "default", name: "x" });
  const before = [
    { identifier: id(0, "Deployment"), status: { readyReplicas: 2 }, health: "Healthy" as const },
    { identifier: id(1, "Service"), health: "Unhealthy" as const },
    { identifier: id(2, "ConfigMap"), health: "Unknown" as const },
  ];
  const after = healthUnknown(before);
  assert.deepEqual(after.map((s) => s.health), ["Unknown", "Unknown", "Unknown"]);
  assert.deepEqual(after[0]?.status, { readyReplicas: 2 });
  assert.equal(before[0]?.health, "Healthy", "the input is not changed");
});
