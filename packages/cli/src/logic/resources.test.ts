import { test } from "node:test";
import assert from "node:assert/strict";
import { builtinResource, findResource, memberPath, proxyPath, resourceName } from "./resources.js";

test("kind arguments: kubectl's names of the built-in kinds", () => {
  const cases: Array<[string, string | undefined]> = [
    ["po", "pods"],
    ["pod", "pods"],
    ["Pods", "pods"],
    ["deploy", "deployments.apps"],
    ["deployments.apps", "deployments.apps"],
    ["deployments.v1.apps", "deployments.apps"],
    ["svc", "services"],
    ["cm", "configmaps"],
    ["ns", "namespaces"],
    ["no", "nodes"],
    ["sts", "statefulsets.apps"],
    ["hpa", "horizontalpodautoscalers.autoscaling"],
    ["deployments.batch", undefined],
    ["widgets", undefined],
  ];
  for (const [arg, want] of cases) {
    const r = builtinResource(arg);
    assert.equal(r && resourceName(r), want, arg);
  }
});

test("other kinds come from a member's discovery, by plural, singular, kind or short name", () => {
  const lists = [
    { groupVersion: "v1", resources: [{ name: "pods", kind: "Pod", namespaced: true }] },
    { groupVersion: "example.io/v1", resources: [{ name: "widgets", singularName: "widget", kind: "Widget", namespaced: true, shortNames: ["wd"] }, { name: "widgets/status", kind: "Widget", namespaced: true }] },
  ];
  for (const arg of ["widgets", "widget", "wd", "Widget", "widgets.example.io", "widgets.v1.example.io"]) assert.deepEqual(findResource(arg, lists), { group: "example.io", version: "v1", plural: "widgets", kind: "Widget", namespaced: true }, arg);
  assert.equal(findResource("widgets.other.io", lists), undefined);
  assert.equal(findResource("gadgets", lists), undefined);
});

test("member paths and the proxy path in front of them", () => {
  const deploy = builtinResource("deploy")!;
  const node = builtinResource("nodes")!;
  const cases: Array<[string, string, string]> = [
    ["a namespaced list", memberPath(deploy, { namespace: "default" }), "/apis/apps/v1/namespaces/default/deployments"],
    ["across namespaces", memberPath(deploy, {}), "/apis/apps/v1/deployments"],
    ["one object", memberPath(deploy, { namespace: "web", name: "nginx" }), "/apis/apps/v1/namespaces/web/deployments/nginx"],
    ["a selector", memberPath(builtinResource("po")!, { namespace: "a", query: { labelSelector: "app=x", empty: "" } }), "/api/v1/namespaces/a/pods?labelSelector=app%3Dx"],
    ["a cluster-scoped kind ignores the namespace", memberPath(node, { namespace: "default", name: "n1" }), "/api/v1/nodes/n1"],
    ["through the proxy", proxyPath("member1", "/api/v1/pods"), "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/pods"],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});
