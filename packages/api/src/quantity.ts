/**
 * Kubernetes resource quantities ("100m", "1.5", "128Mi", "1G", "2e3") as plain numbers.
 * `milliValue` and `value` round up the way resource.Quantity's MilliValue()/Value() do, and
 * the formatters give the canonical forms Kubernetes prints (DecimalSI for cpu and counts,
 * BinarySI for bytes).
 */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/;

export class QuantityError extends Error {
  override readonly name = "QuantityError";
  constructor(readonly quantity: unknown) {
    super(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(quantity)}`);
  }
}

/** The value of a quantity ("100m" → 0.1, "1Ki" → 1024). Throws QuantityError. */
export function parseQuantity(q: string | number): number {
  if (typeof q === "number") {
    if (!Number.isFinite(q)) throw new QuantityError(q);
    return q;
  }
  const m = QUANTITY.exec(String(q).trim());
  if (!m) throw new QuantityError(q);
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? "";
  return base * (BINARY[suffix] ?? DECIMAL[suffix]!);
}

/** Rounds up, ignoring the float noise of the multiplication (0.1 * 1000 = 100.00000000000001). */
function ceil(x: number): number {
  const r = Math.round(x);
  if (Math.abs(x - r) <= 1e-9 * Math.max(1, Math.abs(x))) return r + 0;
  return Math.ceil(x) + 0;
}

/** Quantity.MilliValue(): "100m" → 100, "1" → 1000, "0.5" → 500. */
export function milliValue(q: string | number): number {
  return ceil(parseQuantity(q) * 1000);
}

/** Quantity.Value(): "128Mi" → 134217728, "1G" → 1e9, "100m" → 1. */
export function value(q: string | number): number {
  return ceil(parseQuantity(q));
}

/** Millicores as DecimalSI: 1500 → "1500m", 2000 → "2", 0 → "0". */
export function formatMilli(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Bytes as BinarySI, the largest exact binary suffix: 134217728 → "128Mi", 1000 → "1000". */
export function formatBinary(bytes: number): string {
  if (bytes === 0) return "0";
  for (const s of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"] as const) {
    const unit = BINARY[s]!;
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
