import { test } from "node:test";
import assert from "node:assert/strict";
import { StringPool } from "./string-pool.js";

// (which copy of a string a variable holds cannot be seen from JavaScript; the heap test measures it)
const copy = (s: string) => [...s].join("");

test("a string met again is found, not kept a second time", () => {
  const pool = new StringPool();
  assert.equal(pool.get(copy("karmada-es-member1")), "karmada-es-member1");
  assert.equal(pool.get(copy("karmada-es-member1")), "karmada-es-member1");
  assert.equal(pool.size, 1);
});

test("intern replaces the string values of nested objects and arrays in place, leaving every value as it was", () => {
  const pool = new StringPool();
  const a = { metadata: { annotations: { "work.karmada.io/namespace": copy("karmada-es-member1") } }, status: { conditions: [{ type: "Ready", message: copy("Deployment has minimum availability.") }] }, spec: { replicas: 2, paused: false, selector: null, args: ["--verbose", "-v"] } };
  const b = structuredClone(a);
  assert.equal(pool.intern(a), a);
  pool.intern(b);
  assert.deepEqual(b, a);
  assert.deepEqual(a.spec.args, ["--verbose", "-v"]);
  assert.equal(pool.size, 3, "only the strings of at least 8 characters are kept");
});

test("the table is bounded: strings met once are forgotten after two generations", () => {
  const pool = new StringPool(4);
  for (let i = 0; i < 100; i++) pool.get(`uid-0000-${i}`);
  assert.ok(pool.size <= 9, `kept ${pool.size}`);
});

test("a string met in every generation stays", () => {
  const pool = new StringPool(4);
  pool.get(copy("resourcetemplate.karmada.io/managed-annotations"));
  for (let i = 0; i < 100; i++) {
    pool.get(`uid-0000-${i}`);
    pool.get(copy("resourcetemplate.karmada.io/managed-annotations"));
  }
  const before = pool.size;
  pool.get(copy("resourcetemplate.karmada.io/managed-annotations"));
  assert.equal(pool.size, before, "found, not added again");
});
