import { test } from "node:test";
import assert from "node:assert/strict";
import { isClusterReady, setCondition } from "./conditions.js";

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

test("a transition time given with the condition is used when the status changes", () => {
  const c = setCondition([], { type: "Ready", status: "False" }, t1);
  assert.equal(setCondition(c, { type: "Ready", status: "True", lastTransitionTime: "2025-12-31T23:00:00Z" }, t2)[0]!.lastTransitionTime, "2025-12-31T23:00:00Z");
});

test("fields the new condition does not have are not kept from the old one", () => {
  const c = setCondition([], { type: "Applied", status: "False", reason: "Failed", message: "boom", observedGeneration: 2 }, t1);
  assert.deepEqual(setCondition(c, { type: "Applied", status: "False", reason: "Failed" }, t2), [{ type: "Applied", status: "False", reason: "Failed", lastTransitionTime: "2026-01-01T00:00:00Z" }]);
});

test("an old condition without a transition time gets one, and keeps it while its status stays", () => {
  const c = setCondition([{ type: "Scheduled", status: "True" }], { type: "Scheduled", status: "True", reason: "Success" }, t1);
  assert.equal(c[0]!.lastTransitionTime, "2026-01-01T00:00:00Z");
  assert.equal(setCondition(c, { type: "Scheduled", status: "True", reason: "Success" }, t2)[0]!.lastTransitionTime, "2026-01-01T00:00:00Z");
});

test("isClusterReady", () => {
  const cases: Array<[string, Parameters<typeof isClusterReady>[0], boolean]> = [
    ["Ready True is ready", { status: { conditions: [{ type: "Ready", status: "True" }] } }, true],
    ["Ready False is not", { status: { conditions: [{ type: "Ready", status: "False" }] } }, false],
    ["Ready Unknown is not", { status: { conditions: [{ type: "Ready", status: "Unknown" }] } }, false],
    ["no Ready condition is not", { status: { conditions: [{ type: "CompleteAPIEnablements", status: "True" }] } }, false],
    ["no status is not", {}, false],
    ["no cluster is not", undefined, false],
  ];
  for (const [name, c, want] of cases) assert.equal(isClusterReady(c), want, name);
});
