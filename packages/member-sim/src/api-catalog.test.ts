import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiIndex, resolveApis, type ApiSpec } from "./api-catalog.js";

const gvs = (spec: ApiSpec | ApiSpec[] | undefined) => new ApiIndex(resolveApis(spec)).groupVersions();
const plurals = (spec: ApiSpec | ApiSpec[] | undefined, gv: string) => new ApiIndex(resolveApis(spec)).inGroupVersion(gv)?.map((r) => r.plural);

test("apis: the default set has the seven group versions", () => {
  assert.deepEqual(gvs(undefined), ["v1", "apps/v1", "batch/v1", "networking.k8s.io/v1", "autoscaling/v2", "policy/v1", "rbac.authorization.k8s.io/v1"]);
  assert.deepEqual(gvs("default"), gvs(undefined));
});

test("apis: the default core group has the listed resources", () => {
  assert.deepEqual(plurals("default", "v1")?.sort(), ["configmaps", "namespaces", "nodes", "persistentvolumeclaims", "pods", "secrets", "serviceaccounts", "services"]);
  assert.deepEqual(plurals("default", "apps/v1"), ["deployments", "statefulsets", "daemonsets", "replicasets"]);
  assert.deepEqual(plurals("default", "batch/v1"), ["jobs", "cronjobs"]);
});

test("apis: namespaces, pods and nodes are always served", () => {
  assert.deepEqual(gvs(["apps/v1"]), ["v1", "apps/v1"]);
  assert.deepEqual(plurals(["apps/v1"], "v1"), ["namespaces", "pods", "nodes"]);
});

test("apis: a group version can be limited to some resources", () => {
  assert.deepEqual(plurals([{ groupVersion: "apps/v1", resources: ["deployments"] }], "apps/v1"), ["deployments"]);
});

test("apis: a custom resource gets its kind, scope and status subresource from the config", () => {
  const idx = new ApiIndex(resolveApis([{ groupVersion: "example.io/v1", resources: [{ name: "gadgets", kind: "Gadget", namespaced: false, status: true }] }]));
  const r = idx.byKind("example.io/v1", "Gadget")!;
  assert.deepEqual([r.plural, r.singular, r.namespaced, r.statusSubresource], ["gadgets", "gadget", false, true]);
  assert.equal(idx.byPlural("example.io/v1", "gadgets"), r);
});

test("apis: the default set can be extended", () => {
  assert.ok(gvs(["default", "apiextensions.k8s.io/v1"]).includes("apiextensions.k8s.io/v1"));
});

test("apis: a malformed group version is rejected", () => {
  assert.throws(() => resolveApis(["apps"]), /invalid groupVersion/);
});
