import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster, ReplicaRequirements } from "@flotilla/api";
import { allocatableReplicas, allowedPods, assumedReplicas, compileRequest, estimateByResourceModels, generalEstimate } from "./estimator.js";
import { makeBinding, makeCluster } from "./fixtures.js";
import { MAX_INT32 } from "./types.js";

const req = (resourceRequest: Record<string, string>): ReplicaRequirements => ({ resourceRequest });

function modelled(counts: number[], allocatable: Record<string, string> = { pods: "1000", cpu: "100", memory: "1Ti" }): Cluster {
  const c = makeCluster("m");
  c.spec!.resourceModels = [
    { grade: 0, ranges: [{ name: "cpu", min: "0", max: "1" }, { name: "memory", min: "0", max: "4Gi" }] },
    { grade: 1, ranges: [{ name: "cpu", min: "1", max: "2" }, { name: "memory", min: "4Gi", max: "16Gi" }] },
    { grade: 2, ranges: [{ name: "cpu", min: "2", max: "4" }, { name: "memory", min: "16Gi", max: "32Gi" }] },
  ];
  c.status!.resourceSummary = { allocatable, allocatableModelings: counts.map((count, grade) => ({ grade, count })) };
  return c;
}

const general: Array<[string, Cluster, ReplicaRequirements | undefined, number]> = [
  ["a cluster without a resource summary takes nothing", makeCluster("c", { summary: false }), undefined, 0],
  ["without requirements the bound is the free pods", makeCluster("c", { pods: 110 }), undefined, 110],
  ["allocated and allocating pods are subtracted", makeCluster("c", { pods: 110, allocated: { pods: "100" }, allocating: { pods: "5" } }), undefined, 5],
  ["more pods in use than allocatable leaves nothing", makeCluster("c", { pods: 10, allocated: { pods: "20" } }), req({ cpu: "1" }), 0],
  ["cpu is divided in millicores", makeCluster("c", { cpu: "2", pods: 110 }), req({ cpu: "300m" }), 6],
  ["memory is divided in bytes", makeCluster("c", { memory: "1Gi", pods: 110 }), req({ memory: "300Mi" }), 3],
  ["the smallest bound over resources wins", makeCluster("c", { cpu: "8", memory: "1Gi" }), req({ cpu: "1", memory: "512Mi" }), 2],
  ["free pods bound the resources", makeCluster("c", { cpu: "100", pods: 4 }), req({ cpu: "1" }), 4],
  ["a requested resource missing from allocatable gives 0", makeCluster("c"), req({ "nvidia.com/gpu": "1" }), 0],
  ["a zero request is ignored", makeCluster("c", { pods: 7 }), req({ cpu: "0" }), 7],
  ["nothing left of a resource gives 0", makeCluster("c", { cpu: "2", allocated: { cpu: "1500m" }, allocating: { cpu: "500m" } }), req({ cpu: "100m" }), 0],
  ["allocated and allocating resources are subtracted exactly", makeCluster("c", { cpu: "2", allocated: { cpu: "1100m" }, allocating: { cpu: "400m" } }), req({ cpu: "250m" }), 2],
  ["requirements without requests fall back to the free pods", makeCluster("c", { pods: 9 }), {}, 9],
  ["resource models bound the estimate when the cluster reports them", modelled([0, 2, 1]), req({ cpu: "1", memory: "2Gi" }), 2 * 1 + 1 * 2],
  ["resource models are capped by the free pods", modelled([0, 0, 10], { pods: "5", cpu: "100", memory: "1Ti" }), req({ cpu: "1" }), 5],
];
for (const [name, cluster, requirements, want] of general) {
  test(name, () => assert.equal(generalEstimate(cluster, requirements), want));
}

const models: Array<[string, number[], Record<string, string>, number | undefined]> = [
  ["each model node holds as many replicas as its minimums allow", [0, 3, 0], { cpu: "500m" }, 3 * 2],
  ["grades too small for the request contribute nothing", [5, 0, 1], { cpu: "1500m" }, 1],
  ["a request smaller than every minimum is limited by 110 pods per node", [0, 1, 0], { cpu: "1m" }, 110],
  ["grade 0 with zero minimums fits nothing that requests resources", [4, 0, 0], { cpu: "100m" }, 0],
  ["no request at all fills every node with 110 pods", [1, 1, 0], {}, 220],
  ["a requested resource the models do not describe fits nowhere", [0, 1, 1], { "nvidia.com/gpu": "1" }, 0],
];
for (const [name, counts, request, want] of models) {
  test(name, () => assert.equal(estimateByResourceModels(modelled(counts), request), want));
}

test("a cluster without resource models has no model estimate", () => {
  assert.equal(estimateByResourceModels(makeCluster("c"), { cpu: "1" }), undefined);
});

test("a negative node count makes the models inapplicable", () => {
  assert.equal(estimateByResourceModels(modelled([0, -1, 0]), { cpu: "1" }), undefined);
});

test("allowed pods are never negative", () => {
  assert.equal(allowedPods(makeCluster("c", { pods: 1, allocated: { pods: "3" } })), 0);
});

const clusters = [makeCluster("a", { pods: 10 }), makeCluster("b", { pods: 20 }), makeCluster("c", { summary: false })];

test("a non-workload is unbounded everywhere", () => {
  assert.deepEqual(allocatableReplicas(clusters, makeBinding({ replicas: 0 }).spec!), [MAX_INT32, MAX_INT32, MAX_INT32]);
});

test("the general estimator bounds each cluster by its summary", () => {
  assert.deepEqual(allocatableReplicas(clusters, makeBinding({ replicas: 5 }).spec!), [10, 20, 0]);
});

test("external estimates lower the bound but never raise it", () => {
  const estimates = new Map([["a", 3], ["b", 50], ["c", 4]]);
  assert.deepEqual(allocatableReplicas(clusters, makeBinding({ replicas: 5 }).spec!, { estimates }), [3, 20, 0]);
});

test("a negative external estimate is ignored", () => {
  assert.deepEqual(allocatableReplicas(clusters, makeBinding({ replicas: 5 }).spec!, { estimates: new Map([["a", -1]]) }), [10, 20, 0]);
});

test("without the general estimator an unanswered cluster is bounded by the replicas", () => {
  const estimates = new Map([["a", 3]]);
  assert.deepEqual(allocatableReplicas(clusters, makeBinding({ replicas: 5 }).spec!, { estimates, general: false }), [3, 5, 5]);
});

const load = (pods: number, resources: Record<string, number> = {}) => ({ pods, resources });

const withAssumed: Array<[string, Cluster, Record<string, string> | undefined, ReturnType<typeof load>, number]> = [
  ["assumed pods come off the free pods", makeCluster("c", { pods: 10 }), undefined, load(4), 6],
  ["assumed cpu comes off the free cpu before dividing", makeCluster("c", { cpu: "2", pods: 110 }), { cpu: "300m" }, load(2, { cpu: 600 }), 4],
  ["an assumed load larger than the cluster leaves nothing", makeCluster("c", { cpu: "1", pods: 110 }), { cpu: "100m" }, load(20, { cpu: 2000 }), 0],
  ["an assumed resource the binding does not request only costs its pods", makeCluster("c", { cpu: "8", pods: 10 }), { cpu: "1" }, load(3, { memory: 1e12 }), 7],
  ["resource models lose the assumed replicas", modelled([0, 2, 0]), { cpu: "1", memory: "2Gi" }, load(1, { cpu: 1000, memory: 2 * 2 ** 30 }), 1],
];
for (const [name, cluster, request, assumed, want] of withAssumed) {
  test(name, () => {
    const spec = makeBinding({ replicas: 3, resourceRequest: request }).spec!;
    assert.deepEqual(allocatableReplicas([cluster], spec, { assumed: new Map([["c", assumed], ["m", assumed]]) }), [want]);
  });
}

const displaced: Array<[string, ReturnType<typeof load> | undefined, Record<string, string> | undefined, number]> = [
  ["no load displaces nothing", undefined, { cpu: "100m" }, 0],
  ["without a request only the pods count", load(5, { cpu: 5000 }), undefined, 5],
  ["a resource displaces its load divided by the request, rounded up", load(1, { cpu: 250 }), { cpu: "100m" }, 3],
  ["the largest displacement over pods and resources wins", load(7, { cpu: 250, memory: 1 }), { cpu: "100m", memory: "1Gi" }, 7],
];
for (const [name, l, request, want] of displaced) {
  test(name, () => assert.equal(assumedReplicas(l, request ? compileRequest(request) : undefined), want));
}

test("an external estimate loses the assumed replicas of this binding's size", () => {
  const spec = makeBinding({ replicas: 5, resourceRequest: { cpu: "100m" } }).spec!;
  const big = [makeCluster("a", { cpu: "100", pods: 1000 }), makeCluster("b", { cpu: "100", pods: 1000 })];
  const estimates = new Map([["a", 40], ["b", 40]]);
  const assumed = new Map([["a", load(3, { cpu: 300 })]]);
  assert.deepEqual(allocatableReplicas(big, spec, { estimates, assumed }), [37, 40]);
  assert.deepEqual(allocatableReplicas(big, spec, { estimates, assumed: new Map([["a", load(50, { cpu: 5000 })]]) }), [0, 40]);
});

test("an empty assumed map changes nothing", () => {
  const spec = makeBinding({ replicas: 5 }).spec!;
  assert.deepEqual(allocatableReplicas(clusters, spec, { assumed: new Map() }), allocatableReplicas(clusters, spec));
});
