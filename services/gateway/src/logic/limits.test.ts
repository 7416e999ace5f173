import { test } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, Slots } from "./limits.js";

test("token buckets: a burst, then the sustained rate, per key", () => {
  let now = 0;
  const l = new RateLimiter(2, 3, () => now);
  assert.deepEqual([l.take("a"), l.take("a"), l.take("a")], [0, 0, 0], "the burst");
  assert.equal(l.take("a"), 1, "the fourth waits about a second");
  assert.equal(l.take("b"), 0, "other keys are not affected");
  now += 500; // one token back (2/s)
  assert.equal(l.take("a"), 0);
  assert.equal(l.take("a"), 1);
  now += 10_000; // never more than the burst
  assert.deepEqual([l.take("a"), l.take("a"), l.take("a"), l.take("a")].map((x) => x > 0), [false, false, false, true]);
  const slow = new RateLimiter(0.1, 1, () => now);
  slow.take("x");
  assert.equal(slow.take("x"), 10, "Retry-After in whole seconds");
  now += 120_000;
  l.take("c"); // sweeps buckets idle long enough to be full again
  assert.equal(l.size, 1);
});

test("slots: at most max per key, released once", () => {
  const s = new Slots(2);
  const r1 = s.acquire("u")!;
  const r2 = s.acquire("u")!;
  assert.equal(s.acquire("u"), undefined);
  assert.ok(s.acquire("v"));
  r1();
  r1();
  assert.equal(s.count("u"), 1);
  assert.ok(s.acquire("u"));
  r2();
});

test("a replica's share of the rate: its part of the burst and of the sustained rate, never less than one request", () => {
  let now = 0;
  const l = new RateLimiter(10, 6, () => now);
  assert.deepEqual([l.take("a", 0.5), l.take("a", 0.5), l.take("a", 0.5), l.take("a", 0.5)].map((x) => x > 0), [false, false, false, true], "half the burst");
  now += 200; // 5/s: one token back
  assert.equal(l.take("a", 0.5), 0);
  assert.equal(l.take("b", 0.01), 0, "a tiny share still lets one request through");
  assert.equal(l.take("b", 0.01), 10, "and then waits at a tenth of a request per second");
  assert.equal(l.take("c", 0.00001), 0);
  assert.equal(l.take("c", 0.00001), 60, "a Retry-After of at most a minute (the share may grow)");
});

test("slots: a replica's part of the cap", () => {
  const s = new Slots(5);
  assert.ok(s.acquire("u", 1));
  assert.equal(s.acquire("u", 1), undefined, "its part is one");
  assert.ok(s.acquire("u", 9), "never more than the cap, which is not reached");
});
