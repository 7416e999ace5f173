import { test } from "node:test";
import assert from "node:assert/strict";
import { BindingTracker } from "./tracker.js";

test("a binding parked is drained once, and parked again by its next decision", () => {
  const t = new BindingTracker();
  assert.equal(t.park("ns/a", t.epoch), true);
  assert.deepEqual(t.drainParked(), ["ns/a"]);
  assert.deepEqual(t.drainParked(), []);
  assert.equal(t.park("ns/a", t.epoch), true);
  assert.equal(t.parked, 1);
});

test("a binding whose decision began before a drain is not parked but retried", () => {
  const t = new BindingTracker();
  const epoch = t.epoch;
  t.drainParked(); // a cluster changed while it was deciding
  assert.equal(t.park("ns/a", epoch), false);
  assert.equal(t.parked, 0);
});

test("unparking forgets the binding", () => {
  const t = new BindingTracker();
  t.park("ns/a");
  t.unpark("ns/a");
  assert.deepEqual(t.drainParked(), []);
});
