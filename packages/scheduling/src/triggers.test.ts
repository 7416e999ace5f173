import { test } from "node:test";
import assert from "node:assert/strict";
import type { Placement } from "@flotilla/api";
import { divided, makeBinding, makeCluster, type BindingOptions } from "./fixtures.js";
import {
  APPLIED_PLACEMENT_ANNOTATION,
  bindingAffectedByCluster,
  clusterChangeMatters,
  isResponsibleFor,
  needsSchedule,
  placementChanged,
  replicasChanged,
  semanticEqual,
  type TriggerDecision,
} from "./triggers.js";

const dyn: Placement = { clusterAffinity: { clusterNames: ["a", "b"] }, replicaScheduling: divided.dynamic() };
const terms: Placement = {
  replicaScheduling: divided.dynamic(),
  clusterAffinities: [
    { affinityName: "one", clusterNames: ["a"] },
    { affinityName: "two", clusterNames: ["b"] },
  ],
};
const json = (p: Placement): string => JSON.stringify(p);

const placements: Array<[string, Placement, string | undefined, string | undefined, boolean]> = [
  ["a missing applied placement counts as changed", dyn, undefined, undefined, true],
  ["an identical applied placement is unchanged", dyn, json(dyn), undefined, false],
  ["an undecodable annotation counts as unchanged", dyn, "{not json", undefined, false],
  ["a changed cluster affinity is a change", dyn, json({ ...dyn, clusterAffinity: { clusterNames: ["a"] } }), undefined, true],
  ["changed tolerations are a change", dyn, json({ ...dyn, clusterTolerations: [{ key: "k", operator: "Exists" }] }), undefined, true],
  ["changed spread constraints are a change", dyn, json({ ...dyn, spreadConstraints: [{ spreadByField: "cluster", maxGroups: 1 }] }), undefined, true],
  ["a changed replica scheduling is a change", dyn, json({ ...dyn, replicaScheduling: divided.aggregated() }), undefined, true],
  ["empty lists equal absent ones", { ...dyn, clusterTolerations: [] }, json(dyn), undefined, false],
  ["with only the affinity list differing, an unobserved term name is a change", terms, json({ ...terms, clusterAffinities: [terms.clusterAffinities![0]] }), undefined, true],
  ["a change to a term other than the observed one is not a change", terms, json({ ...terms, clusterAffinities: [terms.clusterAffinities![0], { affinityName: "two", clusterNames: ["c"] }] }), "one", false],
  ["a change to the observed term is a change", terms, json({ ...terms, clusterAffinities: [{ affinityName: "one", clusterNames: ["z"] }, terms.clusterAffinities![1]] }), "one", true],
  ["the observed term missing on one side is a change", terms, json({ ...terms, clusterAffinities: [terms.clusterAffinities![1]] }), "one", true],
];
for (const [name, placement, applied, observed, want] of placements) {
  test(name, () => assert.equal(placementChanged(placement, applied, observed), want));
}

const replicas: Array<[string, BindingOptions, boolean]> = [
  ["no replica scheduling never counts as a replica change", { replicas: 3, clusters: { a: 1 } }, false],
  ["Duplicated with a target off the replica count is a change", { replicas: 3, placement: { replicaScheduling: divided.duplicated() }, clusters: { a: 3, b: 2 } }, true],
  ["Duplicated with every target at the replica count is not a change", { replicas: 3, placement: { replicaScheduling: divided.duplicated() }, clusters: { a: 3, b: 3 } }, false],
  ["Divided with a different sum is a change", { replicas: 5, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 3, b: 1 } }, true],
  ["Divided with the same sum is not a change", { replicas: 4, placement: { replicaScheduling: divided.dynamic() }, clusters: { a: 3, b: 1 } }, false],
];
for (const [name, o, want] of replicas) {
  test(name, () => assert.equal(replicasChanged(makeBinding(o).spec!), want));
}

const applied = (p: Placement): Record<string, string> => ({ [APPLIED_PLACEMENT_ANNOTATION]: json(p) });
const steady: BindingOptions = { replicas: 4, placement: dyn, clusters: { a: 2, b: 2 }, annotations: applied(dyn), status: { lastScheduledTime: "2026-01-01T00:00:00Z" } };

const triggers: Array<[string, BindingOptions, ReturnType<typeof makeCluster>[], TriggerDecision]> = [
  ["a first schedule fires placementChanged", { replicas: 4, placement: dyn }, [], { schedule: true, trigger: "placementChanged" }],
  ["a settled binding needs nothing", steady, [makeCluster("a"), makeCluster("b")], { schedule: false }],
  ["a scaled binding fires replicasChanged", { ...steady, replicas: 6 }, [], { schedule: true, trigger: "replicasChanged" }],
  ["a newer rescheduleTriggeredAt fires rescheduleTriggered", { ...steady, rescheduleTriggeredAt: "2026-01-02T00:00:00Z" }, [], { schedule: true, trigger: "rescheduleTriggered" }],
  ["an older rescheduleTriggeredAt does nothing", { ...steady, rescheduleTriggeredAt: "2025-12-31T00:00:00Z" }, [], { schedule: false }],
  ["a non-workload is always scheduled", { ...steady, replicas: 0, clusters: { a: 0, b: 0 } }, [], { schedule: true, trigger: "alwaysSchedule" }],
  [
    "a Duplicated binding is always scheduled",
    { ...steady, placement: { replicaScheduling: divided.duplicated() }, annotations: applied({ replicaScheduling: divided.duplicated() }), clusters: { a: 4 } },
    [],
    { schedule: true, trigger: "alwaysSchedule" },
  ],
  ["a target cluster being deleted fires targetClusterDeleting", steady, [makeCluster("a", { deleting: true }), makeCluster("b")], { schedule: true, trigger: "targetClusterDeleting" }],
  ["a deleting cluster the binding does not use does nothing", steady, [makeCluster("c", { deleting: true })], { schedule: false }],
  [
    "a move-back surge (5 placed for 4) is left alone",
    { ...steady, clusters: { a: 2, b: 2, c: 1 }, annotations: { ...applied(dyn), "failover.flotilla.io/move-back-surge": '{"replicas":4}' } },
    [],
    { schedule: false },
  ],
  [
    "a surge recorded for another replica count is over: replicasChanged",
    { ...steady, replicas: 6, clusters: { a: 2, b: 2, c: 1 }, annotations: { ...applied(dyn), "failover.flotilla.io/move-back-surge": '{"replicas":4}' } },
    [],
    { schedule: true, trigger: "replicasChanged" },
  ],
  [
    "a policy change during a surge still reschedules",
    { ...steady, clusters: { a: 2, b: 2, c: 1 }, annotations: { ...applied({ ...dyn, clusterAffinity: { clusterNames: ["a"] } }), "failover.flotilla.io/move-back-surge": '{"replicas":4}' } },
    [],
    { schedule: true, trigger: "placementChanged" },
  ],
];
for (const [name, o, clusters, want] of triggers) {
  test(name, () => assert.deepEqual(needsSchedule(makeBinding(o), clusters), want));
}

test("a binding without placement cannot be scheduled", () => {
  const b = makeBinding({ replicas: 1 });
  delete b.spec!.placement;
  assert.deepEqual(needsSchedule(b, []), { schedule: false, error: "failed to get placement from resourceBinding(default/nginx-deployment)" });
});

test("semantic equality ignores empty strings, zeros and empty collections", () => {
  assert.equal(semanticEqual({ a: "", b: [], c: {}, d: 0, e: false, f: null }, {}), true);
  assert.equal(semanticEqual({ a: [1, 2] }, { a: [2, 1] }), false);
});

const responsibility: Array<[string, Record<string, string>, Record<string, unknown>, boolean]> = [
  ["a binding claimed by a PropagationPolicy is ours", { "propagationpolicy.karmada.io/permanent-id": "x" }, {}, true],
  ["a binding claimed by a ClusterPropagationPolicy is ours", { "clusterpropagationpolicy.karmada.io/permanent-id": "x" }, {}, true],
  ["a binding managed by another controller is ours", { "binding.karmada.io/managed-by": "x" }, {}, true],
  ["an unclaimed binding is not ours", {}, {}, false],
  [
    "an attached binding (a dependency's, clusters from requiredBy, no policy label) is not ours",
    { "resourcebinding.karmada.io/depended-by-5dbb6dc9c8": "x", "resourcebinding.karmada.io/permanent-id": "y" },
    { requiredBy: [{ namespace: "test", name: "test-binding", clusters: [{ name: "a" }] }] },
    false,
  ],
  ["another scheduler's binding is not ours", { "binding.karmada.io/managed-by": "x" }, { schedulerName: "other" }, false],
  ["a binding suspended for scheduling is not ours", { "binding.karmada.io/managed-by": "x" }, { suspension: { scheduling: true } }, false],
];
for (const [name, labels, spec, want] of responsibility) {
  test(name, () => {
    const b = makeBinding({ replicas: 1 });
    b.metadata.labels = labels;
    Object.assign(b.spec!, spec);
    assert.equal(isResponsibleFor(b), want);
  });
}

test("a label change on a cluster matters but a status change does not", () => {
  const before = makeCluster("a", { labels: { x: "1" } });
  assert.equal(clusterChangeMatters(before, makeCluster("a", { labels: { x: "2" } })), true);
  assert.equal(clusterChangeMatters(before, makeCluster("a", { labels: { x: "1" }, pods: 3 })), false);
  assert.equal(clusterChangeMatters(before, makeCluster("a", { labels: { x: "1" }, deleting: true })), true);
});

const affected: Array<[string, Placement, BindingOptions["status"], string, boolean]> = [
  ["a binding without affinity is affected by any cluster", {}, undefined, "z", true],
  ["a binding whose affinity matches the cluster is affected", dyn, undefined, "a", true],
  ["a binding whose affinity excludes the cluster is not affected", dyn, undefined, "z", false],
  ["an affinity list not yet observed is always affected", terms, undefined, "z", true],
  ["an observed affinity term decides", terms, { schedulerObservingAffinityName: "two" }, "a", false],
];
for (const [name, placement, status, cluster, want] of affected) {
  test(name, () => assert.equal(bindingAffectedByCluster(makeBinding({ replicas: 1, placement, status }), makeCluster(cluster)), want));
}
