// ResourceBinding and ClusterResourceBinding (validate/binding.ts).
import { test } from "node:test";
import { KARMADA } from "@flotilla/api";
import { checkCase, type Case, type Json } from "./cases.test-support.js";

const rb = (): Json => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ResourceBinding",
  metadata: { name: "nginx-deployment", namespace: "default" },
  spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" }, replicas: 2, clusters: [{ name: "member1", replicas: 2 }] },
});
const crb = (): Json => ({ ...rb(), kind: "ClusterResourceBinding", metadata: { name: "ns1-namespace" } });

const cases: Case[] = [
  // ---- the valid starting points ----
  ["a plain resource binding is valid", KARMADA.resourceBinding, rb, () => {}, []],
  ["a plain cluster resource binding is valid", KARMADA.clusterResourceBinding, crb, () => {}, []],

  // ---- bindings ----
  ["a binding names its template's kind", KARMADA.resourceBinding, rb, (o) => delete o.spec.resource.kind, [["spec.resource.kind", "FieldValueRequired"]]],
  ["a binding lists each target cluster once", KARMADA.resourceBinding, rb, (o) => o.spec.clusters.push({ name: "member1", replicas: 1 }), [["spec.clusters[1].name", "FieldValueDuplicate"]]],
  ["binding replicas may not be negative", KARMADA.resourceBinding, rb, (o) => (o.spec.replicas = -1), [["spec.replicas", "FieldValueInvalid"]]],
  ["an eviction task names the cluster it evicts from", KARMADA.resourceBinding, rb, (o) => (o.spec.gracefulEvictionTasks = [{ reason: "TaintUntolerated" }]), [["spec.gracefulEvictionTasks[0].fromCluster", "FieldValueRequired"]]],
  ["a cluster resource binding has no namespace", KARMADA.clusterResourceBinding, crb, (o) => (o.metadata.namespace = "default"), [["metadata.namespace", "FieldValueForbidden"]]],
];

for (const c of cases) test(c[0], () => checkCase(c));
