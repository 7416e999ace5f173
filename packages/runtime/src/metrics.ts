import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * Every metric of every Flotilla service goes through one prom-client `Registry`, made here:
 * one `Metrics` per process (`runService` makes it and hands it to the service; an app built
 * without one, in a test, makes its own). Names are `flotilla_<area>_<what>_<unit>`
 * (`_total` for counters, `_seconds` / `_bytes` for units, none for a plain count);
 * `checkMetricName` refuses anything else. The names dashboards and alerts read are the
 * constants below and in each service's metrics module; deploy/grafana/flotilla.json is
 * tested against them.
 */
export const METRICS = {
  // the controller runtime (label: controller)
  queueDepth: "flotilla_controller_queue_depth",
  inFlight: "flotilla_controller_in_flight",
  backoffKeys: "flotilla_controller_backoff_keys",
  terminalKeys: "flotilla_controller_terminal_keys",
  reconcileTotal: "flotilla_controller_reconcile_total",
  reconcileErrors: "flotilla_controller_reconcile_errors_total",
  reconcileDuration: "flotilla_controller_reconcile_duration_seconds",
  wakeUpLag: "flotilla_controller_wakeup_lag_seconds",
  timersFired: "flotilla_controller_timers_fired_total",
  resyncs: "flotilla_controller_resyncs_total",
  terminalSkips: "flotilla_controller_terminal_skips_total",
  keyBusy: "flotilla_controller_key_busy_total",
  // the outbox relay and the wake-up consumers
  relayPublished: "flotilla_relay_published_total",
  relayDuplicates: "flotilla_relay_duplicates_total",
  relayBatches: "flotilla_relay_batches_total",
  relayErrors: "flotilla_relay_errors_total",
  relayPruned: "flotilla_relay_pruned_total",
  relayActive: "flotilla_relay_active",
  consumerMessages: "flotilla_consumer_messages_total",
  consumerWakeUps: "flotilla_consumer_wakeups_total",
  consumerInFlight: "flotilla_consumer_in_flight",
  // the object store
  storeStatementDuration: "flotilla_store_statement_duration_seconds",
} as const;

/** `flotilla_<area>_<what>[_<unit>]`: lower case words joined by `_`, at least three. */
export const METRIC_NAME = /^flotilla_[a-z][a-z0-9]*(_[a-z0-9]+)+$/;

export function checkMetricName(name: string): string {
  if (!METRIC_NAME.test(name)) throw new Error(`metric name ${JSON.stringify(name)} is not flotilla_<area>_<what>_<unit>`);
  return name;
}

/** How a reconcile ended, for `reconcile_total{result}`. */
export type ResultLabel = "done" | "after" | "error";
/** Why it failed, for `reconcile_errors_total{reason}`. */
export type ErrorReason = "error" | "timeout" | "terminal";

/** Histogram buckets in seconds. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;
/** Buckets for the time from a change to the reconcile it woke (seconds). */
export const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] as const;
/** Buckets for one Postgres statement (seconds). */
export const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

const RECENT = 2048;

/** Where a controller's timings go besides its own counters (set by `Metrics.controllers`). */
export interface ControllerSink {
  duration(seconds: number): void;
  wakeUpLag(seconds: number): void;
}

/** Counters and recent latencies of one controller, read by tests and load tests through `snapshot()`. */
export class ControllerMetrics {
  readonly reconciles: Record<ResultLabel, number> = { done: 0, after: 0, error: 0 };
  readonly errors: Record<ErrorReason, number> = { error: 0, timeout: 0, terminal: 0 };
  timersFired = 0;
  resyncs = 0;
  /** Wake-ups answered without a reconcile: about a version a parked key already failed on. */
  terminalSkips = 0;
  /** Reconciles put off because another replica held the key's lock. */
  keyBusy = 0;
  /** Set once the controller is registered with a `Metrics`. */
  sink?: ControllerSink;
  private readonly recent = new Float64Array(RECENT);
  private recentCount = 0;

  observe(result: ResultLabel, ms: number, reason?: ErrorReason): void {
    this.reconciles[result]++;
    if (reason) this.errors[reason]++;
    this.sink?.duration(ms / 1000);
    this.recent[this.recentCount++ % RECENT] = ms;
  }

  /** A reconcile started `ms` after the change that woke it was stored. */
  observeWakeUpLag(ms: number): void {
    this.sink?.wakeUpLag(Math.max(0, ms) / 1000);
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

/** What `Metrics.relay` reads (the relay's stats; see `@flotilla/events`). */
export interface RelaySource {
  readonly active: boolean;
  readonly stats: Readonly<{ published: number; duplicates: number; batches: number; errors: number; pruned: number }>;
}

/** What `Metrics.consumers` reads (a wake-up consumer's stats; see `@flotilla/events`). */
export interface ConsumerSource {
  readonly stats: Readonly<{ received: number; wakeUps: number; acked: number; naked: number; dropped: number; inFlight: number }>;
}

type Labels<L extends string> = Partial<Record<L, string | number>>;

/** Sets a counter to totals read at scrape time (prom-client counters only go up by inc). */
function setCounter<L extends string>(c: Counter<L>, rows: Array<[Labels<L>, number]>): void {
  c.reset();
  for (const [labels, v] of rows) c.inc(labels, v);
}

/** The process's one metrics registry and the families every service shares. */
export class Metrics {
  readonly registry = new Registry();
  private readonly controllerSet = new Set<HasMetrics>();
  private controllerFamilies?: { duration: Histogram<"controller">; lag: Histogram<"controller"> };
  private readonly relays = new Set<RelaySource>();
  private readonly consumerGroups = new Map<string, () => Iterable<ConsumerSource>>();
  private statements?: Histogram<"statement">;

  /** `process: false` leaves out the Node.js process metrics (prom-client's defaults, named as everywhere). */
  constructor(o: { process?: boolean } = {}) {
    if (o.process !== false) collectDefaultMetrics({ register: this.registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of everything registered. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], collect?: (this: Counter<L>) => void): Counter<L> {
    const have = this.registry.getSingleMetric(name);
    if (have) return have as Counter<L>;
    return new Counter<L>({ name: checkMetricName(name), help, labelNames, registers: [this.registry], collect });
  }

  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], collect?: (this: Gauge<L>) => void): Gauge<L> {
    const have = this.registry.getSingleMetric(name);
    if (have) return have as Gauge<L>;
    return new Gauge<L>({ name: checkMetricName(name), help, labelNames, registers: [this.registry], collect });
  }

  histogram<L extends string = never>(name: string, help: string, buckets: readonly number[], labelNames: readonly L[] = []): Histogram<L> {
    const have = this.registry.getSingleMetric(name);
    if (have) return have as Histogram<L>;
    return new Histogram<L>({ name: checkMetricName(name), help, labelNames, buckets: [...buckets], registers: [this.registry] });
  }

  /**
   * Registers controllers: queue depth, in-flight, backoff and parked keys, reconciles by
   * result and errors by reason, timers, resyncs, reconcile duration and wake-up lag, each
   * labelled with the controller's name.
   */
  controllers(list: Iterable<HasMetrics>): void {
    const f = this.controllerFamilyList();
    for (const c of list) {
      if (this.controllerSet.has(c)) continue;
      this.controllerSet.add(c);
      const s = c.snapshot();
      const duration = f.duration.labels({ controller: s.name });
      const lag = f.lag.labels({ controller: s.name });
      s.metrics.sink = { duration: (v) => duration.observe(v), wakeUpLag: (v) => lag.observe(v) };
    }
  }

  /**
   * Forgets every registered controller (their gauges and counters leave the exposition; the
   * duration and lag histograms keep what they observed): a start cut short is started again
   * with new controllers (see runService).
   */
  forgetControllers(): void {
    for (const c of this.controllerSet) c.snapshot().metrics.sink = undefined;
    this.controllerSet.clear();
  }

  private controllerFamilyList() {
    if (this.controllerFamilies) return this.controllerFamilies;
    const snaps = () => [...this.controllerSet].map((c) => c.snapshot());
    const gauge = (name: string, help: string, read: (s: ControllerSnapshot) => number) =>
      this.gauge(name, help, ["controller"], function () {
        this.reset();
        for (const s of snaps()) this.inc({ controller: s.name }, read(s));
      });
    gauge(METRICS.queueDepth, "Keys waiting to be reconciled.", (s) => s.queueDepth);
    gauge(METRICS.inFlight, "Reconciles running now.", (s) => s.inFlight);
    gauge(METRICS.backoffKeys, "Keys waiting out a retry backoff.", (s) => s.backoffKeys);
    gauge(METRICS.terminalKeys, "Keys parked after a terminal failure, run again only when their object changes.", (s) => s.terminalKeys ?? 0);
    this.counter(METRICS.reconcileTotal, "Reconciles by result.", ["controller", "result"], function () {
      setCounter(this, snaps().flatMap((s) => (Object.keys(s.metrics.reconciles) as ResultLabel[]).map((r) => [{ controller: s.name, result: r }, s.metrics.reconciles[r]] as [Labels<"controller" | "result">, number])));
    });
    this.counter(METRICS.reconcileErrors, "Failed reconciles by reason.", ["controller", "reason"], function () {
      setCounter(this, snaps().flatMap((s) => (Object.keys(s.metrics.errors) as ErrorReason[]).map((r) => [{ controller: s.name, reason: r }, s.metrics.errors[r]] as [Labels<"controller" | "reason">, number])));
    });
    const perController = (name: string, help: string, read: (s: ControllerSnapshot) => number) =>
      this.counter(name, help, ["controller"], function () {
        setCounter(this, snaps().map((s) => [{ controller: s.name }, read(s)]));
      });
    perController(METRICS.timersFired, "Durable timers claimed and enqueued.", (s) => s.metrics.timersFired);
    perController(METRICS.resyncs, "Periodic resyncs run.", (s) => s.metrics.resyncs);
    perController(METRICS.terminalSkips, "Wake-ups about a version a parked key already failed on, answered without a reconcile.", (s) => s.metrics.terminalSkips);
    perController(METRICS.keyBusy, "Reconciles put off because another replica held the key's lock (tried again shortly).", (s) => s.metrics.keyBusy);
    const duration = this.histogram(METRICS.reconcileDuration, "Reconcile duration.", DURATION_BUCKETS, ["controller"]);
    const lag = this.histogram(
      METRICS.wakeUpLag,
      "Time from a change being stored in the event stream to the start of the reconcile it woke (wake-ups only, not timers or resyncs).",
      LAG_BUCKETS,
      ["controller"],
    );
    this.controllerFamilies = { duration, lag };
    return this.controllerFamilies;
  }

  /** Registers the outbox relay of this process. */
  relay(r: RelaySource): void {
    const first = this.relays.size === 0;
    this.relays.add(r);
    if (!first) return;
    const sum = (read: (s: RelaySource["stats"]) => number) => [...this.relays].reduce((n, x) => n + read(x.stats), 0);
    const counter = (name: string, help: string, read: (s: RelaySource["stats"]) => number) =>
      this.counter(name, help, [], function () {
        setCounter(this, [[{}, sum(read)]]);
      });
    counter(METRICS.relayPublished, "Outbox rows published to the event stream (duplicates included).", (s) => s.published);
    counter(METRICS.relayDuplicates, "Published rows the stream had already stored (republished after a crash).", (s) => s.duplicates);
    counter(METRICS.relayBatches, "Outbox batches published.", (s) => s.batches);
    counter(METRICS.relayErrors, "Relay batches that failed and were retried.", (s) => s.errors);
    counter(METRICS.relayPruned, "Published outbox rows deleted after OUTBOX_RETENTION.", (s) => s.pruned);
    const relays = this.relays;
    this.gauge(METRICS.relayActive, "1 while this process's relay holds the relay lock (publishes), 0 while it stands by.", [], function () {
      this.set([...relays].some((x) => x.active) ? 1 : 0);
    });
  }

  /** Registers wake-up consumers under a name (the controller or durable they feed); `list` is read at each scrape. */
  consumers(name: string, list: () => Iterable<ConsumerSource>): void {
    const first = this.consumerGroups.size === 0;
    this.consumerGroups.set(name, list);
    if (!first) return;
    const groups = this.consumerGroups;
    const totals = () =>
      [...groups].map(([consumer, l]) => {
        const t = { received: 0, wakeUps: 0, acked: 0, naked: 0, dropped: 0, inFlight: 0 };
        for (const c of l()) for (const k of Object.keys(t) as Array<keyof typeof t>) t[k] += c.stats[k];
        return { consumer, t };
      });
    this.counter(METRICS.consumerMessages, "Wake-up messages received, by outcome (acked, naked: redelivered later, dropped: malformed).", ["consumer", "outcome"], function () {
      setCounter(
        this,
        totals().flatMap(({ consumer, t }) => [
          [{ consumer, outcome: "acked" }, t.acked],
          [{ consumer, outcome: "naked" }, t.naked],
          [{ consumer, outcome: "dropped" }, t.dropped],
        ]),
      );
    });
    this.counter(METRICS.consumerWakeUps, "Wake-ups received (a message may carry several).", ["consumer"], function () {
      setCounter(this, totals().map(({ consumer, t }) => [{ consumer }, t.wakeUps]));
    });
    this.gauge(METRICS.consumerInFlight, "Wake-ups whose handler is running (waiting for their reconcile).", ["consumer"], function () {
      this.reset();
      for (const { consumer, t } of totals()) this.set({ consumer }, t.inFlight);
    });
  }

  /** A `(statement, seconds)` observer for the object store's statements (see `StoreOptions.onStatement`). */
  statementObserver(): (statement: string, seconds: number) => void {
    this.statements ??= this.histogram(METRICS.storeStatementDuration, "Object store statements (batched reads and writes, lists) by kind.", STATEMENT_BUCKETS, ["statement"]);
    const h = this.statements;
    return (statement, seconds) => h.observe({ statement }, seconds);
  }
}
