import { test } from "node:test";
import assert from "node:assert/strict";
import { formatBinary, formatDecimal, formatMilliDecimal, parseQuantity, quantityMilliValue, quantityValue } from "./quantity.js";

test("quantities parse exactly and round up like Value()/MilliValue()", () => {
  const cases: [string, string | number, bigint, bigint][] = [
    ["milli-cores", "250m", 1n, 250n],
    ["whole cores", "2", 2n, 2000n],
    ["a decimal fraction", "0.5", 1n, 500n],
    ["binary suffixes", "128Mi", 134217728n, 134217728000n],
    ["decimal suffixes", "1G", 1000000000n, 1000000000000n],
    ["an exponent", "1e3", 1000n, 1000000n],
    ["a bare number", 3, 3n, 3000n],
    ["a fraction of a milli rounds up", "0.0001", 1n, 1n],
  ];
  for (const [name, q, value, milli] of cases) {
    const f = parseQuantity(q)!;
    assert.equal(quantityValue(f), value, name);
    assert.equal(quantityMilliValue(f), milli, name);
  }
  assert.equal(parseQuantity("ten"), undefined, "garbage is not a quantity");
  assert.equal(parseQuantity("1 Gi"), undefined, "no space before the suffix");
});

test("a value that is neither a string nor a finite number is not a quantity, and parsing it does not throw", () => {
  for (const q of [true, [], {}, null, undefined, Infinity, NaN]) assert.equal(parseQuantity(q), undefined, JSON.stringify(q));
});

test("sums print in the canonical form", () => {
  const cases: [string, string, string][] = [
    ["cpu below one core stays milli", formatMilliDecimal(500n), "500m"],
    ["cpu in whole cores drops the suffix", formatMilliDecimal(2000n), "2"],
    ["cpu with a fraction stays milli", formatMilliDecimal(1500n), "1500m"],
    ["many cores take a decimal suffix", formatMilliDecimal(3000000n), "3k"],
    ["memory in mebibytes", formatBinary(134217728n), "128Mi"],
    ["memory in gibibytes", formatBinary(2n * 1024n ** 3n), "2Gi"],
    ["memory not a power of 1024 prints as bytes", formatBinary(100000000n), "100000000"],
    ["small byte counts print plainly", formatBinary(512n), "512"],
    ["pods count plainly", formatDecimal(110n), "110"],
    ["zero", formatMilliDecimal(0n), "0"],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});
