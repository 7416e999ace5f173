import { test } from "node:test";
import assert from "node:assert/strict";
import { fnv1a32 } from "./hash.js";

const cases: Array<[string, string, number]> = [
  ["the empty string hashes to the offset basis", "", 0x811c9dc5],
  ["a single letter matches the reference vector", "a", 0xe40c292c],
  ["a word matches the reference vector", "foobar", 0xbf9cf968],
  ["a UID-shaped string hashes deterministically", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", fnv1a32("3f2504e0-4f89-11d3-9a0c-0305e82c3301")],
  ["non-ASCII text is hashed as UTF-8 bytes", "é", Math.imul(Math.imul(0x811c9dc5 ^ 0xc3, 0x01000193) ^ 0xa9, 0x01000193) >>> 0],
];
for (const [name, input, want] of cases) {
  test(name, () => assert.equal(fnv1a32(input), want));
}
