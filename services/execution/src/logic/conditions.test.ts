import { test } from "node:test";
import assert from "node:assert/strict";
import { setCondition } from "./conditions.js";

const t1 = new Date("2026-01-01T00:00:00.123Z");
const t2 = new Date("2026-01-01T00:05:00Z");

test("a new condition gets the current time as its transition time", () => {
  assert.deepEqual(setCondition([], { type: "Ready", status: "True", reason: "R" }, t1), [{ type: "Ready", status: "True", reason: "R", lastTransitionTime: "2026-01-01T00:00:00Z" }]);
});

test("the same status keeps the old transition time even when reason and message change", () => {
  const c = setCondition([], { type: "Ready", status: "False", reason: "A" }, t1);
  assert.deepEqual(setCondition(c, { type: "Ready", status: "False", reason: "B", message: "m" }, t2), [{ type: "Ready", status: "False", reason: "B", message: "m", lastTransitionTime: "2026-01-01T00:00:00Z" }]);
});

test("a status change moves the transition time and leaves other conditions alone", () => {
  const c = setCondition(setCondition([], { type: "A", status: "True" }, t1), { type: "Ready", status: "False" }, t1);
  const out = setCondition(c, { type: "Ready", status: "True" }, t2);
  assert.deepEqual(out, [{ type: "A", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" }, { type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:05:00Z" }]);
});
