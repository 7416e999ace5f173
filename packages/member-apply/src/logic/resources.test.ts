import { test } from "node:test";
import assert from "node:assert/strict";
import { nodeSummary, podRequests, resourceSummary, type NodeLike, type PodLike } from "./resources.js";

const node = (name: string, cpu: string, memory: string, pods: string, ready = true): NodeLike => ({
  metadata: { name },
  status: { allocatable: { cpu, memory, pods }, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});
const pod = (cpu: string | undefined, memory: string | undefined, o: { nodeName?: string; phase?: string; limitsOnly?: boolean } = {}): PodLike => {
  const res: Record<string, string> = {};
  if (cpu) res.cpu = cpu;
  if (memory) res.memory = memory;
  return { spec: { nodeName: o.nodeName, containers: [{ resources: o.limitsOnly ? { limits: res } : { requests: res } }] }, status: { phase: o.phase ?? (o.nodeName ? "Running" : "Pending") } };
};

const cases: [string, PodLike, Record<string, number>][] = [
  ["a pod's requests are the sum over its containers", { spec: { containers: [{ resources: { requests: { cpu: "100m", memory: "64Mi" } } }, { resources: { requests: { cpu: "0.5", memory: "1Gi" } } }] } }, { cpu: 600, memory: 64 * 2 ** 20 + 2 ** 30 }],
  ["a missing request falls back to the limit", pod("250m", "128Mi", { limitsOnly: true }), { cpu: 250, memory: 128 * 2 ** 20 }],
  ["a bigger init container raises the request", { spec: { containers: [{ resources: { requests: { cpu: "100m" } } }], initContainers: [{ resources: { requests: { cpu: "1" } } }] } }, { cpu: 1000 }],
  ["pod overhead is added", { spec: { containers: [{ resources: { requests: { cpu: "100m" } } }], overhead: { cpu: "10m" } } }, { cpu: 110 }],
];
for (const [name, p, want] of cases) test(name, () => assert.deepEqual(podRequests(p), want));

test("the resource summary sums node allocatable, counts bound live pods as allocated and unbound ones as allocating", () => {
  const nodes = [node("a", "4", "8Gi", "20"), node("b", "2500m", "4Gi", "10", false)];
  const pods = [
    pod("1", "1Gi", { nodeName: "a" }),
    pod("500m", "512Mi", { nodeName: "b" }),
    pod("2", "2Gi", { nodeName: "a", phase: "Succeeded" }),
    pod("3", "1Gi", { nodeName: "a", phase: "Failed" }),
    pod("8", "1Gi"),
  ];
  assert.deepEqual(resourceSummary(nodes, pods), {
    allocatable: { cpu: "6500m", memory: "12Gi", pods: "30" },
    allocated: { cpu: "1500m", memory: "1536Mi", pods: "2" },
    allocating: { cpu: "8", memory: "1Gi", pods: "1" },
  });
});

test("an idle cluster has empty allocated and allocating lists", () => {
  assert.deepEqual(resourceSummary([node("a", "1", "1Gi", "10")], []), { allocatable: { cpu: "1", memory: "1Gi", pods: "10" }, allocated: {}, allocating: {} });
});

test("the node summary counts all nodes and the Ready ones", () => {
  assert.deepEqual(nodeSummary([node("a", "1", "1Gi", "1"), node("b", "1", "1Gi", "1", false), node("c", "1", "1Gi", "1")]), { totalNum: 3, readyNum: 2 });
});
