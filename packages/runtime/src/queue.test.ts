import { test } from "node:test";
import assert from "node:assert/strict";
import { WorkQueue, namespaceFlow, type Lane } from "./queue.js";

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
  await t.test("keys of one namespace come out in the order they were added", () => {
    const q = new WorkQueue();
    for (const k of ["b", "a", "b", "c", "a"]) q.add(`ns/${k}`);
    assert.deepEqual(drain(q), ["ns/b", "ns/a", "ns/c"]);
  });
  await t.test("a key of a quiet namespace waits behind one key of each busy one, not behind all of them", () => {
    const q = new WorkQueue();
    for (let i = 0; i < 100; i++) q.add(`burst-${i % 3}/app-${i}`);
    q.add("mine/app");
    const order = drain(q);
    assert.equal(order.length, 101);
    assert.ok(order.indexOf("mine/app") <= 3, `came out at ${order.indexOf("mine/app")}`);
  });
  await t.test("a change goes ahead of a resync, which still gets one key in five while changes wait", () => {
    const q = new WorkQueue();
    for (let i = 0; i < 10; i++) q.add(`ns/old-${i}`, "bulk");
    for (let i = 0; i < 10; i++) q.add(`ns/new-${i}`);
    const order = drain(q);
    assert.deepEqual(order.slice(0, 5), ["ns/new-0", "ns/new-1", "ns/new-2", "ns/new-3", "ns/old-0"]);
    assert.equal(order.length, 20);
  });
  await t.test("a queued bulk key that changes moves to the change lane, once", () => {
    const q = new WorkQueue();
    for (let i = 0; i < 5; i++) q.add(`ns/k${i}`, "bulk");
    assert.equal(q.add("ns/k3"), false, "already queued");
    assert.equal(q.length, 5);
    assert.deepEqual(drain(q), ["ns/k3", "ns/k0", "ns/k1", "ns/k2", "ns/k4"]);
    // and added to the bulk lane again afterwards, it comes out once more
    q.add("ns/k3", "bulk");
    assert.deepEqual(drain(q), ["ns/k3"]);
  });
  await t.test("a change to a key being processed queues it again in the change lane", () => {
    const q = new WorkQueue();
    q.add("ns/a", "bulk");
    assert.equal(q.get(), "ns/a");
    q.add("ns/a", "bulk");
    q.add("ns/a");
    for (let i = 0; i < 3; i++) q.add(`ns/x${i}`, "bulk");
    assert.equal(q.done("ns/a"), true);
    assert.equal(q.get(), "ns/a");
  });
  await t.test("lengths count each waiting key once across lanes and moves", () => {
    const q = new WorkQueue();
    const adds: [string, Lane][] = [["a/1", "bulk"], ["a/2", "bulk"], ["a/1", "change"], ["b/1", "change"], ["a/2", "bulk"]];
    for (const [k, l] of adds) q.add(k, l);
    assert.equal(q.length, 3);
    q.get();
    assert.equal(q.length, 2);
  });
});

function drain(q: WorkQueue): string[] {
  const out: string[] = [];
  for (let k = q.get(); k !== undefined; k = q.get()) {
    out.push(k);
    q.done(k);
  }
  return out;
}

test("namespaceFlow: the namespace a queue key names", () => {
  const cases: [string, string][] = [
    ["apps/Deployment|default|web", "default"],
    ["cluster.karmada.io/Cluster||member1", ""],
    ["default/web", "default"],
    ["karmada-es-member1/web-deployment", "karmada-es-member1"],
    ["member1", ""],
  ];
  for (const [key, flow] of cases) assert.equal(namespaceFlow(key), flow, key);
});
