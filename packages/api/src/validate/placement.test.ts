// Placement (validate/placement.ts): cluster affinity, overflow affinities, replica scheduling, spread constraints and cluster tolerations of a PropagationPolicy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse } from "yaml";
import { KARMADA, applyDefaults, decodeTyped, validateObject } from "@flotilla/api";
import { checkCase, pp, type Case, type Json } from "./cases.test-support.js";

const placement = (o: Json): Json => o.spec.placement;
const withAffinities = (o: Json, terms: Json[]): void => {
  delete o.spec.placement.clusterAffinity;
  o.spec.placement.clusterAffinities = terms;
};

const P = KARMADA.propagationPolicy;
const cases: Case[] = [
  // ---- cluster affinity ----
  [
    "clusterAffinity and clusterAffinities cannot both be set",
    P,
    pp,
    (o) => (placement(o).clusterAffinities = [{ affinityName: "a", clusterNames: ["member1"] }]),
    [["spec.placement.clusterAffinities", "FieldValueForbidden"]],
  ],
  ["an affinity term needs a name", P, pp, (o) => withAffinities(o, [{ clusterNames: ["member1"] }]), [["spec.placement.clusterAffinities[0].affinityName", "FieldValueRequired"]]],
  [
    "affinity term names are unique",
    P,
    pp,
    (o) => withAffinities(o, [{ affinityName: "a", clusterNames: ["member1"] }, { affinityName: "a", clusterNames: ["member2"] }]),
    [["spec.placement.clusterAffinities[1].affinityName", "FieldValueDuplicate"]],
  ],
  ["an affinity term name is a qualified name", P, pp, (o) => withAffinities(o, [{ affinityName: "a b" }]), [["spec.placement.clusterAffinities[0].affinityName", "FieldValueInvalid"]]],
  [
    "a field selector only knows provider, region and zone",
    P,
    pp,
    (o) => (placement(o).clusterAffinity.fieldSelector = { matchExpressions: [{ key: "color", operator: "In", values: ["red"] }] }),
    [["spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key", "FieldValueNotSupported"]],
  ],
  [
    "a field selector only knows In and NotIn",
    P,
    pp,
    (o) => (placement(o).clusterAffinity.fieldSelector = { matchExpressions: [{ key: "region", operator: "Exists" }] }),
    [["spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator", "FieldValueNotSupported"]],
  ],
  [
    "a field selector inside an affinity term is checked too",
    P,
    pp,
    (o) => withAffinities(o, [{ affinityName: "a", fieldSelector: { matchExpressions: [{ key: "color", operator: "In", values: ["x"] }] } }]),
    [["spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0].key", "FieldValueNotSupported"]],
  ],
  [
    "overflow affinities are rejected with static weights",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }] } };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"]],
  ],
  [
    "overflow affinities are rejected without replica scheduling",
    P,
    pp,
    (o) => withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]),
    [["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"]],
  ],
  [
    "overflow affinities need the term's own affinity",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"]],
  ],
  [
    "overflow affinities are allowed with Aggregated division",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [],
  ],
  [
    "overflow affinities are allowed with dynamic weights",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } };
    },
    [],
  ],

  [
    "an overflow tier needs a name",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName", "FieldValueRequired"]],
  ],
  [
    "overflow tier names are unique",
    P,
    pp,
    (o) => {
      withAffinities(o, [
        { affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }, { affinityName: "burst", clusterNames: ["member3"] }] },
      ]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName", "FieldValueDuplicate"]],
  ],
  [
    "an overflow tier may not take the primary group's name",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "primary", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName", "FieldValueDuplicate"]],
  ],
  [
    "an overflow tier name is a qualified name",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "a b", clusterNames: ["member2"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName", "FieldValueInvalid"]],
  ],
  [
    "an overflow tier's field selector is checked too",
    P,
    pp,
    (o) => {
      withAffinities(o, [
        { affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", fieldSelector: { matchExpressions: [{ key: "color", operator: "In", values: ["x"] }] } }] },
      ]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [["spec.placement.clusterAffinities[0].overflowAffinities[0].fieldSelector.matchExpressions[0].key", "FieldValueNotSupported"]],
  ],
  [
    "a term without its own affinity and with a duplicated overflow name gets both errors",
    P,
    pp,
    (o) => {
      withAffinities(o, [{ affinityName: "primary", overflowAffinities: [{ affinityName: "o1", clusterNames: ["member2"] }, { affinityName: "o1", clusterNames: ["member3"] }] }]);
      placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Aggregated" };
    },
    [
      ["spec.placement.clusterAffinities[0].overflowAffinities", "FieldValueForbidden"],
      ["spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName", "FieldValueDuplicate"],
    ],
  ],
  [
    "only the term with overflow tiers needs a capacity-aware division",
    P,
    pp,
    (o) =>
      withAffinities(o, [
        { affinityName: "group1", clusterNames: ["member1"] },
        { affinityName: "group2", clusterNames: ["member2"], overflowAffinities: [{ affinityName: "overflow-1", clusterNames: ["member3"] }] },
      ]),
    [["spec.placement.clusterAffinities[1].overflowAffinities", "FieldValueForbidden"]],
  ],
  // ---- replica scheduling ----
  [
    "a static weight must be at least 1",
    P,
    pp,
    (o) =>
      (placement(o).replicaScheduling = {
        replicaSchedulingType: "Divided",
        replicaDivisionPreference: "Weighted",
        weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }, { targetCluster: { clusterNames: ["member2"] }, weight: 0 }] },
      }),
    [["spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight", "FieldValueInvalid"]],
  ],
  ["the replica scheduling type is Duplicated or Divided", P, pp, (o) => (placement(o).replicaScheduling = { replicaSchedulingType: "Spread" }), [["spec.placement.replicaScheduling.replicaSchedulingType", "FieldValueNotSupported"]]],
  [
    "the division preference is Aggregated or Weighted",
    P,
    pp,
    (o) => (placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Balanced" }),
    [["spec.placement.replicaScheduling.replicaDivisionPreference", "FieldValueNotSupported"]],
  ],
  [
    "the only dynamic weight factor is AvailableReplicas",
    P,
    pp,
    (o) => (placement(o).replicaScheduling = { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "Random" } }),
    [["spec.placement.replicaScheduling.weightPreference.dynamicWeight", "FieldValueNotSupported"]],
  ],

  // ---- spread constraints ----
  [
    "only one spread constraint per field is allowed",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: 1 }, { spreadByField: "cluster", minGroups: 2 }]),
    [["spec.placement.spreadConstraints[1].spreadByField", "FieldValueDuplicate"]],
  ],
  [
    "spreadByField and spreadByLabel cannot both be set",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", spreadByLabel: "topology", minGroups: 1 }]),
    [["spec.placement.spreadConstraints[0].spreadByLabel", "FieldValueForbidden"]],
  ],
  [
    "maxGroups may not be lower than minGroups",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "region", minGroups: 1, maxGroups: 2 }, { spreadByField: "cluster", minGroups: 3, maxGroups: 2 }]),
    [["spec.placement.spreadConstraints[1].maxGroups", "FieldValueInvalid"]],
  ],
  ["maxGroups 0 means no upper bound", P, pp, (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: 3 }]), []],
  ["minGroups may not be negative", P, pp, (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: -1 }]), [["spec.placement.spreadConstraints[0].minGroups", "FieldValueInvalid"]]],
  [
    "a field spread constraint needs a cluster spread constraint",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "region", minGroups: 1 }]),
    [["spec.placement.spreadConstraints", "FieldValueRequired"]],
  ],
  [
    "spreadByField is cluster, region, zone or provider",
    P,
    pp,
    (o) => (placement(o).spreadConstraints = [{ spreadByField: "cluster", minGroups: 1 }, { spreadByField: "node", minGroups: 1 }]),
    [["spec.placement.spreadConstraints[1].spreadByField", "FieldValueNotSupported"]],
  ],
  ["a label spread constraint alone needs no cluster constraint", P, pp, (o) => (placement(o).spreadConstraints = [{ spreadByLabel: "topology", minGroups: 1 }]), []],

  // ---- cluster tolerations ----
  ["a toleration operator Lt is rejected", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Lt", value: "1", effect: "NoSchedule" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueNotSupported"]]],
  ["a toleration operator Gt is rejected", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Gt", value: "1" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueNotSupported"]]],
  ["an Exists toleration may not have a value", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Exists", value: "v" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueInvalid"]]],
  ["a toleration effect must be a taint effect", P, pp, (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Exists", effect: "Evict" }]), [["spec.placement.clusterTolerations[0].effect", "FieldValueNotSupported"]]],
  ["a toleration without a key must use Exists", P, pp, (o) => (placement(o).clusterTolerations = [{ operator: "Equal", value: "v" }]), [["spec.placement.clusterTolerations[0].operator", "FieldValueInvalid"]]],
  [
    "tolerationSeconds only goes with NoExecute",
    P,
    pp,
    (o) => (placement(o).clusterTolerations = [{ key: "k", operator: "Exists", effect: "NoSchedule", tolerationSeconds: 10 }]),
    [["spec.placement.clusterTolerations[0].effect", "FieldValueInvalid"]],
  ],
  ["an empty-key Exists toleration tolerates everything and is valid", P, pp, (o) => (placement(o).clusterTolerations = [{ operator: "Exists" }]), []],
];

for (const c of cases) test(c[0], () => checkCase(c));

// Karmada v1.18's overflow example (docs/proposals: Overflow Cluster Affinities), unchanged.
const OVERFLOW = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
  namespace: default
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinities:
      - affinityName: "on-prem"
        clusterNames:
          - cluster1
        overflowAffinities:
          - affinityName: "public-cloud"
            clusterNames:
              - cluster2
              - cluster3
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        dynamicWeight: AvailableReplicas
`;

test("an upstream policy with overflowAffinities decodes, defaults and validates", () => {
  const decoded = decodeTyped(P, parse(OVERFLOW));
  assert.deepEqual(decoded.spec.placement.clusterAffinities[0].overflowAffinities, [{ affinityName: "public-cloud", clusterNames: ["cluster2", "cluster3"] }]);
  const defaulted = applyDefaults(decoded, { now: new Date("2024-01-01T00:00:00Z"), uuid: () => "0f8b5b2e-0000-4000-8000-000000000001" });
  assert.doesNotThrow(() => validateObject(P, defaulted));
});
