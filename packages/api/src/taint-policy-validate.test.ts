import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidError, KARMADA, applyDefaults, decodeTyped, validateObject, type KubeObject } from "@flotilla/api";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ctp = (spec: Json, meta: Json = { name: "detect-not-ready" }): Json => ({ apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterTaintPolicy", metadata: meta, spec });
const notReady = [{ conditionType: "Ready", operator: "NotIn", statusValues: ["True"] }];
const ready = [{ conditionType: "Ready", operator: "In", statusValues: ["True"] }];

/** The causes a ClusterTaintPolicy is refused for (`field: message`); [] when accepted. */
function causes(o: Json, allowNoExecuteTaintPolicy = false): string[] {
  try {
    validateObject(KARMADA.clusterTaintPolicy, decodeTyped(KARMADA.clusterTaintPolicy, o) as KubeObject, { allowNoExecuteTaintPolicy });
    return [];
  } catch (e) {
    if (!(e instanceof InvalidError)) throw e;
    return e.causes.map((c) => `${c.field}: ${c.message}`);
  }
}

const cases: { name: string; policy: Json; allowNoExecute?: boolean; want: RegExp[] }[] = [
  {
    name: "a policy with target clusters, add and remove conditions and a NoSchedule taint is accepted",
    policy: ctp({
      targetClusters: { clusterNames: ["member1"], labelSelector: { matchLabels: { env: "prod" } } },
      addOnConditions: notReady,
      removeOnConditions: ready,
      taints: [{ key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }, { key: "example.com/degraded", value: "yes", effect: "NoSchedule" }],
    }),
    want: [],
  },
  {
    name: "a policy without conditions is accepted (it never adds or removes anything)",
    policy: ctp({ taints: [{ key: "k", effect: "NoSchedule" }] }),
    want: [],
  },
  {
    name: "a NoExecute taint is forbidden unless the administrator allows it",
    policy: ctp({ addOnConditions: notReady, taints: [{ key: "cluster.karmada.io/not-ready", effect: "NoExecute" }] }),
    want: [/^spec\.taints\[0\]: Forbidden: Configuring taint with NoExecute effect is not allowed, this capability must be explicitly enabled by administrators/],
  },
  {
    name: "a NoExecute taint is accepted when the administrator allows it",
    policy: ctp({ addOnConditions: notReady, taints: [{ key: "cluster.karmada.io/not-ready", effect: "NoExecute" }] }),
    allowNoExecute: true,
    want: [],
  },
  {
    name: "two taints with the same key and effect are refused at the first of them, with upstream's words",
    policy: ctp({ taints: [{ key: "key1", effect: "NoSchedule" }, { key: "key1", effect: "NoSchedule", value: "value1" }] }),
    want: [/^spec\.taints\[0\]: Duplicate value: "Duplicate taint with the same key\(key1\) and effect\(NoSchedule\) is not allowed"$/],
  },
  {
    name: "each taint with a later duplicate is reported once",
    policy: ctp({
      taints: [
        { key: "key1", effect: "NoSchedule" },
        { key: "key2", effect: "NoSchedule", value: "v" },
        { key: "key1", effect: "NoSchedule" },
        { key: "key2", effect: "NoSchedule" },
        { key: "key1", effect: "NoSchedule" },
      ],
    }),
    want: [/^spec\.taints\[0\]: Duplicate value: .*key\(key1\)/, /^spec\.taints\[1\]: Duplicate value: .*key\(key2\)/, /^spec\.taints\[2\]: Duplicate value: .*key\(key1\)/],
  },
  {
    name: "the same key with different effects is accepted",
    policy: ctp({ taints: [{ key: "k", effect: "NoSchedule" }, { key: "k", effect: "NoExecute" }] }),
    allowNoExecute: true,
    want: [],
  },
  {
    name: "a policy without taints is refused (the CRD's minItems 1)",
    policy: ctp({ addOnConditions: notReady }),
    want: [/^spec\.taints: Required value: must have at least 1 item$/],
  },
  {
    name: "a policy without spec is refused",
    policy: { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterTaintPolicy", metadata: { name: "p" } },
    want: [/^spec: Required value$/],
  },
  {
    name: "a taint without key or effect is refused, naming each field",
    policy: ctp({ taints: [{ value: "v" }] }),
    want: [/^spec\.taints\[0\]\.key: Required value$/, /^spec\.taints\[0\]\.effect: Required value$/],
  },
  {
    name: "an effect the policy API does not support is refused, PreferNoSchedule included",
    policy: ctp({ taints: [{ key: "a", effect: "PreferNoSchedule" }, { key: "b", effect: "PreferNoExecute" }] }),
    want: [/^spec\.taints\[0\]\.effect: Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute"$/, /^spec\.taints\[1\]\.effect: Unsupported value: "PreferNoExecute"/],
  },
  {
    name: "a key or value a Cluster's taint could not have is refused",
    policy: ctp({ taints: [{ key: "bad key", effect: "NoSchedule" }, { key: "k", value: "-bad-", effect: "NoSchedule" }] }),
    want: [/^spec\.taints\[0\]\.key: Invalid value: "bad key"/, /^spec\.taints\[1\]\.value: Invalid value: "-bad-"/],
  },
  {
    name: "a match condition without type or operator is refused in both lists",
    policy: ctp({ addOnConditions: [{ statusValues: ["False"] }], removeOnConditions: [{ conditionType: "Ready", statusValues: ["True"] }], taints: [{ key: "k", effect: "NoSchedule" }] }),
    want: [/^spec\.addOnConditions\[0\]\.conditionType: Required value$/, /^spec\.addOnConditions\[0\]\.operator: Required value$/, /^spec\.removeOnConditions\[0\]\.operator: Required value$/],
  },
  {
    name: "an operator other than In or NotIn is refused",
    policy: ctp({ addOnConditions: [{ conditionType: "Ready", operator: "Exists", statusValues: ["True"] }], taints: [{ key: "k", effect: "NoSchedule" }] }),
    want: [/^spec\.addOnConditions\[0\]\.operator: Unsupported value: "Exists": supported values: "In", "NotIn"$/],
  },
  {
    name: "a status value other than True, False or Unknown is refused",
    policy: ctp({ removeOnConditions: [{ conditionType: "Ready", operator: "In", statusValues: ["True", "true", ""] }], taints: [{ key: "k", effect: "NoSchedule" }] }),
    want: [/^spec\.removeOnConditions\[0\]\.statusValues\[1\]: Unsupported value: "true"/, /^spec\.removeOnConditions\[0\]\.statusValues\[2\]: Unsupported value: ""/],
  },
  {
    name: "target clusters are checked like a placement's cluster affinity",
    policy: ctp({ targetClusters: { fieldSelector: { matchExpressions: [{ key: "color", operator: "In", values: ["red"] }] } }, taints: [{ key: "k", effect: "NoSchedule" }] }),
    want: [/^spec\.targetClusters\.fieldSelector\.matchExpressions\[0\]\.key: /],
  },
  {
    name: "a namespace on the cluster-scoped kind is refused",
    policy: ctp({ taints: [{ key: "k", effect: "NoSchedule" }] }, { name: "p", namespace: "default" }),
    want: [/^metadata\.namespace: /],
  },
];

for (const c of cases) {
  test(c.name, () => {
    const got = causes(c.policy, c.allowNoExecute);
    assert.equal(got.length, c.want.length, got.join("\n"));
    for (const w of c.want) assert.ok(got.some((g) => w.test(g)), `${w} not in\n${got.join("\n")}`);
  });
}

test("an unknown field is refused by strict decoding, naming it", () => {
  assert.throws(
    () => decodeTyped(KARMADA.clusterTaintPolicy, ctp({ taints: [{ key: "k", effect: "NoSchedule", timeAdded: "2026-01-01T00:00:00Z" }] })),
    (e: unknown) => e instanceof InvalidError && e.causes.some((c) => c.field === "spec.taints[0].timeAdded" && c.reason === "FieldValueUnknown"),
  );
});

test("defaulting leaves a ClusterTaintPolicy as it is (upstream has no mutating webhook for it)", () => {
  const p = ctp({ addOnConditions: notReady, taints: [{ key: "k", effect: "NoSchedule" }] });
  assert.deepEqual(applyDefaults(p, { now: new Date(0), uuid: () => "u" }), p);
});
