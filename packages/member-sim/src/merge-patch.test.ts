import { test } from "node:test";
import assert from "node:assert/strict";
import { applyConfiguration } from "./merge-patch.js";

const applies: [string, unknown, unknown, unknown, unknown][] = [
  ["applying to nothing creates the configuration", undefined, undefined, { a: 1, b: { c: 2 } }, { a: 1, b: { c: 2 } }],
  [
    "fields set by others are kept",
    { metadata: { name: "x", uid: "u" }, spec: { a: 1 }, status: { ok: true } },
    undefined,
    { metadata: { name: "x" }, spec: { a: 2 } },
    { metadata: { name: "x", uid: "u" }, spec: { a: 2 }, status: { ok: true } },
  ],
  [
    "a field this manager applied before and leaves out now is removed",
    { metadata: { labels: { a: "1", b: "2", other: "o" } } },
    { metadata: { labels: { a: "1", b: "2" } } },
    { metadata: { labels: { a: "1" } } },
    { metadata: { labels: { a: "1", other: "o" } } },
  ],
  [
    "a whole section left out is removed",
    { spec: { a: 1 }, data: { k: "v" } },
    { spec: { a: 1 }, data: { k: "v" } },
    { spec: { a: 1 } },
    { spec: { a: 1 } },
  ],
  ["lists are replaced whole", { spec: { ports: [1, 2, 3] } }, { spec: { ports: [1, 2, 3] } }, { spec: { ports: [4] } }, { spec: { ports: [4] } }],
  ["null removes a field", { spec: { a: 1, b: 2 } }, undefined, { spec: { b: null } }, { spec: { a: 1 } }],
];
for (const [name, live, last, applied, want] of applies) {
  test(`apply: ${name}`, () => assert.deepEqual(applyConfiguration(live, last, applied), want));
}
