import { test } from "node:test";
import assert from "node:assert/strict";
import { OverrideUsers } from "./overrides.js";

test("a binding is remembered under the policies it was last rendered with, and only those", () => {
  const u = new OverrideUsers();
  u.set("rb1", ["op-a", "cop-b"]);
  u.set("rb2", ["op-a"]);
  assert.deepEqual(u.bindingsOf("op-a").sort(), ["rb1", "rb2"]);
  assert.deepEqual(u.bindingsOf("cop-b"), ["rb1"]);
  u.set("rb1", ["cop-b"]);
  assert.deepEqual(u.bindingsOf("op-a"), ["rb2"]);
  u.set("rb2", []);
  assert.deepEqual(u.bindingsOf("op-a"), []);
  assert.deepEqual(u.bindingsOf("unknown"), []);
});
