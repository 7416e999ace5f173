import { test } from "node:test";
import assert from "node:assert/strict";
import { formatBinary, formatMilli, formatResourceList, milliValue, parseResourceList, value } from "./quantity.js";

const parse: [string, string | number, number, number][] = [
  ["millicores stay millicores", "100m", 100, 1],
  ["whole cores", "2", 2000, 2],
  ["fractional cores round up", "0.0015", 2, 1],
  ["binary suffixes", "128Mi", 128 * 2 ** 20 * 1000, 128 * 2 ** 20],
  ["decimal suffixes", "1G", 1e12, 1e9],
  ["exponents", "2e3", 2_000_000, 2000],
  ["numbers", 3, 3000, 3],
];
for (const [name, q, milli, val] of parse) {
  test(`quantities: ${name}`, () => {
    assert.equal(milliValue(q), milli);
    assert.equal(value(q), val);
  });
}

test("cpu prints as whole cores when it can, else millicores; bytes as the largest exact binary suffix", () => {
  assert.deepEqual([formatMilli(2000), formatMilli(1500), formatMilli(0)], ["2", "1500m", "0"]);
  assert.deepEqual([formatBinary(128 * 2 ** 20), formatBinary(1536 * 2 ** 20), formatBinary(1000), formatBinary(0)], ["128Mi", "1536Mi", "1000", "0"]);
});

test("a resource list round-trips, cpu in millicores and memory in bytes, skipping what does not parse", () => {
  const a = parseResourceList({ cpu: "1500m", memory: "1Gi", pods: "110", "nvidia.com/gpu": "2", bad: "x1", nope: {} });
  assert.deepEqual(a, { cpu: 1500, memory: 2 ** 30, pods: 110, "nvidia.com/gpu": 2 });
  assert.deepEqual(formatResourceList(a), { cpu: "1500m", memory: "1Gi", "nvidia.com/gpu": "2", pods: "110" });
});
