/**
 * Kubernetes resource quantities ("100m", "2", "128Mi", "1.5Gi", "1e3").
 *
 * A parsed quantity is exact: `num / 10^scale`. `Value()` and `MilliValue()` round up like
 * apimachinery's `resource.Quantity`. Parsing is cached by string, because the same few
 * strings ("110", "4", "16Gi") appear on every cluster in every scheduling cycle.
 */

export interface Quantity {
  /** The numerator: the quantity is `num / 10^scale`. */
  readonly num: bigint;
  /** Decimal places of the denominator (>= 0). */
  readonly scale: number;
  /** The exact amount in milli-units when it is a whole number of milli-units and a safe integer. */
  readonly exactMilli: number | undefined;
}

const DECIMAL_SI: ReadonlyMap<string, number> = new Map([
  ["n", -9], ["u", -6], ["m", -3], ["", 0], ["k", 3], ["M", 6], ["G", 9], ["T", 12], ["P", 15], ["E", 18],
]);
const BINARY_SI: ReadonlyMap<string, number> = new Map([["Ki", 10], ["Mi", 20], ["Gi", 30], ["Ti", 40], ["Pi", 50], ["Ei", 60]]);

const NUMBER_RE = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/;
const EXPONENT_RE = /^[eE]([+-]?\d+)$/;

const POW10: bigint[] = [];
function pow10(n: number): bigint {
  let p = POW10[n];
  if (p === undefined) {
    p = 10n ** BigInt(n);
    if (n < 64) POW10[n] = p;
  }
  return p;
}

/** Thrown for a string that is not a Kubernetes quantity. */
export class QuantityParseError extends Error {
  constructor(text: string) {
    super(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(text)}`);
    this.name = "QuantityParseError";
  }
}

function build(num: bigint, scale: number): Quantity {
  // Normalise trailing zeros away so equal amounts compare cheaply.
  while (scale > 0 && num % 10n === 0n) {
    num /= 10n;
    scale--;
  }
  let exactMilli: number | undefined;
  if (scale <= 3) {
    const m = num * pow10(3 - scale);
    if (m <= BigInt(Number.MAX_SAFE_INTEGER) && m >= BigInt(Number.MIN_SAFE_INTEGER)) exactMilli = Number(m);
  }
  return { num, scale, exactMilli };
}

function parseUncached(text: string): Quantity {
  const s = text.trim();
  const m = NUMBER_RE.exec(s);
  if (!m || s === "") throw new QuantityParseError(text);
  const [, sign, whole = "", frac, suffix = ""] = m;
  if (whole === "" && (frac === undefined || frac === "")) throw new QuantityParseError(text);
  const digits = whole + (frac ?? "");
  let num = BigInt(digits === "" ? "0" : digits);
  if (sign === "-") num = -num;
  let scale = frac?.length ?? 0;

  const binary = BINARY_SI.get(suffix);
  if (binary !== undefined) {
    num *= 1n << BigInt(binary);
  } else {
    let exp = DECIMAL_SI.get(suffix);
    if (exp === undefined) {
      const e = EXPONENT_RE.exec(suffix);
      if (!e) throw new QuantityParseError(text);
      exp = Number(e[1]);
      if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1000) throw new QuantityParseError(text);
    }
    if (exp >= 0) {
      const drop = Math.min(exp, scale);
      scale -= drop;
      if (exp > drop) num *= pow10(exp - drop);
    } else {
      scale -= exp;
    }
  }
  return build(num, scale);
}

const CACHE_LIMIT = 4096;
const cache = new Map<string, Quantity>();

/** Parses a quantity string. Throws `QuantityParseError` when the text is not a quantity. */
export function parseQuantity(text: string): Quantity {
  const hit = cache.get(text);
  if (hit) return hit;
  const q = parseUncached(text);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, q);
  return q;
}

/** Like `parseQuantity`, but returns `undefined` for a malformed or missing string. */
export function tryParseQuantity(text: string | undefined): Quantity | undefined {
  if (text === undefined) return undefined;
  try {
    return parseQuantity(text);
  } catch {
    return undefined;
  }
}

export const ZERO_QUANTITY: Quantity = build(0n, 0);

/** Exact difference `a - b`. */
export function subtractQuantity(a: Quantity, b: Quantity): Quantity {
  if (a.exactMilli !== undefined && b.exactMilli !== undefined) {
    const m = a.exactMilli - b.exactMilli;
    if (Number.isSafeInteger(m)) return milliQuantity(m);
  }
  const scale = Math.max(a.scale, b.scale);
  return build(a.num * pow10(scale - a.scale) - b.num * pow10(scale - b.scale), scale);
}

function milliQuantity(m: number): Quantity {
  if (m % 1000 === 0) return { num: BigInt(m / 1000), scale: 0, exactMilli: m };
  if (m % 100 === 0) return { num: BigInt(m / 100), scale: 1, exactMilli: m };
  if (m % 10 === 0) return { num: BigInt(m / 10), scale: 2, exactMilli: m };
  return { num: BigInt(m), scale: 3, exactMilli: m };
}

/** Ceiling of `n / d` for bigint with d > 0. */
function ceilDivBig(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d > 0n ? q + 1n : q;
}

function clampToNumber(v: bigint): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) return Number.MAX_SAFE_INTEGER;
  if (v < BigInt(Number.MIN_SAFE_INTEGER)) return Number.MIN_SAFE_INTEGER;
  return Number(v);
}

/** Ceiling of `n / d` for safe integers with d > 0, exact. */
export function ceilDiv(n: number, d: number): number {
  const r = n % d;
  const q = (n - r) / d;
  return r > 0 ? q + 1 : q;
}

/** Floor of `n / d` for safe integers with d > 0, exact. */
export function floorDiv(n: number, d: number): number {
  const r = n % d;
  const q = (n - r) / d;
  return r < 0 ? q - 1 : q;
}

/** The amount rounded up to a whole unit, like `Quantity.Value()`. */
export function quantityValue(q: Quantity): number {
  if (q.exactMilli !== undefined) return ceilDiv(q.exactMilli, 1000);
  return clampToNumber(ceilDivBig(q.num, pow10(q.scale)));
}

/** The amount in milli-units rounded up, like `Quantity.MilliValue()`. */
export function quantityMilliValue(q: Quantity): number {
  if (q.exactMilli !== undefined) return q.exactMilli;
  if (q.scale <= 3) return clampToNumber(q.num * pow10(3 - q.scale));
  return clampToNumber(ceilDivBig(q.num, pow10(q.scale - 3)));
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  if (a.exactMilli !== undefined && b.exactMilli !== undefined) return Math.sign(a.exactMilli - b.exactMilli);
  const scale = Math.max(a.scale, b.scale);
  const x = a.num * pow10(scale - a.scale);
  const y = b.num * pow10(scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}
