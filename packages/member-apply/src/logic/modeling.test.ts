import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_INT64_QUANTITY, defaultResourceModels, type ResourceModel } from "@flotilla/api";
import { allocatableModelings } from "./modeling.js";
import type { NodeLike, PodLike } from "./resources.js";

const MAX = MAX_INT64_QUANTITY;
const node = (name: string, allocatable: Record<string, string>): NodeLike => ({ metadata: { name }, status: { allocatable: { pods: "110", ...allocatable } } });
const pod = (nodeName: string | undefined, requests: Record<string, string>, phase = nodeName ? "Running" : "Pending"): PodLike => ({
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ resources: { requests } }] },
  status: { phase },
});

/** cpu only: [0,1) [1,2) [2,4) [4,∞) */
const CPU: ResourceModel[] = [
  { grade: 0, ranges: [{ name: "cpu", min: "0", max: "1" }] },
  { grade: 1, ranges: [{ name: "cpu", min: "1", max: "2" }] },
  { grade: 2, ranges: [{ name: "cpu", min: "2", max: "4" }] },
  { grade: 3, ranges: [{ name: "cpu", min: "4", max: MAX }] },
];
/** memory only: [0,4Gi) [4Gi,16Gi) [16Gi,∞) */
const MEM: ResourceModel[] = [
  { grade: 0, ranges: [{ name: "memory", min: "0", max: "4Gi" }] },
  { grade: 1, ranges: [{ name: "memory", min: "4Gi", max: "16Gi" }] },
  { grade: 2, ranges: [{ name: "memory", min: "16Gi", max: MAX }] },
];
const DEFAULTS = defaultResourceModels();

const cases: Array<[name: string, models: ResourceModel[], nodes: NodeLike[], pods: PodLike[], counts: number[]]> = [
  ["an idle node is graded by its allocatable (8 cpu, 32Gi: the 32Gi grade, 3)", DEFAULTS, [node("a", { cpu: "8", memory: "32Gi" })], [], [0, 0, 0, 1, 0, 0, 0, 0, 0]],
  ["the lowest grade over the resources wins (64 cpu but 2Gi: grade 0)", DEFAULTS, [node("a", { cpu: "64", memory: "2Gi" })], [], [1, 0, 0, 0, 0, 0, 0, 0, 0]],
  ["a huge node lands in the last grade", DEFAULTS, [node("a", { cpu: "256", memory: "2Ti" })], [], [0, 0, 0, 0, 0, 0, 0, 0, 1]],
  ["nodes are counted per grade", CPU, [node("a", { cpu: "500m" }), node("b", { cpu: "1" }), node("c", { cpu: "3" }), node("d", { cpu: "3500m" }), node("e", { cpu: "16" })], [], [1, 1, 2, 1]],
  ["a grade's minimum is inclusive: exactly 4 cpu is grade 3", CPU, [node("a", { cpu: "4" })], [], [0, 0, 0, 1]],
  ["the requests of the node's pods are subtracted", CPU, [node("a", { cpu: "8" })], [pod("a", { cpu: "5" })], [0, 0, 1, 0]],
  ["millicores are exact: 4 cpu less 1m falls to grade 2", CPU, [node("a", { cpu: "4" })], [pod("a", { cpu: "1m" })], [0, 0, 1, 0]],
  ["the requests of several pods on one node add up", CPU, [node("a", { cpu: "4" })], [pod("a", { cpu: "1500m" }), pod("a", { cpu: "600m" })], [0, 1, 0, 0]],
  ["memory is exact to the byte: 16Gi less one byte falls to grade 1", MEM, [node("a", { memory: "16Gi" })], [pod("a", { memory: "1" })], [0, 1, 0]],
  ["decimal and binary memory compare exactly (17179869184 is 16Gi)", MEM, [node("a", { memory: "17179869184" })], [], [0, 0, 1]],
  ["a pod not bound to a node takes nothing from any node", CPU, [node("a", { cpu: "4" })], [pod(undefined, { cpu: "3" })], [0, 0, 0, 1]],
  ["succeeded and failed pods take nothing", CPU, [node("a", { cpu: "4" })], [pod("a", { cpu: "3" }, "Succeeded"), pod("a", { cpu: "3" }, "Failed")], [0, 0, 0, 1]],
  ["a pod bound to another node takes nothing from this one", CPU, [node("a", { cpu: "4" }), node("b", { cpu: "4" })], [pod("b", { cpu: "3" })], [0, 1, 0, 1]],
  ["a limit stands in for a missing request", CPU, [node("a", { cpu: "4" })], [{ spec: { nodeName: "a", containers: [{ resources: { limits: { cpu: "3" } } }] }, status: { phase: "Running" } }], [0, 1, 0, 0]],
  ["an overcommitted node (less than nothing left) fits no grade and is not counted", CPU, [node("a", { cpu: "1" }), node("b", { cpu: "1" })], [pod("a", { cpu: "2" })], [0, 1, 0, 0]],
  [
    "a node whose pods fill its pod slots is not counted, and the nodes after it still are",
    CPU,
    [node("a", { cpu: "8" }), node("b", { cpu: "8", pods: "2" }), node("c", { cpu: "8" })],
    [pod("b", { cpu: "100m" }), pod("b", { cpu: "100m" })],
    [0, 0, 0, 2],
  ],
  ["a node with pods and no pod slots listed is not counted", CPU, [{ metadata: { name: "a" }, status: { allocatable: { cpu: "8" } } }], [pod("a", { cpu: "1" })], [0, 0, 0, 0]],
  ["a node without pods is counted even without pod slots listed", CPU, [{ metadata: { name: "a" }, status: { allocatable: { cpu: "8" } } }], [], [0, 0, 0, 1]],
  ["a resource the node does not list counts as 0", CPU, [node("a", { memory: "64Gi" })], [], [1, 0, 0, 0]],
  ["an allocatable that is not a quantity counts as 0", CPU, [node("a", { cpu: "lots" })], [], [1, 0, 0, 0]],
  [
    "resources are compared in the models' order and the lowest index wins",
    [
      { grade: 0, ranges: [{ name: "memory", min: "0", max: "4Gi" }, { name: "cpu", min: "0", max: "2" }] },
      { grade: 1, ranges: [{ name: "memory", min: "4Gi", max: MAX }, { name: "cpu", min: "2", max: MAX }] },
    ],
    [node("a", { cpu: "1", memory: "8Gi" }), node("b", { cpu: "4", memory: "8Gi" }), node("c", { cpu: "4", memory: "1Gi" })],
    [],
    [2, 1],
  ],
  ["no nodes: every grade counts 0", DEFAULTS, [], [], [0, 0, 0, 0, 0, 0, 0, 0, 0]],
];

for (const [name, models, nodes, pods, counts] of cases) {
  test(name, () => {
    const got = allocatableModelings(models, nodes, pods);
    assert.deepEqual(got, models.map((m, i) => ({ grade: m.grade, count: counts[i] })));
  });
}

test("each entry carries its model's grade, in the models' order, zeros included", () => {
  const models: ResourceModel[] = [
    { grade: 2, ranges: [{ name: "cpu", min: "0", max: "4" }] },
    { grade: 7, ranges: [{ name: "cpu", min: "4", max: MAX }] },
  ];
  assert.deepEqual(allocatableModelings(models, [node("a", { cpu: "2" })], []), [
    { grade: 2, count: 1 },
    { grade: 7, count: 0 },
  ]);
});

test("a model without a grade is grade 0", () => {
  assert.deepEqual(allocatableModelings([{ ranges: [{ name: "cpu", min: "0", max: MAX }] }], [node("a", { cpu: "2" })], []), [{ grade: 0, count: 1 }]);
});

test("without models there are no modelings", () => {
  assert.equal(allocatableModelings(undefined, [node("a", { cpu: "2" })], []), undefined);
  assert.equal(allocatableModelings([], [node("a", { cpu: "2" })], []), undefined);
});

test("models whose first grade has no ranges give no modelings", () => {
  assert.equal(allocatableModelings([{ grade: 0, ranges: [] }], [node("a", { cpu: "2" })], []), undefined);
});
