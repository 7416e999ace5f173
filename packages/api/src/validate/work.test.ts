// Work (validate/work.ts).
import { test } from "node:test";
import { KARMADA } from "@flotilla/api";
import { checkCase, type Case, type Json } from "./cases.test-support.js";

const work = (): Json => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: "nginx-687f7fb96f", namespace: "karmada-es-member1" },
  spec: { workload: { manifests: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default" } }] } },
});

const cases: Case[] = [
  // ---- the valid starting point ----
  ["a plain work is valid", KARMADA.work, work, () => {}, []],

  // ---- works ----
  ["a work manifest needs a kind", KARMADA.work, work, (o) => delete o.spec.workload.manifests[0].kind, [["spec.workload.manifests[0].kind", "FieldValueRequired"]]],
  ["a work lives in a namespace", KARMADA.work, work, (o) => delete o.metadata.namespace, [["metadata.namespace", "FieldValueRequired"]]],
];

for (const c of cases) test(c[0], () => checkCase(c));
