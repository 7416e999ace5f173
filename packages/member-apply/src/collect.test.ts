import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_INT64_QUANTITY, type ResourceModel } from "@flotilla/api";
import type { MemberClient } from "@flotilla/kube";
import { collectClusterStatus, type ClusterStatus } from "./collect.js";

const MODELS: ResourceModel[] = [
  { grade: 0, ranges: [{ name: "cpu", min: "0", max: "2" }] },
  { grade: 1, ranges: [{ name: "cpu", min: "2", max: MAX_INT64_QUANTITY }] },
];

/** A member with two 4-cpu nodes, one of them running a 3-cpu pod; `failPods` makes the pod list fail. */
function member(o: { failPods?: boolean } = {}): MemberClient {
  const nodes = ["a", "b"].map((name) => ({ metadata: { name }, status: { allocatable: { cpu: "4", memory: "8Gi", pods: "110" }, conditions: [{ type: "Ready", status: "True" }] } }));
  const pods = [{ metadata: { name: "p" }, spec: { nodeName: "a", containers: [{ resources: { requests: { cpu: "3" } } }] }, status: { phase: "Running" } }];
  return {
    version: async () => ({ gitVersion: "v1.29.0" }),
    discovery: async () => ({ enablements: [{ groupVersion: "v1", resources: [{ name: "pods", kind: "Pod" }] }], complete: true }),
    listNodes: async () => ({ items: nodes }),
    listPods: async () => {
      if (o.failPods) throw new Error("member unreachable");
      return { items: pods };
    },
  } as unknown as MemberClient;
}

const collect = (client: MemberClient, status: ClusterStatus, resourceModels?: ResourceModel[]) =>
  collectClusterStatus(client, status, { timeoutMs: 1000, signal: new AbortController().signal, now: new Date("2026-01-01T00:00:00Z"), discoveryRefreshMs: 60_000, resourceModels });

const stale = { allocatable: { cpu: "1" }, allocatableModelings: [{ grade: 0, count: 9 }] };

test("with resource models the summary carries the nodes per grade", async () => {
  const { status } = await collect(member(), {}, MODELS);
  assert.deepEqual(status.resourceSummary?.allocatableModelings, [
    { grade: 0, count: 1 },
    { grade: 1, count: 1 },
  ]);
  assert.deepEqual(status.resourceSummary?.allocatable, { cpu: "8", memory: "16Gi", pods: "220" });
});

test("without resource models the summary carries no modelings, and stale ones are dropped", async () => {
  const { status } = await collect(member(), { resourceSummary: stale });
  assert.equal(status.resourceSummary?.allocatableModelings, undefined);
  assert.equal(status.resourceSummary?.allocatable?.cpu, "8");
});

test("models removed while the member's pods cannot be listed: the stale counts still go", async () => {
  const { status } = await collect(member({ failPods: true }), { resourceSummary: stale });
  assert.deepEqual(status.resourceSummary, { allocatable: { cpu: "1" } });
});

test("with models and the pods unreadable the last counts stay, as the rest of the summary does", async () => {
  const { status } = await collect(member({ failPods: true }), { resourceSummary: stale }, MODELS);
  assert.deepEqual(status.resourceSummary, stale);
});
