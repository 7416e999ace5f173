/** Metric names: the same strings everywhere (dashboards, alerts, tests). */
export const METRICS = {
  queueDepth: "flotilla_controller_queue_depth",
  inFlight: "flotilla_controller_in_flight",
  backoffKeys: "flotilla_controller_backoff_keys",
  terminalKeys: "flotilla_controller_terminal_keys",
  reconcileTotal: "flotilla_controller_reconcile_total",
  reconcileErrors: "flotilla_controller_reconcile_errors_total",
  reconcileDuration: "flotilla_controller_reconcile_duration_seconds",
  timersFired: "flotilla_controller_timers_fired_total",
  resyncs: "flotilla_controller_resyncs_total",
  terminalSkips: "flotilla_controller_terminal_skips_total",
} as const;

/** How a reconcile ended, for `reconcile_total{result}`. */
export type ResultLabel = "done" | "after" | "error";
/** Why it failed, for `reconcile_errors_total{reason}`. */
export type ErrorReason = "error" | "timeout" | "terminal";

/** Histogram buckets in seconds. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

const RECENT = 2048;

/** Counters and the latency histogram of one controller. */
export class ControllerMetrics {
  readonly reconciles: Record<ResultLabel, number> = { done: 0, after: 0, error: 0 };
  readonly errors: Record<ErrorReason, number> = { error: 0, timeout: 0, terminal: 0 };
  readonly buckets = new Array<number>(DURATION_BUCKETS.length).fill(0);
  durationCount = 0;
  durationSumSeconds = 0;
  timersFired = 0;
  resyncs = 0;
  /** Wake-ups answered without a reconcile: about a version a parked key already failed on. */
  terminalSkips = 0;
  private readonly recent = new Float64Array(RECENT);
  private recentCount = 0;

  observe(result: ResultLabel, ms: number, reason?: ErrorReason): void {
    this.reconciles[result]++;
    if (reason) this.errors[reason]++;
    const s = ms / 1000;
    this.durationCount++;
    this.durationSumSeconds += s;
    for (let i = 0; i < DURATION_BUCKETS.length; i++) if (s <= DURATION_BUCKETS[i]) this.buckets[i]++;
    this.recent[this.recentCount++ % RECENT] = ms;
  }

  /** Latency percentiles (ms) over the last 2048 reconciles. */
  percentiles(qs: readonly number[] = [0.5, 0.9, 0.99]): Record<string, number> {
    const n = Math.min(this.recentCount, RECENT);
    const sorted = Array.from(this.recent.subarray(0, n)).sort((a, b) => a - b);
    const out: Record<string, number> = {};
    for (const q of qs) out[`p${Math.round(q * 100)}`] = n === 0 ? 0 : sorted[Math.min(n - 1, Math.ceil(q * n) - 1)];
    return out;
  }
}

export interface ControllerSnapshot {
  name: string;
  queueDepth: number;
  inFlight: number;
  backoffKeys: number;
  /** Keys parked after a terminal failure (0 when not reported). */
  terminalKeys?: number;
  metrics: ControllerMetrics;
}

/** Anything with a metrics snapshot (every Controller). */
export interface HasMetrics {
  snapshot(): ControllerSnapshot;
}

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const num = (v: number) => (Number.isFinite(v) ? String(v) : v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN");

/** Prometheus text exposition (format 0.0.4) of every controller's metrics. */
export function renderMetrics(controllers: Iterable<HasMetrics>): string {
  const snaps = [...controllers].map((c) => c.snapshot());
  const lines: string[] = [];
  const family = (name: string, type: string, help: string, rows: (s: ControllerSnapshot, c: string) => string[]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const s of snaps) lines.push(...rows(s, `controller="${esc(s.name)}"`));
  };
  family(METRICS.queueDepth, "gauge", "Keys waiting to be reconciled.", (s, c) => [`${METRICS.queueDepth}{${c}} ${s.queueDepth}`]);
  family(METRICS.inFlight, "gauge", "Reconciles running now.", (s, c) => [`${METRICS.inFlight}{${c}} ${s.inFlight}`]);
  family(METRICS.backoffKeys, "gauge", "Keys waiting out a retry backoff.", (s, c) => [`${METRICS.backoffKeys}{${c}} ${s.backoffKeys}`]);
  family(METRICS.terminalKeys, "gauge", "Keys parked after a terminal failure, run again only when their object changes.", (s, c) => [`${METRICS.terminalKeys}{${c}} ${s.terminalKeys ?? 0}`]);
  family(METRICS.reconcileTotal, "counter", "Reconciles by result.", (s, c) =>
    (Object.keys(s.metrics.reconciles) as ResultLabel[]).map((r) => `${METRICS.reconcileTotal}{${c},result="${r}"} ${s.metrics.reconciles[r]}`),
  );
  family(METRICS.reconcileErrors, "counter", "Failed reconciles by reason.", (s, c) =>
    (Object.keys(s.metrics.errors) as ErrorReason[]).map((r) => `${METRICS.reconcileErrors}{${c},reason="${r}"} ${s.metrics.errors[r]}`),
  );
  family(METRICS.reconcileDuration, "histogram", "Reconcile duration.", (s, c) => {
    const m = s.metrics;
    const out = DURATION_BUCKETS.map((b, i) => `${METRICS.reconcileDuration}_bucket{${c},le="${b}"} ${m.buckets[i]}`);
    out.push(`${METRICS.reconcileDuration}_bucket{${c},le="+Inf"} ${m.durationCount}`);
    out.push(`${METRICS.reconcileDuration}_sum{${c}} ${num(m.durationSumSeconds)}`);
    out.push(`${METRICS.reconcileDuration}_count{${c}} ${m.durationCount}`);
    return out;
  });
  family(METRICS.timersFired, "counter", "Durable timers claimed and enqueued.", (s, c) => [`${METRICS.timersFired}{${c}} ${s.metrics.timersFired}`]);
  family(METRICS.resyncs, "counter", "Periodic resyncs run.", (s, c) => [`${METRICS.resyncs}{${c}} ${s.metrics.resyncs}`]);
  family(METRICS.terminalSkips, "counter", "Wake-ups about a version a parked key already failed on, answered without a reconcile.", (s, c) => [
    `${METRICS.terminalSkips}{${c}} ${s.metrics.terminalSkips}`,
  ]);
  return lines.join("\n") + "\n";
}
