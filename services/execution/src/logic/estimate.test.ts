import { test } from "node:test";
import assert from "node:assert/strict";
import { maxAvailableReplicas, nodeCapacities, nodeMaxReplicas, tolerates, type ReplicaRequirementsLike } from "./estimate.js";
import type { NodeLike, PodLike } from "@flotilla/member-apply";

const node = (name: string, cpu: string, memory: string, pods: number, o: { labels?: Record<string, string>; taints?: { key: string; value?: string; effect: string }[]; unschedulable?: boolean; ready?: boolean; extra?: Record<string, string> } = {}): NodeLike => ({
  metadata: { name, labels: o.labels ?? {} },
  spec: { unschedulable: o.unschedulable, taints: o.taints },
  status: { allocatable: { cpu, memory, pods: String(pods), ...(o.extra ?? {}) }, conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True" }] },
});
const pod = (nodeName: string | undefined, cpu: string, memory: string, phase = "Running"): PodLike => ({ spec: { nodeName, containers: [{ resources: { requests: { cpu, memory } } }] }, status: { phase } });

const NODES = [
  node("a", "4", "8Gi", 20, { labels: { disk: "ssd", zone: "z1" } }),
  node("b", "2", "4Gi", 3, { labels: { disk: "hdd", zone: "z2" } }),
  node("c", "8", "16Gi", 110, { unschedulable: true }),
  node("d", "16", "64Gi", 110, { taints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }], extra: { "nvidia.com/gpu": "2" } }),
  node("e", "16", "64Gi", 110, { ready: false }),
];
const PODS = [pod("a", "1", "1Gi"), pod("a", "2", "2Gi", "Succeeded"), pod(undefined, "4", "1Gi", "Pending"), pod("d", "15", "1Gi")];
const caps = nodeCapacities(NODES, PODS);
const half: ReplicaRequirementsLike = { resourceRequest: { cpu: "500m", memory: "1Gi" } };

const cases: [string, ReplicaRequirementsLike | undefined, number][] = [
  // a: min(3000/500, 7Gi/1Gi, 19) = 6; b: min(4, 4, 3) = 3; c cordoned; d tainted; e not ready
  ["per node, free cpu/memory divided by the request, capped by free pod slots, summed over schedulable nodes", half, 9],
  ["a node selector keeps only the matching nodes", { ...half, nodeClaim: { nodeSelector: { disk: "hdd" } } }, 3],
  ["node affinity In picks the listed values", { ...half, nodeClaim: { hardNodeAffinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["z1"] }] }] } } }, 6],
  ["node affinity terms are ORed", { ...half, nodeClaim: { hardNodeAffinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["z1"] }] }, { matchFields: [{ key: "metadata.name", operator: "In", values: ["b"] }] }] } } }, 9],
  ["an affinity term without requirements matches no node", { ...half, nodeClaim: { hardNodeAffinity: { nodeSelectorTerms: [{}] } } }, 0],
  ["tolerating the taint adds the tainted node", { ...half, nodeClaim: { tolerations: [{ key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" }] } }, 9 + 2],
  ["tolerating everything adds cordoned and not-ready nodes too", { ...half, nodeClaim: { tolerations: [{ operator: "Exists" }] } }, 9 + 16 + 2 + 32],
  ["a resource no node has gives zero", { resourceRequest: { "nvidia.com/gpu": "1" } }, 0],
  ["an extended resource counts where the node has it", { resourceRequest: { "nvidia.com/gpu": "1" }, nodeClaim: { tolerations: [{ key: "dedicated", operator: "Exists" }] } }, 2],
  ["without a request only free pod slots count", undefined, 19 + 3],
  ["a request bigger than any node gives zero", { resourceRequest: { cpu: "5" } }, 0],
];
for (const [name, req, want] of cases) test(name, () => assert.equal(maxAvailableReplicas(caps, req), want));

test("succeeded and failed pods hold nothing, pending ones are not on any node", () => {
  const a = caps.find((c) => c.name === "a")!;
  assert.deepEqual({ cpu: a.free.cpu, memory: a.free.memory, pods: a.freePods }, { cpu: 3000, memory: 7 * 2 ** 30, pods: 19 });
});

test("free resources never go below zero", () => {
  const [n] = nodeCapacities([node("x", "1", "1Gi", 10)], [pod("x", "2", "2Gi")]);
  assert.equal(n!.free.cpu, 0);
  assert.equal(nodeMaxReplicas(n!, { cpu: 100 }), 0);
});

const tolerationCases: [string, Parameters<typeof tolerates>[0], Parameters<typeof tolerates>[1], boolean][] = [
  ["Exists with no key tolerates any taint", { operator: "Exists" }, { key: "k", effect: "NoSchedule" }, true],
  ["Equal needs the same value", { key: "k", operator: "Equal", value: "v" }, { key: "k", value: "w", effect: "NoSchedule" }, false],
  ["an empty operator means Equal", { key: "k", value: "v" }, { key: "k", value: "v", effect: "NoExecute" }, true],
  ["a different effect does not tolerate", { key: "k", operator: "Exists", effect: "NoExecute" }, { key: "k", effect: "NoSchedule" }, false],
];
for (const [name, t, taint, want] of tolerationCases) test(`tolerations: ${name}`, () => assert.equal(tolerates(t, taint), want));
