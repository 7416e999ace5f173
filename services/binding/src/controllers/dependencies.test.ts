import assert from "node:assert/strict";
import test from "node:test";
import { DependencyUsers, bindingsForDependency } from "./dependencies.js";
import { dependencyKey } from "../logic/dependencies.js";

const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "ns", name });

test("a dependency wakes the bindings that last listed it, and no longer those that dropped it", () => {
  const u = new DependencyUsers();
  u.set("rb|ns|a", [dependencyKey(cm("shared")), dependencyKey(cm("only-a"))]);
  u.set("rb|ns|b", [dependencyKey(cm("shared"))]);
  assert.deepEqual(bindingsForDependency(u, cm("shared")).sort(), ["rb|ns|a", "rb|ns|b"]);
  assert.deepEqual(bindingsForDependency(u, cm("only-a")), ["rb|ns|a"]);
  u.set("rb|ns|a", [dependencyKey(cm("shared"))]);
  assert.deepEqual(bindingsForDependency(u, cm("only-a")), []);
  u.set("rb|ns|b", []);
  assert.deepEqual(bindingsForDependency(u, cm("shared")), ["rb|ns|a"]);
  assert.deepEqual(bindingsForDependency(u, { ...cm("shared"), kind: "Secret" }), [], "another kind of the same name is another dependency");
});
