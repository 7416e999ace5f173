import { test } from "node:test";
import assert from "node:assert/strict";
import {
  formatBinarySI,
  formatDecimal,
  formatMilliDecimal,
  quantityMilliValueBig,
  quantityValueBig,
  ceilDiv,
  compareQuantity,
  floorDiv,
  parseQuantity,
  QuantityError,
  quantityMilliValue,
  quantityValue,
  subtractQuantity,
  tryParseQuantity,
} from "./quantity.js";

const values: Array<[string, string, number, number]> = [
  ["a plain integer is whole units", "2", 2, 2000],
  ["a milli suffix is thousandths", "100m", 1, 100],
  ["a fractional value rounds up to a whole unit", "1.5", 2, 1500],
  ["a leading dot is a fraction", ".5", 1, 500],
  ["a trailing dot is allowed", "5.", 5, 5000],
  ["Ki is 1024", "1Ki", 1024, 1024_000],
  ["Mi is 1024 squared", "128Mi", 134217728, 134217728000],
  ["Gi is 1024 cubed", "1Gi", 1073741824, 1073741824000],
  ["a fractional binary amount is exact", "1.5Gi", 1610612736, 1610612736000],
  ["k is 1000", "2k", 2000, 2000_000],
  ["M is a million", "3M", 3_000_000, 3_000_000_000],
  ["G is a billion", "1G", 1_000_000_000, 1_000_000_000_000],
  ["an amount beyond the safe integer range is clamped", "1E", Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  ["an exponent multiplies by a power of ten", "1e3", 1000, 1_000_000],
  ["an upper-case exponent is an exponent", "2E2", 200, 200_000],
  ["a negative exponent divides", "15e-1", 2, 1500],
  ["nano rounds milli up", "1n", 1, 1],
  ["micro rounds milli up", "1500u", 1, 2],
  ["a negative amount rounds toward positive infinity", "-1.5", -1, -1500],
  ["an explicit plus sign is allowed", "+3", 3, 3000],
  ["zero is zero", "0", 0, 0],
];
for (const [name, text, value, milli] of values) {
  test(name, () => {
    const q = parseQuantity(text);
    assert.equal(quantityValue(q), value);
    assert.equal(quantityMilliValue(q), milli);
  });
}

const invalid: Array<[string, string]> = [
  ["an empty string is not a quantity", ""],
  ["a lone dot is not a quantity", "."],
  ["an upper-case K is not a suffix", "1K"],
  ["an unknown suffix is rejected", "1Qi"],
  ["a bare e is not an exponent", "1e"],
  ["words are rejected", "abc"],
  ["a prototype property name is not a suffix", "1toString"],
  ["two dots are rejected", "1.2.3"],
  ["a trailing space is refused, as Kubernetes' ParseQuantity refuses it", "1Gi "],
  ["a leading space is refused", " 4"],
  ["a trailing tab or newline is refused", "100m\t"],
  ["a newline after the number is refused", "2\n"],
];
for (const [name, text] of invalid) {
  test(name, () => {
    assert.throws(() => parseQuantity(text), QuantityError);
    assert.equal(tryParseQuantity(text), undefined);
  });
}

test("tryParseQuantity returns undefined for a missing string", () => {
  assert.equal(tryParseQuantity(undefined), undefined);
});

test("subtraction is exact across scales", () => {
  const d = subtractQuantity(parseQuantity("2"), parseQuantity("1500m"));
  assert.equal(quantityMilliValue(d), 500);
  assert.equal(quantityValue(d), 1);
});

test("subtraction keeps sub-milli precision before rounding", () => {
  const d = subtractQuantity(parseQuantity("1"), parseQuantity("999999999n"));
  assert.equal(quantityMilliValue(d), 1);
  assert.equal(quantityValue(d), 1);
  assert.equal(compareQuantity(d, parseQuantity("0")), 1);
});

test("subtraction of huge amounts does not lose precision", () => {
  const d = subtractQuantity(parseQuantity("8Ei"), parseQuantity("1"));
  assert.equal(compareQuantity(d, parseQuantity("8Ei")), -1);
});

test("equal amounts in different notations compare equal", () => {
  assert.equal(compareQuantity(parseQuantity("1E"), parseQuantity("1e18")), 0);
  assert.equal(compareQuantity(parseQuantity("1k"), parseQuantity("1000")), 0);
  assert.equal(compareQuantity(parseQuantity("1e3"), parseQuantity("1000000m")), 0);
  assert.equal(compareQuantity(parseQuantity("1Ki"), parseQuantity("1k")), 1);
});

const divisions: Array<[string, number, number, number, number]> = [
  ["ceilDiv rounds a remainder up", 1001, 1000, 2, 1],
  ["ceilDiv keeps an exact quotient", 3000, 1000, 3, 3],
  ["ceilDiv of a negative number rounds toward zero", -1500, 1000, -1, -2],
  ["floorDiv of zero is zero", 0, 7, 0, 0],
];
for (const [name, n, d, c, f] of divisions) {
  test(name, () => {
    assert.equal(ceilDiv(n, d), c);
    assert.equal(floorDiv(n, d), f);
  });
}

test("the bigint Value() and MilliValue() are exact", () => {
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
    const f = tryParseQuantity(q)!;
    assert.equal(quantityValueBig(f), value, name);
    assert.equal(quantityMilliValueBig(f), milli, name);
  }
  assert.equal(tryParseQuantity("ten"), undefined, "garbage is not a quantity");
  assert.equal(tryParseQuantity("1 Gi"), undefined, "no space before the suffix");
});

test("tryParseQuantity: a value that is neither a string nor a finite number is not a quantity, and it does not throw", () => {
  for (const q of [true, [], {}, null, undefined, Infinity, NaN]) assert.equal(tryParseQuantity(q), undefined, JSON.stringify(q));
});

test("sums print in the canonical form", () => {
  const cases: [string, string, string][] = [
    ["cpu below one core stays milli", formatMilliDecimal(500n), "500m"],
    ["cpu in whole cores drops the suffix", formatMilliDecimal(2000n), "2"],
    ["cpu with a fraction stays milli", formatMilliDecimal(1500n), "1500m"],
    ["many cores take a decimal suffix", formatMilliDecimal(3000000n), "3k"],
    ["memory in mebibytes", formatBinarySI(134217728n), "128Mi"],
    ["memory in gibibytes", formatBinarySI(2n * 1024n ** 3n), "2Gi"],
    ["memory not a power of 1024 prints as bytes", formatBinarySI(100000000n), "100000000"],
    ["small byte counts print plainly", formatBinarySI(512n), "512"],
    ["pods count plainly", formatDecimal(110n), "110"],
    ["zero", formatMilliDecimal(0n), "0"],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});
