import { test } from "node:test";
import assert from "node:assert/strict";
import { bindingKey, compareRv, refOfKey } from "./keys.js";

test("a ResourceBinding's key carries its namespace and a ClusterResourceBinding's does not", () => {
  assert.equal(bindingKey({ metadata: { namespace: "default", name: "nginx-deployment" } }), "default/nginx-deployment");
  assert.equal(bindingKey({ metadata: { name: "admin-clusterrole" } }), "admin-clusterrole");
  assert.deepEqual(refOfKey("default/nginx-deployment"), { gk: "work.karmada.io/ResourceBinding", namespace: "default", name: "nginx-deployment" });
  assert.deepEqual(refOfKey("admin-clusterrole"), { gk: "work.karmada.io/ClusterResourceBinding", namespace: "", name: "admin-clusterrole" });
});

test("resourceVersions compare as numbers", () => {
  assert.equal(compareRv("999", "1000"), -1);
  assert.equal(compareRv("1000", "999"), 1);
  assert.equal(compareRv("1234", "1234"), 0);
});
