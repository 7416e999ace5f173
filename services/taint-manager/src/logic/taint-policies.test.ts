import { test } from "node:test";
import assert from "node:assert/strict";
import { rfc3339, type Cluster, type ClusterTaintPolicy, type Condition, type MatchCondition, type Taint } from "@flotilla/api";
import { PolicyTaintsAnnotation, applyTaintPolicies, conditionMatches, policyOwnedTaints, readPolicyTaints, sparePolicyTaints, taintsMessage, type PolicyTaintRecord } from "./taint-policies.js";
import { NotReadyNoExecute, NotReadyNoSchedule, UnreachableNoExecute, UnreachableNoSchedule, applyTaintPlan, planTaints, taintString } from "./taints.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (s: number) => rfc3339(T0 + s * 1000);
const NOW = T0 + 3600_000;

const cond = (type: string, status: string): Condition => ({ type, status, reason: "r", lastTransitionTime: at(0) });
const m = (conditionType: string, operator: string, ...statusValues: string[]): MatchCondition => ({ conditionType, operator, statusValues });

test("conditionMatches follows upstream, case by case", () => {
  const cases: Array<[string, Condition[], MatchCondition[], boolean]> = [
    ["an empty match list never matches", [cond("Ready", "True")], [], false],
    ["In matches a listed status", [cond("Ready", "False")], [m("Ready", "In", "False", "Unknown")], true],
    ["In does not match an unlisted status", [cond("Ready", "True")], [m("Ready", "In", "False", "Unknown")], false],
    ["NotIn matches an unlisted status", [cond("Ready", "Unknown")], [m("Ready", "NotIn", "True")], true],
    ["NotIn does not match a listed status", [cond("Ready", "True")], [m("Ready", "NotIn", "True")], false],
    ["a condition type the cluster does not have never matches, even with NotIn", [cond("Ready", "True")], [m("NetworkAvailable", "NotIn", "True")], false],
    ["a cluster without conditions matches nothing", [], [m("Ready", "NotIn", "True")], false],
    ["the match conditions are ANDed: all match", [cond("Ready", "False"), cond("NetworkAvailable", "False")], [m("Ready", "In", "False"), m("NetworkAvailable", "NotIn", "True")], true],
    ["the match conditions are ANDed: one fails", [cond("Ready", "False"), cond("NetworkAvailable", "True")], [m("Ready", "In", "False"), m("NetworkAvailable", "NotIn", "True")], false],
    ["an unknown operator fails the whole list", [cond("Ready", "False")], [m("Ready", "Exists", "False")], false],
    ["with two conditions of one type, In matches if any is listed", [cond("Ready", "False"), cond("Ready", "True")], [m("Ready", "In", "False")], true],
    ["with two conditions of one type, NotIn is decided by the last", [cond("Ready", "False"), cond("Ready", "True")], [m("Ready", "NotIn", "True")], false],
    ["In with no status values never matches", [cond("Ready", "False")], [m("Ready", "In")], false],
    ["NotIn with no status values matches a present type", [cond("Ready", "False")], [m("Ready", "NotIn")], true],
  ];
  for (const [name, conditions, match, want] of cases) assert.equal(conditionMatches(conditions, match), want, name);
});

const policy = (name: string, createdS: number, spec: ClusterTaintPolicy["spec"]): ClusterTaintPolicy => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "ClusterTaintPolicy",
  metadata: { name, creationTimestamp: at(createdS) },
  spec,
});
const notReadyAdds = (name: string, taints: NonNullable<ClusterTaintPolicy["spec"]>["taints"], extra: Partial<NonNullable<ClusterTaintPolicy["spec"]>> = {}, createdS = 0) =>
  policy(name, createdS, { addOnConditions: [m("Ready", "NotIn", "True")], removeOnConditions: [m("Ready", "In", "True")], taints, ...extra });

const cluster = (o: { name?: string; ready?: string; taints?: Taint[]; records?: PolicyTaintRecord[]; labels?: Record<string, string> } = {}): Cluster => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name: o.name ?? "member1", labels: o.labels, ...(o.records ? { annotations: { [PolicyTaintsAnnotation]: JSON.stringify(o.records) } } : {}) },
  spec: { taints: o.taints ?? [] },
  status: { conditions: o.ready ? [cond("Ready", o.ready)] : [] },
});
const rec = (key: string, effect: string, policyName: string, timeAddedS: number): PolicyTaintRecord => ({ key, effect, policy: policyName, timeAdded: at(timeAddedS) });
const NS = "NoSchedule";
const NE = "NoExecute";
const str = (ts: Taint[]) => ts.map((t) => `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}@${t.timeAdded ?? "-"}`);

interface Case {
  name: string;
  cluster: Cluster;
  policies: ClusterTaintPolicy[];
  taints: string[];
  records: string[];
  added?: string[];
  removed?: string[];
  changed: boolean;
}

const nowS = (NOW - T0) / 1000;
const cases: Case[] = [
  {
    name: "all addOnConditions match: the missing taint is added with timeAdded now and its value, and recorded as the policy's",
    cluster: cluster({ ready: "False" }),
    policies: [notReadyAdds("p", [{ key: "example.com/down", value: "yes", effect: NS }])],
    taints: [`example.com/down=yes:NoSchedule@${at(nowS)}`],
    records: ["example.com/down:NoSchedule by p"],
    added: ["example.com/down:NoSchedule by p"],
    changed: true,
  },
  {
    name: "a taint the cluster already has with that key and effect is left alone (and not recorded), whatever its value",
    cluster: cluster({ ready: "False", taints: [{ key: "example.com/down", value: "manual", effect: NS }] }),
    policies: [notReadyAdds("p", [{ key: "example.com/down", value: "yes", effect: NS }])],
    taints: ["example.com/down=manual:NoSchedule@-"],
    records: [],
    changed: false,
  },
  {
    name: "the same key with another effect is another taint",
    cluster: cluster({ ready: "False", taints: [{ key: "example.com/down", effect: NS }] }),
    policies: [notReadyAdds("p", [{ key: "example.com/down", effect: NE }])],
    taints: ["example.com/down:NoSchedule@-", `example.com/down:NoExecute@${at(nowS)}`],
    records: ["example.com/down:NoExecute by p"],
    added: ["example.com/down:NoExecute by p"],
    changed: true,
  },
  {
    name: "all removeOnConditions match: a taint a policy added is removed and its record dropped",
    cluster: cluster({ ready: "True", taints: [{ key: "example.com/down", effect: NS, timeAdded: at(10) }], records: [rec("example.com/down", NS, "p", 10)] }),
    policies: [notReadyAdds("p", [{ key: "example.com/down", effect: NS }])],
    taints: [],
    records: [],
    removed: ["example.com/down:NoSchedule by p"],
    changed: true,
  },
  {
    name: "a policy never removes a taint it did not add: the cluster controller's not-ready taint stays on Ready True",
    cluster: cluster({ ready: "True", taints: [{ key: "cluster.karmada.io/not-ready", effect: NS, timeAdded: at(10) }] }),
    policies: [notReadyAdds("p", [{ key: "cluster.karmada.io/not-ready", effect: NS }])],
    taints: [`cluster.karmada.io/not-ready:NoSchedule@${at(10)}`],
    records: [],
    changed: false,
  },
  {
    name: "a taint removed and set again by hand (a new timeAdded) is no longer the policy's: kept, and the stale record dropped",
    cluster: cluster({ ready: "True", taints: [{ key: "example.com/down", effect: NS, timeAdded: at(99) }], records: [rec("example.com/down", NS, "p", 10)] }),
    policies: [notReadyAdds("p", [{ key: "example.com/down", effect: NS }])],
    taints: [`example.com/down:NoSchedule@${at(99)}`],
    records: [],
    changed: true,
  },
  {
    name: "a record whose taint is gone is dropped even with no policy left",
    cluster: cluster({ ready: "True", taints: [], records: [rec("example.com/down", NS, "p", 10)] }),
    policies: [],
    taints: [],
    records: [],
    changed: true,
  },
  {
    name: "deleting a policy removes nothing: its taint and record stay",
    cluster: cluster({ ready: "True", taints: [{ key: "example.com/down", effect: NS, timeAdded: at(10) }], records: [rec("example.com/down", NS, "gone", 10)] }),
    policies: [],
    taints: [`example.com/down:NoSchedule@${at(10)}`],
    records: ["example.com/down:NoSchedule by gone"],
    changed: false,
  },
  {
    name: "an empty addOnConditions never adds and an empty removeOnConditions never removes",
    cluster: cluster({ ready: "False", taints: [{ key: "a", effect: NS, timeAdded: at(10) }], records: [rec("a", NS, "p", 10)] }),
    policies: [policy("p", 0, { taints: [{ key: "a", effect: NS }, { key: "b", effect: NS }] })],
    taints: [`a:NoSchedule@${at(10)}`],
    records: ["a:NoSchedule by p"],
    changed: false,
  },
  {
    name: "a policy whose targetClusters do not match the cluster is skipped, its taints kept as they are",
    cluster: cluster({ ready: "True", taints: [{ key: "a", effect: NS, timeAdded: at(10) }], records: [rec("a", NS, "p", 10)] }),
    policies: [notReadyAdds("p", [{ key: "a", effect: NS }], { targetClusters: { clusterNames: ["member2"] } })],
    taints: [`a:NoSchedule@${at(10)}`],
    records: ["a:NoSchedule by p"],
    changed: false,
  },
  {
    name: "targetClusters select by label too",
    cluster: cluster({ ready: "False", labels: { env: "prod" } }),
    policies: [notReadyAdds("prod", [{ key: "p", effect: NS }], { targetClusters: { labelSelector: { matchLabels: { env: "prod" } } } }), notReadyAdds("dev", [{ key: "d", effect: NS }], { targetClusters: { labelSelector: { matchLabels: { env: "dev" } } } })],
    taints: [`p:NoSchedule@${at(nowS)}`],
    records: ["p:NoSchedule by prod"],
    added: ["p:NoSchedule by prod"],
    changed: true,
  },
  {
    name: "the add conditions are evaluated before the remove conditions: a policy matching both leaves nothing behind",
    cluster: cluster({ ready: "False" }),
    policies: [policy("both", 0, { addOnConditions: [m("Ready", "In", "False")], removeOnConditions: [m("Ready", "NotIn", "True")], taints: [{ key: "a", effect: NS }] })],
    taints: [],
    records: [],
    changed: false,
  },
  {
    name: "policies run oldest first: an older one adds, a newer one listing the same taint removes it in the same pass",
    cluster: cluster({ ready: "False" }),
    policies: [policy("remover", 20, { removeOnConditions: [m("Ready", "In", "False")], taints: [{ key: "a", effect: NS }] }), policy("adder", 10, { addOnConditions: [m("Ready", "In", "False")], taints: [{ key: "a", effect: NS }] })],
    taints: [],
    records: [],
    changed: false,
  },
  {
    name: "policies run oldest first: an older remover finds nothing, a newer adder's taint stays",
    cluster: cluster({ ready: "False" }),
    policies: [policy("remover", 10, { removeOnConditions: [m("Ready", "In", "False")], taints: [{ key: "a", effect: NS }] }), policy("adder", 20, { addOnConditions: [m("Ready", "In", "False")], taints: [{ key: "a", effect: NS }] })],
    taints: [`a:NoSchedule@${at(nowS)}`],
    records: ["a:NoSchedule by adder"],
    added: ["a:NoSchedule by adder"],
    changed: true,
  },
  {
    name: "any policy listing a taint another policy added may remove it (as upstream)",
    cluster: cluster({ ready: "True", taints: [{ key: "a", effect: NS, timeAdded: at(10) }], records: [rec("a", NS, "adder", 10)] }),
    policies: [policy("adder", 0, { addOnConditions: [m("Ready", "In", "False")], taints: [{ key: "a", effect: NS }] }), policy("cleaner", 5, { removeOnConditions: [m("Ready", "In", "True")], taints: [{ key: "a", effect: NS }] })],
    taints: [],
    records: [],
    removed: ["a:NoSchedule by cleaner"],
    changed: true,
  },
  {
    name: "a second policy listing a taint the first just added finds it present",
    cluster: cluster({ ready: "False" }),
    policies: [notReadyAdds("first", [{ key: "a", effect: NS }], {}, 0), notReadyAdds("second", [{ key: "a", effect: NS, value: "other" }], {}, 5)],
    taints: [`a:NoSchedule@${at(nowS)}`],
    records: ["a:NoSchedule by first"],
    added: ["a:NoSchedule by first"],
    changed: true,
  },
  {
    name: "a NotIn policy does not fire on a cluster that has never reported the condition",
    cluster: cluster({}),
    policies: [notReadyAdds("p", [{ key: "a", effect: NS }])],
    taints: [],
    records: [],
    changed: false,
  },
  {
    name: "users' and the cluster controller's taints keep their place; the policy's is appended",
    cluster: cluster({ ready: "Unknown", taints: [{ key: "user", effect: NS }, { key: "cluster.karmada.io/unreachable", effect: NS, timeAdded: at(1) }] }),
    policies: [notReadyAdds("p", [{ key: "example.com/unreachable", effect: NE }])],
    taints: ["user:NoSchedule@-", `cluster.karmada.io/unreachable:NoSchedule@${at(1)}`, `example.com/unreachable:NoExecute@${at(nowS)}`],
    records: ["example.com/unreachable:NoExecute by p"],
    added: ["example.com/unreachable:NoExecute by p"],
    changed: true,
  },
];

for (const c of cases) {
  test(c.name, () => {
    const input = structuredClone(c.cluster);
    const out = applyTaintPolicies(input, c.policies, NOW);
    assert.deepEqual(input, c.cluster, "the cluster is not modified");
    assert.deepEqual(str(out.taints), c.taints);
    assert.deepEqual(out.records.map((r) => `${r.key}:${r.effect} by ${r.policy}`), c.records);
    for (const r of out.records) assert.ok(out.taints.some((t) => t.key === r.key && t.effect === r.effect && t.timeAdded === r.timeAdded), "every record names a taint the cluster carries");
    assert.deepEqual(out.added.map((a) => `${a.taint.key}:${a.taint.effect} by ${a.policy}`), c.added ?? []);
    assert.deepEqual(out.removed.map((a) => `${a.taint.key}:${a.taint.effect} by ${a.policy}`), c.removed ?? []);
    assert.equal(out.changed, c.changed);
  });
}

test("applying the outcome again changes nothing (the evaluation is idempotent)", () => {
  const c = cluster({ ready: "False", taints: [{ key: "user", effect: NS }] });
  const policies = [notReadyAdds("p", [{ key: "a", effect: NS }, { key: "b", effect: NE }])];
  const first = applyTaintPolicies(c, policies, NOW);
  const next: Cluster = { ...c, metadata: { ...c.metadata, annotations: { [PolicyTaintsAnnotation]: JSON.stringify(first.records) } }, spec: { taints: first.taints } };
  const second = applyTaintPolicies(next, policies, NOW + 60_000);
  assert.equal(second.changed, false);
  assert.deepEqual(policyOwnedTaints(next).map((t) => t.key), ["a", "b"]);
});

test("an unreadable annotation records nothing and is rewritten", () => {
  assert.deepEqual(readPolicyTaints({ [PolicyTaintsAnnotation]: "{not json" }), []);
  assert.deepEqual(readPolicyTaints({ [PolicyTaintsAnnotation]: JSON.stringify([{ key: "a" }, rec("b", NS, "p", 1)]) }), [rec("b", NS, "p", 1)]);
  const c = cluster({ ready: "True", taints: [{ key: "a", effect: NS, timeAdded: at(1) }] });
  c.metadata.annotations = { [PolicyTaintsAnnotation]: "{not json" };
  const out = applyTaintPolicies(c, [notReadyAdds("p", [{ key: "a", effect: NS }])], NOW);
  assert.deepEqual(str(out.taints), [`a:NoSchedule@${at(1)}`], "without a record the taint is not the policy's");
  assert.equal(out.changed, true);
});

test("the event message is upstream's", () => {
  assert.equal(taintsMessage("member1", [{ key: "a", value: "v", effect: NS }, { key: "b", effect: NE }]), "Update Cluster(member1) with taints(a=v:NoSchedule,b:NoExecute) succeed");
});

test("the cluster controller never removes a taint a policy added, and removes its own as before", () => {
  const taints: Taint[] = [
    { ...NotReadyNoExecute, timeAdded: at(10) }, // a policy's (recorded)
    { ...NotReadyNoSchedule, timeAdded: at(5) }, // the cluster controller's
    { ...UnreachableNoExecute, timeAdded: at(20) }, // same key as a record, other timeAdded: not the policy's
  ];
  const c = cluster({ ready: "True", taints, records: [rec(NotReadyNoExecute.key!, NE, "evict-from-not-ready", 10), rec(UnreachableNoExecute.key!, NE, "p", 1)] });
  const plan = planTaints({ ready: cond("Ready", "True"), deleting: false, failover: true, failoverEvictionTimeoutMs: 300_000, now: NOW });
  const spared = sparePolicyTaints(plan, c);
  assert.deepEqual(spared.remove.map(taintString).sort(), [NotReadyNoSchedule, UnreachableNoExecute, UnreachableNoSchedule].map(taintString).sort());
  assert.deepEqual(spared.add, plan.add);
  const applied = applyTaintPlan(c.spec?.taints, spared, NOW);
  assert.deepEqual(applied?.taints.map(taintString), ["cluster.karmada.io/not-ready:NoExecute"]);
});

test("a plan is untouched on a cluster without policy taints", () => {
  const plan = planTaints({ ready: cond("Ready", "False"), deleting: false, failover: true, failoverEvictionTimeoutMs: 0, now: NOW });
  assert.equal(sparePolicyTaints(plan, cluster({ ready: "False", taints: [{ ...NotReadyNoSchedule, timeAdded: at(1) }] })), plan);
});
