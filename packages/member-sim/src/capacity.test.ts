import { test } from "node:test";
import assert from "node:assert/strict";
import { freeByNode, placePods, podRequests, summarize, unschedulableMessage, type NodeCapacity, type PodRequest } from "./capacity.js";

const Gi = 1024 ** 3;
const Mi = 1024 ** 2;
const node = (name: string, cpu: number, memGi: number, pods = 110): NodeCapacity => ({
  name,
  allocatable: { cpuMillis: cpu, memoryBytes: memGi * Gi, pods },
});

const requests: [string, Parameters<typeof podRequests>[0], PodRequest][] = [
  ["a spec without containers asks for nothing", {}, { cpuMillis: 0, memoryBytes: 0 }],
  ["a container without resources asks for nothing", { containers: [{}] }, { cpuMillis: 0, memoryBytes: 0 }],
  [
    "requests are summed over containers",
    {
      containers: [
        { resources: { requests: { cpu: "100m", memory: "128Mi" } } },
        { resources: { requests: { cpu: "1", memory: "1Gi" } } },
      ],
    },
    { cpuMillis: 1100, memoryBytes: 128 * Mi + Gi },
  ],
  ["a missing request falls back to the limit", { containers: [{ resources: { limits: { cpu: "500m", memory: "64Mi" } } }] }, { cpuMillis: 500, memoryBytes: 64 * Mi }],
  [
    "a request wins over a limit",
    { containers: [{ resources: { requests: { cpu: "200m" }, limits: { cpu: "2" } } }] },
    { cpuMillis: 200, memoryBytes: 0 },
  ],
  [
    "a larger init container raises the pod's request",
    {
      containers: [{ resources: { requests: { cpu: "100m", memory: "1Gi" } } }],
      initContainers: [{ resources: { requests: { cpu: "2", memory: "64Mi" } } }],
    },
    { cpuMillis: 2000, memoryBytes: Gi },
  ],
];
for (const [name, spec, want] of requests) {
  test(`requests: ${name}`, () => assert.deepEqual(podRequests(spec), want));
}

const r = (cpuMillis: number, memMi = 0): PodRequest => ({ cpuMillis, memoryBytes: memMi * Mi });

const placements: [string, NodeCapacity[], PodRequest[], (string | undefined)[]][] = [
  ["two 1-cpu nodes take one 600m pod each and the rest stay pending", [node("a", 1000, 4), node("b", 1000, 4)], [r(600), r(600), r(600), r(600)], ["a", "b", undefined, undefined]],
  ["pods spread to the least allocated node", [node("a", 4000, 8), node("b", 4000, 8)], [r(1000), r(1000), r(1000)], ["a", "b", "a"]],
  ["a pod goes to the node with more room", [node("small", 1000, 1), node("big", 8000, 32)], [r(500, 100)], ["big"]],
  ["a pod that fits exactly is placed", [node("a", 1000, 1)], [r(1000, 1024)], ["a"]],
  ["memory can be the limit", [node("a", 8000, 1)], [r(100, 600), r(100, 600)], ["a", undefined]],
  ["pod slots can be the limit", [node("a", 8000, 8, 2)], [r(0), r(0), r(0)], ["a", "a", undefined]],
  ["pods without requests still need a slot", [node("a", 0, 0, 1)], [r(0), r(0)], ["a", undefined]],
  ["no nodes means every pod is pending", [], [r(1)], [undefined]],
];
for (const [name, nodes, pods, want] of placements) {
  test(`place: ${name}`, () => {
    const free = freeByNode(nodes, []);
    assert.deepEqual(placePods(nodes, free, pods), want);
  });
}

test("place: a cordoned node takes no pods", () => {
  const nodes = [{ ...node("a", 8000, 8), unschedulable: true }, node("b", 1000, 1)];
  assert.deepEqual(placePods(nodes, freeByNode(nodes, []), [r(100), r(100)]), ["b", "b"]);
});

test("free: bound pods use their node's room, unbound and terminal pods do not", () => {
  const nodes = [node("a", 2000, 4)];
  const free = freeByNode(nodes, [
    { nodeName: "a", cpuMillis: 500, memoryBytes: Gi },
    { cpuMillis: 700, memoryBytes: Gi },
    { nodeName: "a", cpuMillis: 900, memoryBytes: Gi, terminal: true },
    { nodeName: "gone", cpuMillis: 900, memoryBytes: Gi },
  ]);
  assert.deepEqual(free.get("a"), { cpuMillis: 1500, memoryBytes: 3 * Gi, pods: 109 });
});

test("message: the unschedulable reason counts each shortage", () => {
  const nodes = [node("a", 1000, 1), node("b", 1000, 8)];
  assert.equal(unschedulableMessage(nodes, freeByNode(nodes, []), r(1500, 2048)), "0/2 nodes are available: 2 Insufficient cpu, 1 Insufficient memory.");
});

test("summary: allocatable sums the nodes, allocated the bound pods and allocating the unbound ones", () => {
  const s = summarize(
    [node("a", 1000, 4, 10), node("b", 2000, 4, 20)],
    [
      { nodeName: "a", cpuMillis: 600, memoryBytes: Mi },
      { nodeName: "b", cpuMillis: 600, memoryBytes: Mi },
      { cpuMillis: 600, memoryBytes: Mi },
      { nodeName: "a", cpuMillis: 100, memoryBytes: Mi, terminal: true },
    ],
  );
  assert.deepEqual(s, {
    allocatable: { cpuMillis: 3000, memoryBytes: 8 * Gi, pods: 30 },
    allocated: { cpuMillis: 1200, memoryBytes: 2 * Mi, pods: 2 },
    allocating: { cpuMillis: 600, memoryBytes: Mi, pods: 1 },
  });
});
