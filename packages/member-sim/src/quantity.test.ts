import { test } from "node:test";
import assert from "node:assert/strict";
import { bytesOf, cpuMillis, formatBytes, formatCpu, parseQuantity } from "./quantity.js";

const cpu: [string, string | number, number][] = [
  ["a millicore quantity keeps its value", "100m", 100],
  ["a whole core is 1000 millicores", "1", 1000],
  ["a fractional core converts to millicores", "0.5", 500],
  ["a numeric core count converts to millicores", 2, 2000],
  ["a fraction of a millicore rounds up", "0.0001", 1],
  ["an exponent form is understood", "1e-1", 100],
  ["a decimal kilo suffix scales by a thousand", "1k", 1_000_000],
  ["zero is zero", "0", 0],
];
for (const [name, input, want] of cpu) {
  test(`cpu: ${name} (${JSON.stringify(input)} → ${want})`, () => assert.equal(cpuMillis(input), want));
}

const mem: [string, string | number, number][] = [
  ["Mi is a power of two", "128Mi", 128 * 1024 * 1024],
  ["Gi is a power of two", "1Gi", 1024 ** 3],
  ["Ki is a power of two", "1Ki", 1024],
  ["G is a power of ten", "1G", 1e9],
  ["M is a power of ten", "500M", 5e8],
  ["a plain number is bytes", "2", 2],
  ["a fractional Gi is exact", "1.5Gi", 1.5 * 1024 ** 3],
  ["a numeric input is bytes", 4096, 4096],
  ["an upper-case exponent is understood", "1E6", 1e6],
  ["a milli-byte quantity rounds up to one byte", "100m", 1],
];
for (const [name, input, want] of mem) {
  test(`memory: ${name} (${JSON.stringify(input)} → ${want})`, () => assert.equal(bytesOf(input), want));
}

const bad: [string, unknown][] = [
  ["an empty string is rejected", ""],
  ["an unknown suffix is rejected", "1Xi"],
  ["a lower-case ki suffix is rejected", "1ki"],
  ["text is rejected", "lots"],
  ["a number with a space inside is rejected", "1 Gi"],
];
for (const [name, input] of bad) {
  test(`parse: ${name}`, () => assert.throws(() => parseQuantity(input as string), { name: "QuantityError" }));
}

test("format: whole cores print without a suffix and others in millicores", () => {
  assert.equal(formatCpu(2000), "2");
  assert.equal(formatCpu(1500), "1500m");
  assert.equal(formatCpu(0), "0");
});

test("format: bytes print in the largest exact binary unit", () => {
  assert.equal(formatBytes(128 * 1024 ** 2), "128Mi");
  assert.equal(formatBytes(32 * 1024 ** 3), "32Gi");
  assert.equal(formatBytes(1000), "1000");
  assert.equal(formatBytes(0), "0");
});
