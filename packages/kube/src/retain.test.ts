import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
import { coveredBy, retainClusterFields } from "./retain.js";

const observed: KubeObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: {
    name: "s",
    namespace: "d",
    resourceVersion: "42",
    uid: "u",
    finalizers: ["member/f"],
    ownerReferences: [{ apiVersion: "v1", kind: "X", name: "o", uid: "o1" }],
    labels: { "member-label": "1", old: "karmada", "karmada.io/managed": "true" },
    annotations: { "member-annotation": "1", "resourcetemplate.karmada.io/managed-labels": "old,karmada.io/managed" },
  },
  spec: { type: "NodePort", clusterIP: "10.0.0.7", clusterIPs: ["10.0.0.7"], ports: [{ port: 80, nodePort: 30080 }] },
  status: { loadBalancer: {} },
};
const desired: KubeObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "s", namespace: "d", labels: { "karmada.io/managed": "true", app: "web" }, annotations: { a: "b" } },
  spec: { type: "NodePort", ports: [{ port: 80 }] },
};

test("an update keeps the member's resourceVersion, finalizers, ownerReferences, own labels and annotations, and drops labels Karmada managed before", () => {
  const m = retainClusterFields(desired, observed);
  assert.equal(m.metadata.resourceVersion, "42");
  assert.deepEqual(m.metadata.finalizers, ["member/f"]);
  assert.deepEqual(m.metadata.ownerReferences, observed.metadata.ownerReferences);
  assert.deepEqual(m.metadata.labels, { "member-label": "1", "karmada.io/managed": "true", app: "web" });
  assert.deepEqual(m.metadata.annotations, { "member-annotation": "1", "resourcetemplate.karmada.io/managed-labels": "old,karmada.io/managed", a: "b" });
});

test("a Service keeps its cluster IPs and node ports", () => {
  const m = retainClusterFields(desired, observed);
  assert.deepEqual(m.spec, { type: "NodePort", clusterIP: "10.0.0.7", clusterIPs: ["10.0.0.7"], ports: [{ port: 80, nodePort: 30080 }] });
  assert.equal(desired.spec.clusterIP, undefined, "the desired object is not changed");
});

test("a workload labelled retain-replicas keeps the member's replica count", () => {
  const d: KubeObject = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "w", labels: { "resourcetemplate.karmada.io/retain-replicas": "true" } }, spec: { replicas: 2 } };
  const o: KubeObject = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "w", resourceVersion: "3" }, spec: { replicas: 7 } };
  assert.equal(retainClusterFields(d, o).spec.replicas, 7);
  assert.equal(retainClusterFields({ ...d, metadata: { name: "w" } }, o).spec.replicas, 2);
});

const coverage: [string, KubeObject, boolean][] = [
  ["an object the member defaulted further is covered", { ...desired, spec: { type: "NodePort", ports: [{ port: 80 }] } }, true],
  ["a changed value is not covered", { ...desired, spec: { type: "ClusterIP" } }, false],
  ["a list of a different length is not covered", { ...desired, spec: { ports: [{ port: 80 }, { port: 81 }] } }, false],
  ["a label the member lacks is not covered", { ...desired, metadata: { ...desired.metadata, labels: { new: "x" } } }, false],
  ["server-owned metadata and status do not count", { ...desired, metadata: { ...desired.metadata, labels: {}, annotations: {}, resourceVersion: "1", uid: "other" }, status: { x: 1 } }, true],
];
for (const [name, want, covered] of coverage) {
  test(`coverage: ${name}`, () => {
    const have: KubeObject = { ...observed, spec: { type: "NodePort", clusterIP: "10.0.0.7", ports: [{ port: 80, nodePort: 30080, protocol: "TCP" }] }, metadata: { ...observed.metadata, labels: { ...observed.metadata.labels, app: "web" }, annotations: { a: "b" } } };
    assert.equal(coveredBy(want, have), covered);
  });
}
