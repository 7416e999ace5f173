// Small numeric and formatting helpers shared by the load runners.

/** The q-quantile (0..1) of ascending `sorted` by the nearest-rank method; NaN when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface Distribution {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** n, p50, p90, p99 and max of the values (any order). */
export function distribution(values: Iterable<number>): Distribution {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 0.5), p90: percentile(s, 0.9), p99: percentile(s, 0.99), max: s.length ? s[s.length - 1]! : NaN };
}

/** Runs `fn` over the indexes 0..count-1 with at most `concurrency` calls at once. */
export async function pool(count: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A number for a table: "-" for NaN/undefined, thousands separators, `digits` decimals. */
export function fmt(v: number | undefined, digits = 0): string {
  if (v === undefined || !Number.isFinite(v)) return "-";
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export const mib = (bytes: number | undefined) => fmt(bytes === undefined ? undefined : bytes / 1024 / 1024);

/** A markdown table. */
export function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (r: readonly string[]) => `| ${r.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}
