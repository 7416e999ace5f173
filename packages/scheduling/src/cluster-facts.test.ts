import { test } from "node:test";
import assert from "node:assert/strict";
import { clusterFacts, forgetCluster, snapshotFacts } from "./cluster-facts.js";
import { makeCluster } from "./fixtures.js";

test("facts are computed once per cluster object", () => {
  const c = makeCluster("a");
  assert.equal(clusterFacts(c), clusterFacts(c));
});

test("forgetting a cluster recomputes its facts", () => {
  const c = makeCluster("a", { pods: 10 });
  assert.equal(clusterFacts(c).allowedPods, 10);
  c.status!.resourceSummary!.allocatable!.pods = "20";
  assert.equal(clusterFacts(c).allowedPods, 10);
  forgetCluster(c);
  assert.equal(clusterFacts(c).allowedPods, 20);
});

const free: Array<[string, string, Record<string, string>, number]> = [
  ["free cpu is in millicores", "cpu", { cpu: "1500m" }, 6500],
  ["free memory is in bytes rounded up", "memory", { memory: "1Gi" }, 31 * 1024 ** 3],
  ["nothing left is 0", "cpu", { cpu: "9" }, 0],
  ["a resource that is not allocatable is -1", "nvidia.com/gpu", {}, -1],
];
for (const [name, key, allocated, want] of free) {
  test(name, () => assert.equal(clusterFacts(makeCluster("a", { cpu: "8", memory: "32Gi", allocated })).free(key), want));
}

test("API lookups answer by group version and kind", () => {
  const f = clusterFacts(makeCluster("a", { apis: ["apps/v1/Deployment", "batch/v1/Job"] }));
  assert.equal(f.apiListed("apps/v1", "Deployment"), true);
  assert.equal(f.apiListed("batch/v1", "Job"), true);
  assert.equal(f.apiListed("apps/v1", "Job"), false);
  assert.equal(f.apiListed("apps/v1", "Deployment"), true);
});

test("a snapshot array is re-checked entry by entry", () => {
  const list = [makeCluster("a"), makeCluster("b")];
  const first = snapshotFacts(list);
  assert.equal(snapshotFacts(list), first);
  list[1] = makeCluster("c");
  const second = snapshotFacts(list);
  assert.notEqual(second, first);
  assert.deepEqual(second.map((f) => f.name), ["a", "c"]);
  list.push(makeCluster("d"));
  assert.deepEqual(snapshotFacts(list).map((f) => f.name), ["a", "c", "d"]);
});
