/**
 * Kubernetes resource quantities ("100m", "2", "128Mi", "1.5Gi", "1e3"): the one parser.
 *
 * A parsed quantity is exact: `num / 10^scale`. `Value()` and `MilliValue()` round up like
 * apimachinery's `resource.Quantity` (as numbers, clamped to safe integers, or exactly as
 * bigints). Parsing is cached by string, because the same few strings ("110", "4", "16Gi")
 * appear on every cluster in every scheduling cycle. The formatters give the forms Kubernetes
 * prints: `formatMilliDecimal`, `formatDecimal` and `formatBinarySI` are
 * `resource.Quantity.String()` exactly; `formatMilli` and `formatBinary` are the shorter
 * display forms of resource lists (bytes under 1 Ki stay plain numbers).
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

/** Thrown for a value that is not a Kubernetes quantity. */
export class QuantityError extends Error {
  override readonly name = "QuantityError";
  constructor(readonly quantity: unknown) {
    super(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(quantity)}`);
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
  // strict as Kubernetes' ParseQuantity: no surrounding whitespace ("1Gi " is not a quantity)
  const m = NUMBER_RE.exec(text);
  if (!m || text === "") throw new QuantityError(text);
  const [, sign, whole = "", frac, suffix = ""] = m;
  if (whole === "" && (frac === undefined || frac === "")) throw new QuantityError(text);
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
      if (!e) throw new QuantityError(text);
      exp = Number(e[1]);
      if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1000) throw new QuantityError(text);
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

/**
 * Parses a quantity ("100m", "1.5Gi", "2e3") or a number as JSON carries one. Throws
 * `QuantityError` for anything else (a number that is not finite included).
 */
export function parseQuantity(q: string | number): Quantity {
  if (typeof q === "number" && !Number.isFinite(q)) throw new QuantityError(q);
  const text = typeof q === "number" ? String(q) : q;
  const hit = cache.get(text);
  if (hit) return hit;
  const parsed = parseUncached(text);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, parsed);
  return parsed;
}

/**
 * Like `parseQuantity`, but undefined for anything that is not a quantity, any other JSON value
 * included (a template stored without the gateway's checks must not fail every reconcile).
 */
export function tryParseQuantity(q: unknown): Quantity | undefined {
  if (typeof q !== "string" && typeof q !== "number") return undefined;
  try {
    return parseQuantity(q);
  } catch {
    return undefined;
  }
}

export const ZERO_QUANTITY: Quantity = build(0n, 0);

/** An exact quantity of `milli` milli-units (`resource.NewMilliQuantity`). */
export function milliQuantityOf(milli: bigint): Quantity {
  return build(milli, 3);
}

/** An exact quantity of `value` whole units (`resource.NewQuantity`). */
export function quantityOf(value: bigint): Quantity {
  return build(value, 0);
}

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

/** `Quantity.Value()` exactly: whole units, rounded up. */
export function quantityValueBig(q: Quantity): bigint {
  return ceilDivBig(q.num, pow10(q.scale));
}

/** `Quantity.MilliValue()` exactly: milli-units, rounded up. */
export function quantityMilliValueBig(q: Quantity): bigint {
  return q.scale <= 3 ? q.num * pow10(3 - q.scale) : ceilDivBig(q.num, pow10(q.scale - 3));
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

/** Quantity.MilliValue() of a quantity string or number: "100m" → 100, "1" → 1000, "0.5" → 500. Throws QuantityError. */
export function milliValue(q: string | number): number {
  return quantityMilliValue(parseQuantity(q));
}

/** Quantity.Value() of a quantity string or number: "128Mi" → 134217728, "1G" → 1e9, "100m" → 1. Throws QuantityError. */
export function value(q: string | number): number {
  return quantityValue(parseQuantity(q));
}

/** Millicores as DecimalSI: 1500 → "1500m", 2000 → "2", 0 → "0". */
export function formatMilli(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Bytes as BinarySI, the largest exact binary suffix: 134217728 → "128Mi", 1000 → "1000". */
export function formatBinary(bytes: number): string {
  if (bytes === 0) return "0";
  for (const s of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"] as const) {
    const unit = 2 ** BINARY_SI.get(s)!;
    if (bytes % unit === 0) return `${bytes / unit}${s}`;
  }
  return String(bytes);
}

/** A resource list ({cpu: "2", memory: "4Gi", pods: "110", ...}) in base units: cpu in millicores, the rest in Value(). */
export type ResourceAmounts = Record<string, number>;

/** Parses a ResourceList: cpu becomes millicores, every other resource its integer value. Unparseable entries are skipped. */
export function parseResourceList(rl: Record<string, unknown> | undefined): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const [k, v] of Object.entries(rl ?? {})) {
    if (typeof v !== "string" && typeof v !== "number") continue;
    try {
      out[k] = k === "cpu" ? milliValue(v) : value(v);
    } catch {
      // a malformed quantity counts as absent
    }
  }
  return out;
}

/** Formats amounts back into a ResourceList: cpu as millis, memory and storage as BinarySI, others as integers. */
export function formatResourceList(a: ResourceAmounts): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(a).sort()) {
    const n = a[k]!;
    if (k === "cpu") out[k] = formatMilli(n);
    else if (k === "memory" || k === "ephemeral-storage" || k.startsWith("hugepages-")) out[k] = formatBinary(n);
    else out[k] = String(n);
  }
  return out;
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
  const suffix = [...DECIMAL_SI].find(([, x]) => x === e)?.[0] ?? "";
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
export function formatBinarySI(value: bigint): string {
  if (value > -1024n && value < 1024n) return decimalCanonical(value, 0);
  let v = value;
  let e = 0;
  while (v % 1024n === 0n && e < 60) {
    v /= 1024n;
    e += 10;
  }
  const suffix = [...BINARY_SI].find(([, x]) => x === e)?.[0] ?? "";
  return `${v}${suffix}`;
}
