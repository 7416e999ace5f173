// PropagationPolicy and ClusterPropagationPolicy (validate/propagation-policy.ts): resource selectors, enums, failover and suspension.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse } from "yaml";
import { KARMADA, applyDefaults, decodeTyped, validateObject, type KubeObject } from "@flotilla/api";
import { checkCase, pp, cpp, type Case, type Json } from "./cases.test-support.js";

const app = (o: Json, a: Json): void => {
  o.spec.propagateDeps = true;
  o.spec.failover = { application: a };
};

const P = KARMADA.propagationPolicy;
const cases: Case[] = [
  // ---- the valid starting points ----
  ["a plain propagation policy is valid", P, pp, () => {}, []],
  ["a plain cluster propagation policy is valid", KARMADA.clusterPropagationPolicy, cpp, () => {}, []],

  // ---- resource selectors ----
  ["a policy without resource selectors is rejected", P, pp, (o) => (o.spec.resourceSelectors = []), [["spec.resourceSelectors", "FieldValueRequired"]]],
  ["a resource selector needs an apiVersion", P, pp, (o) => delete o.spec.resourceSelectors[0].apiVersion, [["spec.resourceSelectors[0].apiVersion", "FieldValueRequired"]]],
  ["a resource selector needs a kind", P, pp, (o) => delete o.spec.resourceSelectors[0].kind, [["spec.resourceSelectors[0].kind", "FieldValueRequired"]]],
  [
    "preemption Always needs named resource selectors",
    P,
    pp,
    (o) => {
      o.spec.preemption = "Always";
      delete o.spec.resourceSelectors[0].name;
    },
    [["spec.resourceSelectors[0].name", "FieldValueInvalid"]],
  ],

  // ---- scalar enums ----
  ["conflictResolution is Abort or Overwrite", P, pp, (o) => (o.spec.conflictResolution = "Merge"), [["spec.conflictResolution", "FieldValueNotSupported"]]],
  ["preemption is Always or Never", P, pp, (o) => (o.spec.preemption = "Sometimes"), [["spec.preemption", "FieldValueNotSupported"]]],
  ["activationPreference can only be Lazy", P, pp, (o) => (o.spec.activationPreference = "Eager"), [["spec.activationPreference", "FieldValueNotSupported"]]],
  ["a dependent override needs a name", P, pp, (o) => (o.spec.dependentOverrides = [""]), [["spec.dependentOverrides[0]", "FieldValueRequired"]]],

  // ---- failover ----
  [
    "application failover needs propagateDeps",
    P,
    pp,
    (o) => (o.spec.failover = { application: { decisionConditions: { tolerationSeconds: 300 }, purgeMode: "Directly" } }),
    [["spec.propagateDeps", "FieldValueInvalid"]],
  ],
  ["the application purge mode is Directly, Gracefully or Never", P, pp, (o) => app(o, { purgeMode: "Later" }), [["spec.failover.application.purgeMode", "FieldValueNotSupported"]]],
  ["a grace period only goes with a Gracefully purge", P, pp, (o) => app(o, { purgeMode: "Directly", gracePeriodSeconds: 10 }), [["spec.failover.application.gracePeriodSeconds", "FieldValueForbidden"]]],
  ["a Gracefully purge needs a grace period", P, pp, (o) => app(o, { purgeMode: "Gracefully" }), [["spec.failover.application.gracePeriodSeconds", "FieldValueRequired"]]],
  ["a grace period must be positive", P, pp, (o) => app(o, { purgeMode: "Gracefully", gracePeriodSeconds: 0 }), [["spec.failover.application.gracePeriodSeconds", "FieldValueInvalid"]]],
  [
    "the failover toleration may not be negative",
    P,
    pp,
    (o) => app(o, { purgeMode: "Never", decisionConditions: { tolerationSeconds: -1 } }),
    [["spec.failover.application.decisionConditions.tolerationSeconds", "FieldValueInvalid"]],
  ],
  ["the legacy Graciously purge mode is still accepted", P, pp, (o) => app(o, { purgeMode: "Graciously", gracePeriodSeconds: 600 }), []],
  ["the cluster purge mode is Directly or Gracefully", P, pp, (o) => (o.spec.failover = { cluster: { purgeMode: "Never" } }), [["spec.failover.cluster.purgeMode", "FieldValueNotSupported"]]],
  [
    "a state preservation alias must be a label name",
    P,
    pp,
    (o) => app(o, { purgeMode: "Never", statePreservation: { rules: [{ aliasLabelName: "-bad", jsonPath: "{.replicas}" }] } }),
    [["spec.failover.application.statePreservation.rules[0].aliasLabelName", "FieldValueInvalid"]],
  ],
  [
    "a state preservation rule needs a JSONPath",
    P,
    pp,
    (o) => (o.spec.failover = { cluster: { statePreservation: { rules: [{ aliasLabelName: "state" }] } } }),
    [["spec.failover.cluster.statePreservation.rules[0].jsonPath", "FieldValueRequired"]],
  ],

  // ---- suspension ----
  [
    "suspending all dispatching excludes a cluster list",
    P,
    pp,
    (o) => (o.spec.suspension = { dispatching: true, dispatchingOnClusters: { clusterNames: ["member1"] } }),
    [["spec.suspension.dispatchingOnClusters.clusterNames", "FieldValueForbidden"]],
  ],
];

for (const c of cases) test(c[0], () => checkCase(c));

const SEED = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: { name: nginx-propagation, namespace: default }
spec:
  resourceSelectors: [ { apiVersion: apps/v1, kind: Deployment, name: nginx } ]
  placement:
    clusterAffinity: { clusterNames: [member1, member2] }
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - targetCluster: { clusterNames: [member1] }
            weight: 1
          - targetCluster: { clusterNames: [member2] }
            weight: 2
`;

test("the seed policy decodes, defaults and validates", () => {
  const decoded = decodeTyped(P, parse(SEED));
  const defaulted = applyDefaults(decoded, { now: new Date("2024-01-01T00:00:00Z"), uuid: () => "0f8b5b2e-0000-4000-8000-000000000001" });
  assert.doesNotThrow(() => validateObject(P, defaulted));
  const want: KubeObject = {
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "PropagationPolicy",
    metadata: { name: "nginx-propagation", namespace: "default", labels: { "propagationpolicy.karmada.io/permanent-id": "0f8b5b2e-0000-4000-8000-000000000001" } },
    spec: {
      resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx", namespace: "default" }],
      placement: {
        clusterAffinity: { clusterNames: ["member1", "member2"] },
        clusterTolerations: [
          { key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
          { key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        ],
        replicaScheduling: {
          replicaSchedulingType: "Divided",
          replicaDivisionPreference: "Weighted",
          weightPreference: {
            staticWeightList: [
              { targetCluster: { clusterNames: ["member1"] }, weight: 1 },
              { targetCluster: { clusterNames: ["member2"] }, weight: 2 },
            ],
          },
        },
      },
      priority: 0,
      preemption: "Never",
      conflictResolution: "Abort",
      schedulerName: "default-scheduler",
    },
  };
  assert.deepEqual(defaulted, want);
  // The defaulted form is itself valid decoded JSON: decoding it again changes nothing.
  assert.deepEqual(decodeTyped(P, defaulted), defaulted);
});
