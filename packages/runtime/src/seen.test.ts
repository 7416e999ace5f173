import { test } from "node:test";
import assert from "node:assert/strict";
import { LastSignatures, SeenVersions } from "./seen.js";

const cases: Array<[string, (s: SeenVersions) => void, string, boolean]> = [
  ["nothing known covers nothing", () => {}, "10", false],
  ["a version this replica wrote is covered", (s) => s.wrote("k", "10"), "10", true],
  ["an older version than one written is not covered by the write alone", (s) => s.wrote("k", "10"), "9", false],
  ["a newer version than one written is not covered", (s) => s.wrote("k", "10"), "11", false],
  ["a reconciled version is covered", (s) => s.reconciled("k", "10"), "10", true],
  ["an older version than one reconciled is covered", (s) => s.reconciled("k", "10"), "9", true],
  ["a newer version than one reconciled is not covered", (s) => s.reconciled("k", "10"), "11", false],
  ["an older reconcile does not lower what is covered", (s) => (s.reconciled("k", "10"), s.reconciled("k", "5")), "8", true],
  ["resourceVersions compare as numbers, not strings", (s) => s.reconciled("k", "9"), "10", false],
  ["another key is not covered", (s) => s.reconciled("other", "10"), "5", false],
  ["a forgotten key is not covered", (s) => (s.wrote("k", "10"), s.forget("k")), "10", false],
  ["an empty version is never covered", (s) => s.reconciled("k", "10"), "", false],
];
for (const [name, setup, rv, want] of cases) {
  test(name, () => {
    const s = new SeenVersions();
    setup(s);
    assert.equal(s.covers("k", rv), want);
  });
}

test("the oldest entries are forgotten first beyond the bound", () => {
  const s = new SeenVersions(2);
  s.wrote("a", "1");
  s.wrote("b", "1");
  s.wrote("a", "2");
  s.wrote("c", "1");
  assert.deepEqual([s.covers("a", "2"), s.covers("b", "1"), s.covers("c", "1"), s.size], [true, false, true, 2]);
});

test("a change that leaves the generation as reconciled is recognised; another generation is not", () => {
  const s = new SeenVersions();
  s.reconciled("k", "10", 3);
  assert.deepEqual([s.sameGeneration("k", "3"), s.sameGeneration("k", 4), s.sameGeneration("k", undefined), s.sameGeneration("other", 3)], [true, false, false, false]);
  s.reconciled("k", "9", 2);
  assert.equal(s.sameGeneration("k", 3), true, "an older reconcile does not replace the generation");
  s.reconciled("k", "11", 4);
  assert.equal(s.sameGeneration("k", 4), true);
});

test("last signatures: the same content is recognised, a change or a forgotten key is not, the oldest goes first", () => {
  const s = new LastSignatures(2);
  assert.equal(s.same("a", "x"), false, "nothing recorded yet");
  s.record("a", "x");
  assert.equal(s.same("a", "x"), true);
  assert.equal(s.same("a", "y"), false, "another signature");
  s.record("b", "1");
  s.record("a", "x"); // touched: now the newest
  s.record("c", "2"); // over the bound: b, the oldest, goes
  assert.equal(s.same("b", "1"), false);
  assert.equal(s.same("a", "x"), true);
  assert.equal(s.same("c", "2"), true);
  s.forget("a");
  assert.equal(s.same("a", "x"), false);
});
