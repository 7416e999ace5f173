// validateObject (validate/object.ts): resource templates, and what holds for every kind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CORE, InvalidError, KARMADA, validateObject } from "@flotilla/api";
import { checkCase, pp, type Case, type Json } from "./cases.test-support.js";

const deployment = (): Json => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default" }, spec: { replicas: 3, anything: { goes: [1, "x"] } } });

const placement = (o: Json): Json => o.spec.placement;

const P = KARMADA.propagationPolicy;
const cases: Case[] = [
  // ---- resource templates ----
  ["a template's spec is not checked", CORE.deployment, deployment, () => {}, []],
  ["a namespaced template needs a namespace", CORE.configMap, () => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }), () => {}, [["metadata.namespace", "FieldValueRequired"]]],
  ["an RBAC name may contain colons", CORE.clusterRole, () => ({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "system:controller:foo" } }), () => {}, []],
  ["a Namespace name is a DNS label", CORE.namespace, () => ({ apiVersion: "v1", kind: "Namespace", metadata: { name: "a.b" } }), () => {}, [["metadata.name", "FieldValueInvalid"]]],

  // ---- whole objects ----
  [
    "every problem is reported at once",
    P,
    pp,
    (o) => {
      delete o.metadata.namespace;
      o.spec.resourceSelectors = [];
      placement(o).clusterTolerations = [{ key: "k", operator: "Lt" }];
    },
    [
      ["metadata.namespace", "FieldValueRequired"],
      ["spec.resourceSelectors", "FieldValueRequired"],
      ["spec.placement.clusterTolerations[0].operator", "FieldValueNotSupported"],
    ],
  ],
  ["an undecoded object with wrong types fails on the types", P, pp, (o) => (o.spec.resourceSelectors = "Deployment"), [["spec.resourceSelectors", "FieldValueTypeInvalid"]]],
  ["an object of another kind is rejected", P, pp, (o) => (o.kind = "ClusterPropagationPolicy"), [["kind", "FieldValueInvalid"]]],
];

for (const c of cases) test(c[0], () => checkCase(c));

test("an InvalidError names the object and lists the causes in its message", () => {
  const o = pp();
  o.spec.conflictResolution = "Merge";
  assert.throws(
    () => validateObject(P, o),
    (e: unknown) =>
      e instanceof InvalidError &&
      e.ref.name === "nginx-propagation" &&
      e.ref.kind === "PropagationPolicy" &&
      e.message === `PropagationPolicy.policy.karmada.io "nginx-propagation" is invalid: spec.conflictResolution: Unsupported value: "Merge": supported values: "Abort", "Overwrite"`,
  );
});
