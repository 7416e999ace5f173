import { test } from "node:test";
import assert from "node:assert/strict";
import { fieldValue, listFilter, parseFieldSelector } from "./selector.js";

const pod = (name: string, labels: Record<string, string>, phase: string, nodeName?: string) => ({
  metadata: { name, namespace: "default", labels },
  spec: nodeName ? { nodeName } : {},
  status: { phase },
});
const pods = [
  pod("web-1", { app: "web", tier: "front" }, "Running", "node-1"),
  pod("web-2", { app: "web", tier: "front", canary: "true" }, "Pending"),
  pod("api-1", { app: "api", tier: "back" }, "Succeeded", "node-2"),
  pod("db-1", {}, "Running", "node-1"),
];

const cases: [string, string | undefined, string | undefined, string[]][] = [
  ["no selectors select everything", undefined, undefined, ["web-1", "web-2", "api-1", "db-1"]],
  ["an equality label selector selects matching labels", "app=web", undefined, ["web-1", "web-2"]],
  ["a double-equals label selector is the same as equals", "app==api", undefined, ["api-1"]],
  ["a not-equals label selector also selects objects without the label", "app!=web", undefined, ["api-1", "db-1"]],
  ["a set selector selects any of its values", "tier in (front,back)", undefined, ["web-1", "web-2", "api-1"]],
  ["a notin selector excludes its values", "tier notin (front)", undefined, ["api-1", "db-1"]],
  ["an existence selector needs the label", "canary", undefined, ["web-2"]],
  ["a negated existence selector needs the label absent", "!canary,app", undefined, ["web-1", "api-1"]],
  ["a field selector matches a nested field", undefined, "status.phase=Running", ["web-1", "db-1"]],
  ["field selectors can exclude terminal pods", undefined, "status.phase!=Succeeded,status.phase!=Failed", ["web-1", "web-2", "db-1"]],
  ["an empty spec.nodeName selects unbound pods", undefined, "spec.nodeName=", ["web-2"]],
  ["metadata.name works as a field selector", undefined, "metadata.name==db-1", ["db-1"]],
  ["label and field selectors must both match", "app=web", "spec.nodeName=node-1", ["web-1"]],
];
for (const [name, labels, fields, want] of cases) {
  test(`select: ${name}`, () => {
    const f = listFilter(labels, fields);
    assert.deepEqual(
      pods.filter((p) => !f || f(p)).map((p) => p.metadata.name),
      want,
    );
  });
}

test("select: a malformed label selector is a bad request", () => {
  assert.throws(() => listFilter("app in (web"), { name: "BadRequestError" });
});

test("select: a malformed field selector is a bad request", () => {
  assert.throws(() => parseFieldSelector("status.phase"), { name: "BadRequestError" });
});

test("select: a missing field reads as an empty string", () => {
  assert.equal(fieldValue({ a: { b: 1 } }, "a.c.d"), "");
  assert.equal(fieldValue({ a: { b: 1 } }, "a.b"), "1");
});
