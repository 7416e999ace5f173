import { test } from "node:test";
import assert from "node:assert/strict";
import { matchesRequirements, parseSelector, matchesSelector } from "@flotilla/api";

const cases: Array<[string, string, Record<string, string>, boolean]> = [
  ["an equality selector matches the same value", "app=nginx", { app: "nginx" }, true],
  ["an equality selector rejects another value", "app=nginx", { app: "web" }, false],
  ["a double-equals selector is equality", "app==nginx", { app: "nginx" }, true],
  ["an inequality selector passes when the label is absent", "app!=nginx", {}, true],
  ["a set selector matches one of its values", "tier in (web, api)", { tier: "api" }, true],
  ["a notin selector rejects a listed value", "tier notin (web,api)", { tier: "web" }, false],
  ["an existence selector needs the key", "legacy", { legacy: "" }, true],
  ["a negated existence selector rejects the key", "!legacy", { legacy: "x" }, false],
  ["requirements are ANDed", "app=nginx,!legacy", { app: "nginx" }, true],
  ["an empty selector matches everything", "", { any: "thing" }, true],
];
for (const [name, sel, labels, want] of cases) {
  test(name, () => assert.equal(matchesRequirements(labels, parseSelector(sel)), want));
}

test("a malformed selector names the labelSelector field", () => {
  assert.throws(() => parseSelector("app=nginx;x"), (e: Error & { causes?: Array<{ field: string }> }) => e.causes?.[0]?.field === "labelSelector");
});

test("a nil structured selector matches nothing and an empty one everything", () => {
  assert.equal(matchesSelector({ a: "b" }, undefined), false);
  assert.equal(matchesSelector({ a: "b" }, {}), true);
  assert.equal(matchesSelector({ a: "b" }, { matchExpressions: [{ key: "a", operator: "NotIn", values: ["b"] }] }), false);
});
