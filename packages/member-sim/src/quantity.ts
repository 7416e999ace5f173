/**
 * Kubernetes resource quantities ("100m", "1.5", "128Mi", "1G", "2e3").
 * Values are kept as plain numbers: CPU in millicores, memory in bytes, both rounded up
 * the way Kubernetes' MilliValue()/Value() do.
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

/** The value of a quantity as a number ("100m" → 0.1, "1Ki" → 1024). Throws QuantityError. */
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
  return Math.ceil(x - 1e-12 * Math.max(1, Math.abs(x))) + 0;
}

/** CPU in millicores: "100m" → 100, "1" → 1000, "0.5" → 500, 2 → 2000. */
export function cpuMillis(q: string | number): number {
  return ceil(parseQuantity(q) * 1000);
}

/** Memory (or any byte quantity) in bytes: "128Mi" → 134217728, "1G" → 1e9. */
export function bytesOf(q: string | number): number {
  return ceil(parseQuantity(q));
}

/** Millicores back to a quantity: 1500 → "1500m", 2000 → "2". */
export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Bytes back to the largest exact binary quantity: 134217728 → "128Mi", 1000 → "1000". */
export function formatBytes(bytes: number): string {
  if (bytes === 0) return "0";
  for (const s of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"] as const) {
    const unit = BINARY[s]!;
    if (bytes % unit === 0) return `${bytes / unit}${s}`;
  }
  return String(bytes);
}
