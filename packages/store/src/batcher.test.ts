import { test } from "node:test";
import assert from "node:assert/strict";
import { Batcher } from "./batcher.js";

/** A run function that records its batches and answers when released. */
function recorder() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  let running = 0;
  let maxRunning = 0;
  const run = async (items: number[]) => {
    batches.push(items);
    running++;
    maxRunning = Math.max(maxRunning, running);
    await new Promise<void>((r) => gates.push(r));
    running--;
    return items.map((i) => i * 10);
  };
  const releaseAll = async () => {
    while (gates.length) gates.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { run, batches, releaseAll, maxRunning: () => maxRunning };
}

const turn = () => new Promise((r) => setImmediate(r));

test("items submitted in one turn go out as one batch, each answered in order", async () => {
  const r = recorder();
  const b = new Batcher(r.run, { maxBatch: 100, maxInFlight: 2 });
  const answers = Promise.all([1, 2, 3].map((i) => b.submit(i)));
  await turn();
  assert.deepEqual(r.batches, [[1, 2, 3]]);
  await r.releaseAll();
  assert.deepEqual(await answers, [10, 20, 30]);
});

test("what arrives while the batches in flight run waits and goes out together", async () => {
  const r = recorder();
  const b = new Batcher(r.run, { maxBatch: 100, maxInFlight: 1 });
  const first = b.submit(1);
  await turn();
  const later = Promise.all([2, 3, 4].map((i) => b.submit(i)));
  await turn();
  assert.deepEqual(r.batches, [[1]], "the second batch waits for the first");
  assert.equal(b.waiting, 3);
  await r.releaseAll();
  await turn();
  assert.deepEqual(r.batches, [[1], [2, 3, 4]]);
  await r.releaseAll();
  assert.deepEqual([await first, ...(await later)], [10, 20, 30, 40]);
});

test("batches hold at most maxBatch items, and at most maxInFlight run at once", async () => {
  const r = recorder();
  const b = new Batcher(r.run, { maxBatch: 2, maxInFlight: 2 });
  const all = Promise.all([1, 2, 3, 4, 5].map((i) => b.submit(i)));
  await turn();
  assert.deepEqual(r.batches, [[1, 2], [3, 4]]);
  for (let i = 0; i < 3; i++) await r.releaseAll();
  assert.deepEqual(r.batches, [[1, 2], [3, 4], [5]]);
  assert.equal(r.maxRunning(), 2);
  assert.deepEqual(await all, [10, 20, 30, 40, 50]);
});

test("a batch that fails as a whole is retried item by item, so one bad item fails alone", async () => {
  const b = new Batcher<number, number>(
    async (items) => {
      if (items.length > 1) throw new Error("the batch failed");
      return items;
    },
    { maxBatch: 10, maxInFlight: 1 },
    async (i) => {
      if (i === 2) throw new Error(`item ${i} is bad`);
      return i * 100;
    },
  );
  const results = await Promise.allSettled([1, 2, 3].map((i) => b.submit(i)));
  assert.deepEqual(
    results.map((x) => (x.status === "fulfilled" ? x.value : (x.reason as Error).message)),
    [100, "item 2 is bad", 300],
  );
});

test("without a per-item retry, a failed batch fails every item in it", async () => {
  const b = new Batcher<number, number>(async () => Promise.reject(new Error("down")), { maxBatch: 10, maxInFlight: 1 });
  const results = await Promise.allSettled([1, 2].map((i) => b.submit(i)));
  assert.deepEqual(results.map((x) => x.status), ["rejected", "rejected"]);
});
