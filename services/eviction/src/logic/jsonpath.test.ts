import { test } from "node:test";
import assert from "node:assert/strict";
import { JsonPathError, evalJsonPath } from "./jsonpath.js";

const status = {
  replicas: 3,
  readyReplicas: 0,
  ready: true,
  checkpoint: { id: "chk-42", path: "s3://bucket/x" },
  jobStatus: { state: "FAILED" },
  "dotted.key": "v",
  conditions: [
    { type: "Available", status: "False" },
    { type: "Progressing", status: "True" },
  ],
};

const cases: [string, string, string][] = [
  ["a number field renders as its decimal text", "{ .replicas }", "3"],
  ["a zero renders as 0", "{.readyReplicas}", "0"],
  ["a boolean renders as true/false", "{.ready}", "true"],
  ["a nested string renders as it is", "{ .checkpoint.id }", "chk-42"],
  ["a leading $ is the root", "{$.jobStatus.state}", "FAILED"],
  ["a quoted bracket names a field with dots", "{['dotted.key']}", "v"],
  ["an index picks one element", "{.conditions[1].type}", "Progressing"],
  ["a negative index counts from the end", "{.conditions[-1].status}", "True"],
  ["a wildcard joins every result with a space", "{.conditions[*].type}", "Available Progressing"],
  ["an object renders as JSON", "{.checkpoint}", '{"id":"chk-42","path":"s3://bucket/x"}'],
  ["literal text around actions is kept", "id-{.checkpoint.id}-r{.replicas}", "id-chk-42-r3"],
];

for (const [name, path, want] of cases) {
  test(name, () => assert.equal(evalJsonPath(path, status), want));
}

const errors: [string, string, RegExp][] = [
  ["a missing field is an error (AllowMissingKeys false)", "{.lastCheckpoint}", /lastCheckpoint is not found/],
  ["a field of a missing parent is an error", "{.savepoint.id}", /savepoint is not found/],
  ["an index past the end is an error", "{.conditions[5].type}", /out of bounds/],
  ["an unclosed action is an error", "{.replicas", /unclosed/],
  ["range is not supported", "{range .conditions[*]}{.type}{end}", /unsupported/],
  ["a filter is not supported", "{.conditions[?(@.type=='Available')].status}", /unsupported/],
];

for (const [name, path, want] of errors) {
  test(name, () => assert.throws(() => evalJsonPath(path, status), (e: unknown) => e instanceof JsonPathError && want.test(e.message)));
}
