/**
 * Kubernetes resource quantities, as far as replica requirements need them: parse a quantity
 * exactly (as a fraction), round it up to whole units or milli-units like `Quantity.Value()` /
 * `MilliValue()`, and print sums in the canonical form `resource.Quantity.String()` gives.
 */

export interface Fraction {
  num: bigint;
  den: bigint;
}

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/**
 * Parses "500m", "1.5Gi", "2", "1e3"; a number is taken as is. Undefined when not a quantity,
 * including any other JSON value (the gateway refuses those, but a template stored before it did
 * must not fail every reconcile).
 */
export function parseQuantity(q: unknown): Fraction | undefined {
  if (typeof q !== "string" && (typeof q !== "number" || !Number.isFinite(q))) return undefined;
  const s = typeof q === "number" ? String(q) : q.trim();
  const m = QUANTITY.exec(s);
  if (!m) return undefined;
  const [, sign, digits, suffix, exp] = m;
  const [whole, frac = ""] = digits!.split(".");
  let num = BigInt((whole || "0") + frac);
  let den = 10n ** BigInt(frac.length);
  if (suffix && suffix in BINARY_SUFFIXES) {
    num *= 2n ** BigInt(BINARY_SUFFIXES[suffix]!);
  } else {
    const e = suffix !== undefined ? DECIMAL_SUFFIXES[suffix]! : exp !== undefined ? Number(exp) : 0;
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  }
  if (sign === "-") num = -num;
  return { num, den };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a > 0n === b > 0n ? q + 1n : q;
}

/** `Quantity.Value()`: whole units, rounded up. */
export function quantityValue(f: Fraction): bigint {
  return ceilDiv(f.num, f.den);
}

/** `Quantity.MilliValue()`: milli-units, rounded up. */
export function quantityMilliValue(f: Fraction): bigint {
  return ceilDiv(f.num * 1000n, f.den);
}

/** The largest multiple-of-3 exponent that keeps the mantissa whole, from a value at scale 10^exp. */
function decimalCanonical(value: bigint, exp: number): string {
  if (value === 0n) return "0";
  let v = value;
  let e = exp;
  while (v % 10n === 0n && e < 18) {
    v /= 10n;
    e++;
  }
  // round the exponent down to a multiple of 3, growing the mantissa back
  while (((e % 3) + 3) % 3 !== 0) {
    v *= 10n;
    e--;
  }
  const suffix = Object.entries(DECIMAL_SUFFIXES).find(([, x]) => x === e)?.[0] ?? "";
  return `${v}${suffix}`;
}

/** `resource.NewMilliQuantity(milli, DecimalSI).String()`: "500m", "2", "1500m", "3k". */
export function formatMilliDecimal(milli: bigint): string {
  return decimalCanonical(milli, -3);
}

/** `resource.NewQuantity(v, DecimalSI).String()`. */
export function formatDecimal(value: bigint): string {
  return decimalCanonical(value, 0);
}

/**
 * `resource.NewQuantity(v, BinarySI).String()`: a power-of-1024 suffix when the value divides
 * exactly ("128Mi"); values under 1024 print as decimals; others as plain integers.
 */
export function formatBinary(value: bigint): string {
  if (value > -1024n && value < 1024n) return decimalCanonical(value, 0);
  let v = value;
  let e = 0;
  while (v % 1024n === 0n && e < 60) {
    v /= 1024n;
    e += 10;
  }
  const suffix = Object.entries(BINARY_SUFFIXES).find(([, x]) => x === e)?.[0] ?? "";
  return `${v}${suffix}`;
}
