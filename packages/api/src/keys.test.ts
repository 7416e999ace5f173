import { test } from "node:test";
import assert from "node:assert/strict";
import { BadRequestError, bindingKey, bindingRefOfKey, compareResourceVersions, kindKey, objectKeyOf, parseKindKey } from "@flotilla/api";

test("a binding's key carries its namespace, a cluster-scoped binding's does not, and the key alone tells the kind", () => {
  const cases: Array<[meta: { namespace?: string; name: string }, key: string, gk: string]> = [
    [{ namespace: "default", name: "nginx-deployment" }, "default/nginx-deployment", "work.karmada.io/ResourceBinding"],
    [{ name: "admin-clusterrole" }, "admin-clusterrole", "work.karmada.io/ClusterResourceBinding"],
    [{ namespace: "", name: "ns1-namespace" }, "ns1-namespace", "work.karmada.io/ClusterResourceBinding"],
  ];
  for (const [meta, key, gk] of cases) {
    assert.equal(bindingKey({ metadata: meta }), key);
    assert.equal(objectKeyOf(meta), key);
    assert.deepEqual(bindingRefOfKey(key), { gk, namespace: meta.namespace ?? "", name: meta.name });
  }
});

test("a malformed binding key names no binding", () => {
  for (const key of ["", "/", "a/", "/b", "a/b/c", "rb/default/web"]) assert.equal(bindingRefOfKey(key), undefined, key);
});

test("a key across kinds round-trips, a name with '|' included, and a malformed one throws BadRequest", () => {
  const refs = [
    { gk: "apps/Deployment", namespace: "default", name: "nginx" },
    { gk: "/Namespace", namespace: "", name: "ns1" },
    { gk: "policy.karmada.io/ClusterPropagationPolicy", namespace: "", name: "a|b" },
  ];
  for (const r of refs) assert.deepEqual(parseKindKey(kindKey(r)), r);
  assert.equal(kindKey({ gk: "/Namespace", name: "ns1" }), "/Namespace||ns1");
  for (const key of ["", "apps/Deployment", "|default|nginx", "apps/Deployment|default"]) assert.throws(() => parseKindKey(key), BadRequestError, key);
});

test("resourceVersions order as numbers, not as strings", () => {
  const cases: Array<[string, string, number]> = [
    ["999", "1000", -1],
    ["1000", "999", 1],
    ["1234", "1234", 0],
    ["12", "13", -1],
  ];
  for (const [a, b, want] of cases) assert.equal(Math.sign(compareResourceVersions(a, b)), want, `${a} vs ${b}`);
});
