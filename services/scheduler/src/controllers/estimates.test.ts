import { test } from "node:test";
import assert from "node:assert/strict";
import { silentLogger } from "@flotilla/log";
import { binding, placements } from "../fixtures.test-support.js";
import { EstimateCache, type ReplicaEstimator } from "./estimates.js";
import { SchedulerMetrics } from "./metrics.js";

function fake(answer: () => Promise<Array<{ name: string; maxReplicas: number }>>) {
  const calls: Array<{ deadlineMs?: number }> = [];
  const e: ReplicaEstimator = { maxAvailableReplicas: async (_c, _r, o) => (calls.push(o ?? {}), answer()) };
  return { e, calls };
}

const dyn = binding("a", { replicas: 3, cpu: "100m", placement: placements.dynamic() });

test("one answer serves every binding shaped alike within the round, with the deadline passed on", async () => {
  let t = 0;
  const { e, calls } = fake(async () => [{ name: "member1", maxReplicas: 7 }]);
  const metrics = new SchedulerMetrics();
  const c = new EstimateCache(e, { deadlineMs: 250, ttlMs: 1000, retryAfterMs: 5000, log: silentLogger(), metrics, now: () => t });
  assert.deepEqual([...(await c.forBinding(dyn))!.replicas], [["member1", 7]]);
  await c.forBinding(binding("b", { replicas: 9, cpu: "100m", placement: placements.dynamic() }));
  assert.equal(calls.length, 1);
  assert.equal(calls[0].deadlineMs, 250);
  t = 1500;
  await c.forBinding(dyn);
  assert.equal(calls.length, 2, "a new round asks again");
  assert.equal(metrics.estimates.cached, 1);
});

test("an unreachable estimator falls back to the resource summaries and is left alone for a while", async () => {
  let t = 0;
  const { e, calls } = fake(async () => {
    throw Object.assign(new Error("14 UNAVAILABLE: No connection established"), { code: 14 });
  });
  const metrics = new SchedulerMetrics();
  const c = new EstimateCache(e, { deadlineMs: 250, ttlMs: 1000, retryAfterMs: 5000, log: silentLogger(), metrics, now: () => t });
  assert.equal(await c.forBinding(dyn), undefined);
  t = 2000;
  assert.equal(await c.forBinding(dyn), undefined);
  assert.equal(calls.length, 1);
  t = 6000;
  await c.forBinding(dyn);
  assert.equal(calls.length, 2);
  assert.equal(metrics.estimates.fallback, 1);
});

test("bindings whose schedule cannot depend on capacity do not ask", async () => {
  const { e, calls } = fake(async () => []);
  const c = new EstimateCache(e, { deadlineMs: 250, ttlMs: 1000, retryAfterMs: 5000, log: silentLogger(), metrics: new SchedulerMetrics() });
  assert.equal(await c.forBinding(binding("s", { replicas: 3 })), undefined);
  assert.equal(calls.length, 0);
});

test("each answer says when its member snapshot was taken, counted from the call's start", async () => {
  let t = 100_000;
  const e: ReplicaEstimator = {
    maxAvailableReplicas: async () => {
      t += 40; // the call takes a while: the age was measured during it
      return [
        { name: "fresh", maxReplicas: 5, snapshotAgeMs: 900 },
        { name: "stale", maxReplicas: 5, snapshotAgeMs: 31_000 },
        { name: "unsaid", maxReplicas: 5 },
      ];
    },
  };
  const c = new EstimateCache(e, { deadlineMs: 250, ttlMs: 1000, retryAfterMs: 5000, log: silentLogger(), metrics: new SchedulerMetrics(), now: () => t });
  const a = (await c.forBinding(dyn))!;
  assert.deepEqual([...a.replicas], [["fresh", 5], ["stale", 5], ["unsaid", 5]]);
  assert.deepEqual([...a.takenAt], [["fresh", 99_100], ["stale", 69_000], ["unsaid", 100_000]]);
});
