import { test } from "node:test";
import assert from "node:assert/strict";
import {
  bindingName,
  clusterOfExecutionNamespace,
  fnv1a32,
  permanentIDLabel,
  safeEncodeString,
  workName,
} from "@flotilla/api";

const bindingCases: Array<[string, string, string, string]> = [
  ["a binding is named after the template then its kind", "Deployment", "nginx", "nginx-deployment"],
  ["a binding name is lower-cased", "ConfigMap", "MyConfig", "myconfig-configmap"],
  ["colons in a template name become dots", "ClusterRole", "system:controller:foo", "system.controller.foo-clusterrole"],
];
for (const [name, kind, n, want] of bindingCases) test(name, () => assert.equal(bindingName(kind, n), want));

const workCases: Array<[string, string, string, string, string]> = [
  ["the default/nginx Deployment gets Karmada's work name", "default", "nginx", "Deployment", "nginx-687f7fb96f"],
  ["a cluster-scoped template hashes without a namespace prefix", "", "ns1", "Namespace", "ns1-75b9b65cbc"],
  ["colons become dots in both the prefix and the hash", "", "system:controller:foo", "ClusterRole", "system.controller.foo-77f96cf7cf"],
  ["namespace, name and kind are lower-cased before hashing", "Prod", "Web", "Service", "web-bc7d89c89"],
];
for (const [name, ns, n, kind, want] of workCases) test(name, () => assert.equal(workName(ns, n, kind), want));

const fnvCases: Array<[string, string, number]> = [
  ["fnv1a32 of the empty string is the offset basis", "", 0x811c9dc5],
  ["fnv1a32 of 'a' matches the reference vector", "a", 0xe40c292c],
  ["fnv1a32 of 'foobar' matches the reference vector", "foobar", 0xbf9cf968],
];
for (const [name, s, want] of fnvCases) test(name, () => assert.equal(fnv1a32(s), want));

test("safe encoding maps each byte onto the vowel-free alphabet", () => {
  assert.equal(safeEncodeString("123"), "567");
});

test("each bound kind has its own permanent-id label", () => {
  assert.equal(permanentIDLabel("PropagationPolicy"), "propagationpolicy.karmada.io/permanent-id");
  assert.equal(permanentIDLabel("ClusterPropagationPolicy"), "clusterpropagationpolicy.karmada.io/permanent-id");
  assert.equal(permanentIDLabel("ResourceBinding"), "resourcebinding.karmada.io/permanent-id");
  assert.equal(permanentIDLabel("ClusterResourceBinding"), "clusterresourcebinding.karmada.io/permanent-id");
  assert.equal(permanentIDLabel("Work"), "work.karmada.io/permanent-id");
  assert.equal(permanentIDLabel("Deployment"), undefined);
});

test("an execution namespace names its cluster and other namespaces name none", () => {
  assert.equal(clusterOfExecutionNamespace("karmada-es-member1"), "member1");
  assert.equal(clusterOfExecutionNamespace("karmada-es-"), undefined);
  assert.equal(clusterOfExecutionNamespace("default"), undefined);
});
