import { test } from "node:test";
import assert from "node:assert/strict";
import { WorkQueue } from "./queue.js";

test("WorkQueue", async (t) => {
  await t.test("a key added many times while queued is handed out once", () => {
    const q = new WorkQueue();
    for (let i = 0; i < 10; i++) q.add("a");
    assert.equal(q.length, 1);
    assert.equal(q.get(), "a");
    assert.equal(q.get(), undefined);
  });
  await t.test("keys come out in the order they were first added", () => {
    const q = new WorkQueue();
    for (const k of ["b", "a", "b", "c", "a"]) q.add(k);
    assert.deepEqual([q.get(), q.get(), q.get(), q.get()], ["b", "a", "c", undefined]);
  });
  await t.test("a key being processed is not handed out again", () => {
    const q = new WorkQueue();
    q.add("a");
    assert.equal(q.get(), "a");
    assert.equal(q.add("a"), false);
    assert.equal(q.get(), undefined);
    assert.equal(q.isProcessing("a"), true);
  });
  await t.test("a key added while processing is queued again once when it is done", () => {
    const q = new WorkQueue();
    q.add("a");
    q.get();
    q.add("a");
    q.add("a");
    assert.equal(q.done("a"), true);
    assert.equal(q.get(), "a");
    assert.equal(q.get(), undefined);
    assert.equal(q.done("a"), false);
    assert.equal(q.get(), undefined);
  });
  await t.test("clear drops queued keys; a processing key is not re-queued afterwards", () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("b");
    q.get();
    q.add("a");
    q.clear();
    assert.equal(q.length, 0);
    assert.equal(q.done("a"), false);
    assert.equal(q.get(), undefined);
  });
  await t.test("it stays correct across many adds and gets", () => {
    const q = new WorkQueue();
    let got = 0;
    for (let i = 0; i < 10_000; i++) {
      q.add(`k${i}`);
      if (i % 3 === 0) {
        const k = q.get()!;
        q.done(k);
        got++;
      }
    }
    while (q.get() !== undefined) got++;
    assert.equal(got, 10_000);
  });
});
