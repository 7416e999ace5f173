import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidError } from "@flotilla/api";
import { fieldValidation, warningHeader } from "./field-validation.js";

const cases: Array<[string, string | undefined, string]> = [
  ["absent is Strict", undefined, "Strict"],
  ["empty is Strict", "", "Strict"],
  ["Strict is Strict", "Strict", "Strict"],
  ["Warn is Warn", "Warn", "Warn"],
  ["Ignore is Ignore", "Ignore", "Ignore"],
];
for (const [name, value, want] of cases) test(`fieldValidation: ${name}`, () => assert.equal(fieldValidation(value, "PatchOptions"), want));

test("fieldValidation: any other value (case matters, as in kube-apiserver) is a 422 naming the parameter", () => {
  for (const v of ["strict", "warn", "true", "Strict "]) {
    assert.throws(
      () => fieldValidation(v, "CreateOptions"),
      (e: unknown) => e instanceof InvalidError && e.ref.kind === "CreateOptions" && e.causes[0]!.field === "fieldValidation" && e.causes[0]!.message.includes(JSON.stringify(v)),
    );
  }
});

test("warningHeader: code 299, no agent, the text quoted with its quotes escaped", () => {
  assert.equal(warningHeader('unknown field "spec.foo"'), '299 - "unknown field \\"spec.foo\\""');
});
