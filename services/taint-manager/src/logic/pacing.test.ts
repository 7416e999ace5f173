import { test } from "node:test";
import assert from "node:assert/strict";
import { TokenBucket, evictionRate } from "./pacing.js";

const cfg = { rate: 1000, secondaryRate: 1, unhealthyThreshold: 0.55 };
const rates: Array<[string, { total: number; unhealthy: number }, number]> = [
  ["one unhealthy cluster out of three evicts at the primary rate", { total: 3, unhealthy: 1 }, 1000],
  ["exactly the threshold share still evicts at the primary rate", { total: 100, unhealthy: 55 }, 1000],
  ["more than the threshold share unhealthy drops to the secondary rate", { total: 3, unhealthy: 2 }, 1],
  ["every cluster unhealthy (a control-plane network cut) drops to the secondary rate", { total: 10, unhealthy: 10 }, 1],
  ["an empty fleet evicts at the primary rate", { total: 0, unhealthy: 0 }, 1000],
];
for (const [name, fleet, want] of rates) test(name, () => assert.equal(evictionRate(fleet, cfg), want));

test("a full bucket lets one second's worth of evictions through at once, then paces the rest", () => {
  const b = new TokenBucket(10, 0);
  const waits = Array.from({ length: 12 }, () => b.reserve(10, 0));
  assert.deepEqual(waits, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 200]);
});

test("tokens come back with time, up to one second's worth", () => {
  const b = new TokenBucket(10, 0);
  for (let i = 0; i < 10; i++) b.reserve(10, 0);
  assert.equal(b.reserve(10, 100), 0);
  assert.equal(b.reserve(10, 100), 100);
  const later = new TokenBucket(10, 0);
  assert.equal([...Array(11)].map(() => later.reserve(10, 60_000)).filter((w) => w === 0).length, 10);
});

test("waiters queue in order at the current rate", () => {
  const b = new TokenBucket(2, 0);
  b.reserve(2, 0);
  b.reserve(2, 0);
  assert.deepEqual([b.reserve(2, 0), b.reserve(2, 0), b.reserve(2, 0)], [500, 1000, 1500]);
});

test("a rate of 0 stops evictions without taking a token", () => {
  const b = new TokenBucket(1, 0);
  assert.equal(b.reserve(0, 0), Infinity);
  assert.equal(b.reserve(1, 0), 0);
});

test("a cancelled reservation gives its token back", () => {
  const b = new TokenBucket(1, 0);
  b.reserve(1, 0);
  b.cancel();
  assert.equal(b.reserve(1, 0), 0);
});

test("the default rate evacuates 1,000 bindings in about a second", () => {
  const b = new TokenBucket(cfg.rate, 0);
  let last = 0;
  for (let i = 0; i < 1000; i++) last = b.reserve(cfg.rate, 0);
  assert.ok(last <= 1000);
});
