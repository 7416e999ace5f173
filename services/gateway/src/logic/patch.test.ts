import { test } from "node:test";
import assert from "node:assert/strict";
import { BadRequestError } from "@flotilla/api";
import { mergePatch } from "@flotilla/api";
import { jsonPatch, jsonPatchErrors, strategicMergePatch } from "./patch.js";

// ---- jsonPatchErrors: [case, patch, fields of the errors] ----
const malformed: Array<[string, unknown, string[]]> = [
  ["a well-formed patch has no errors", [{ op: "add", path: "/a", value: 1 }, { op: "copy", from: "/a", path: "/b" }, { op: "remove", path: "/a" }], []],
  ["a patch that is not a list is one error", { op: "add" }, [""]],
  ["an operation that is not an object names its index", [1], ["[0]"]],
  ["an unknown op names the op", [{ op: "merge", path: "/a" }], ["[0].op"]],
  ["a path that is not a JSON pointer names the path", [{ op: "remove", path: "a" }, { op: "remove" }, { op: "remove", path: 5 }], ["[0].path", "[1].path", "[2].path"]],
  ["copy and move need a from", [{ op: "copy", path: "/a" }, { op: "move", path: "/a", from: 1 }], ["[0].from", "[1].from"]],
  ["add, replace and test need a value", [{ op: "add", path: "/a" }, { op: "replace", path: "/a" }, { op: "test", path: "/a" }], ["[0].value", "[1].value", "[2].value"]],
  ["a path through __proto__ is forbidden", [{ op: "add", path: "/__proto__/polluted", value: 1 }], ["[0].path"]],
  ["a path through constructor or prototype is forbidden", [{ op: "add", path: "/constructor/prototype/x", value: 1 }, { op: "remove", path: "/a/prototype" }], ["[0].path", "[1].path"]],
  ["a from through __proto__ is forbidden", [{ op: "copy", from: "/__proto__", path: "/x" }], ["[0].from"]],
  ["an escaped slash does not hide a forbidden token (~1 is /, not a separator)", [{ op: "add", path: "/a~1__proto__", value: 1 }], []],
];
for (const [name, patch, fields] of malformed) test(name, () => assert.deepEqual(jsonPatchErrors(patch).map((e) => e.field), fields));

test("applying a JSON patch through __proto__ is refused and no prototype changes", () => {
  assert.throws(() => jsonPatch({ a: {} }, [{ op: "add", path: "/__proto__/polluted", value: 1 }]), BadRequestError);
  assert.throws(() => jsonPatch({ a: {} }, [{ op: "add", path: "/a/constructor/prototype/polluted", value: 1 }]), BadRequestError);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("a JSON patch follows only own properties: an inherited name does not exist", () => {
  assert.throws(() => jsonPatch({ a: 1 }, [{ op: "add", path: "/toString/x", value: 1 }]), /does not exist/);
  assert.throws(() => jsonPatch({ a: 1 }, [{ op: "remove", path: "/hasOwnProperty" }]), /does not exist/);
  assert.throws(() => jsonPatch({ a: 1 }, [{ op: "copy", from: "/valueOf", path: "/b" }]), /does not exist/);
  assert.deepEqual(jsonPatch({ a: 1 }, [{ op: "add", path: "/toString", value: "x" }]), { a: 1, toString: "x" });
});

test("JSON patch array indexes are digits within bounds, '-' only to append", () => {
  const doc = { l: ["a", "b"] };
  assert.deepEqual(jsonPatch(doc, [{ op: "add", path: "/l/-", value: "c" }]), { l: ["a", "b", "c"] });
  assert.deepEqual(jsonPatch(doc, [{ op: "remove", path: "/l/1" }]), { l: ["a"] });
  for (const bad of ["abc", "-1", "01", "2", "-", "1e0"]) assert.throws(() => jsonPatch(doc, [{ op: "remove", path: `/l/${bad}` }]), BadRequestError, bad);
  assert.throws(() => jsonPatch(doc, [{ op: "add", path: "/l/3", value: "x" }]), BadRequestError);
});

test("a JSON patch replaces the whole document at the root path, and cannot remove it", () => {
  assert.deepEqual(jsonPatch({ a: 1 }, [{ op: "replace", path: "", value: { b: 2 } }]), { b: 2 });
  assert.throws(() => jsonPatch({ a: 1 }, [{ op: "remove", path: "" }]), BadRequestError);
});

test("a merge patch refuses __proto__ instead of assigning it, and sets constructor and prototype as own fields", () => {
  assert.throws(() => mergePatch({}, JSON.parse('{"__proto__": {"polluted": 1}}')), BadRequestError);
  const out = mergePatch({}, { a: { constructor: { prototype: { polluted: 1 } } } }) as Record<string, unknown>;
  assert.deepEqual(JSON.parse(JSON.stringify(out)), { a: { constructor: { prototype: { polluted: 1 } } } });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
});

test("strategic merge directives of the wrong type are a BadRequestError, not a crash", () => {
  for (const patch of [{ "$setElementOrder/containers": "x" }, { "$deleteFromPrimitiveList/finalizers": 5 }, { "$setElementOrder/__proto__": [] }]) {
    assert.throws(() => strategicMergePatch({ containers: [] }, patch), BadRequestError, JSON.stringify(patch));
  }
});

test("a strategic merge on a field named like an inherited property merges nothing by key", () => {
  assert.deepEqual(strategicMergePatch({ toString: [{ a: 1 }] }, { toString: [{ b: 2 }] }), { toString: [{ b: 2 }] });
});
