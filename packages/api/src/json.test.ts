import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonClean, jsonEqual, mergePatch } from "./json.js";

// The examples of RFC 7386 appendix A, plus a few of our own.
const merges: [string, unknown, unknown, unknown][] = [
  ["a changed value replaces the old one", { a: "b" }, { a: "c" }, { a: "c" }],
  ["a new key is added", { a: "b" }, { b: "c" }, { a: "b", b: "c" }],
  ["null removes a key", { a: "b" }, { a: null }, {}],
  ["null removes only its own key", { a: "b", b: "c" }, { a: null }, { b: "c" }],
  ["an array is replaced by a scalar", { a: ["b"] }, { a: "c" }, { a: "c" }],
  ["a scalar is replaced by an array", { a: "c" }, { a: ["b"] }, { a: ["b"] }],
  ["nested objects merge and null removes nested keys", { a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
  ["arrays are replaced, not merged", { a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
  ["an array target becomes the patch array", ["a", "b"], ["c", "d"], ["c", "d"]],
  ["a non-object patch replaces an object", { a: "b" }, ["c"], ["c"]],
  ["a null patch replaces with null", { a: "foo" }, null, null],
  ["a string patch replaces with the string", { a: "foo" }, "bar", "bar"],
  ["an unchanged key keeps a null it already had", { e: null }, { a: 1 }, { e: null, a: 1 }],
  ["a scalar target becomes an object", [1, 2], { a: "b", c: null }, { a: "b" }],
  ["deep nesting creates missing objects", {}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  [
    "a patch of labels keeps the other metadata",
    { metadata: { name: "x", labels: { a: "1", b: "2" } }, spec: { replicas: 1 } },
    { metadata: { labels: { b: null, c: "3" } }, spec: { replicas: 3 } },
    { metadata: { name: "x", labels: { a: "1", c: "3" } }, spec: { replicas: 3 } },
  ],
];
for (const [name, target, patch, want] of merges) {
  test(`merge patch: ${name}`, () => assert.deepEqual(mergePatch(target, patch), want));
}

test("merge patch: the inputs are left unchanged", () => {
  const target = { a: { b: 1 } };
  const patch = { a: { c: 2 } };
  mergePatch(target, patch);
  assert.deepEqual(target, { a: { b: 1 } });
  assert.deepEqual(patch, { a: { c: 2 } });
});

test("merge patch: a __proto__ key is refused, and nothing reaches a prototype", () => {
  assert.throws(() => mergePatch({ a: 1 }, JSON.parse('{"__proto__": {"polluted": 1}}')), { name: "BadRequestError" });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

const equal: [string, unknown, unknown, boolean][] = [
  ["objects with the same keys in another order are equal", { a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
  ["a missing key makes objects differ", { a: 1 }, { a: 1, b: 2 }, false],
  ["an array differs from an object", [], {}, false],
  ["arrays of different lengths differ", [1], [1, 1], false],
  ["null differs from an empty object", null, {}, false],
  ["an undefined member equals an absent one, as on the wire", { a: 1, b: undefined }, { a: 1 }, true],
];
for (const [name, a, b, want] of equal) {
  test(`equality: ${name}`, () => assert.equal(jsonEqual(a, b), want));
}

test("jsonClean drops undefined members", () => {
  assert.deepEqual(jsonClean({ a: 1, b: undefined, c: [{ d: undefined }] }), { a: 1, c: [{}] });
});
