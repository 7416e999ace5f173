import type { Metrics } from "@flotilla/runtime";
import type { Trigger } from "../logic/status.js";

/** The scheduler's metric names (besides the controller runtime's). */
export const SCHEDULER_METRICS = {
  schedule: "flotilla_scheduler_schedule_total",
  trigger: "flotilla_scheduler_trigger_total",
  conflicts: "flotilla_scheduler_conflicts_total",
  wakeUpsSkipped: "flotilla_scheduler_wakeups_skipped_total",
  debounced: "flotilla_scheduler_debounced_total",
  writes: "flotilla_scheduler_writes_total",
  estimator: "flotilla_scheduler_estimator_total",
  simulations: "flotilla_scheduler_simulations_total",
  failureSimulations: "flotilla_scheduler_failure_simulations_total",
  algorithmDuration: "flotilla_scheduler_algorithm_duration_seconds",
  unschedulable: "flotilla_scheduler_unschedulable_bindings",
  clusters: "flotilla_scheduler_clusters",
  assumedPods: "flotilla_scheduler_assumed_pods",
  leading: "flotilla_scheduler_leading",
} as const;

export interface SchedulerGauges {
  unschedulable: number;
  clusters: number;
  assumedPods: number;
  leading: boolean;
}

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1] as const;

/** The scheduler's own counters (read by tests directly), registered with the process's registry by `register`. */
export class SchedulerMetrics {
  /** Decisions by Scheduled reason. */
  readonly results: Record<string, number> = { Success: 0, NoClusterFit: 0, Unschedulable: 0, SchedulerError: 0 };
  readonly triggers: Partial<Record<Trigger | "none", number>> = {};
  /** Optimistic-concurrency conflicts that made a reconcile re-read and recompute. */
  conflicts = 0;
  /** Wake-ups about a binding state this replica had already reconciled (its own writes, mostly). */
  wakeUpsSkipped = 0;
  /** Passes that left a binding's update waiting out BINDING_UPDATE_DEBOUNCE instead of scheduling it. */
  debounced = 0;
  readonly writes = { spec: 0, status: 0 };
  readonly estimates = { ok: 0, error: 0, cached: 0, skipped: 0, fallback: 0 };
  readonly simulations: Record<string, number> = { ok: 0, invalid: 0, error: 0 };
  readonly failureSimulations: Record<string, number> = { ok: 0, invalid: 0, error: 0 };
  private algorithm?: (seconds: number) => void;

  /** Time spent in `schedule()` for one decision. */
  observeAlgorithm(ms: number): void {
    this.algorithm?.(ms / 1000);
  }

  trigger(t: Trigger | "none"): void {
    this.triggers[t] = (this.triggers[t] ?? 0) + 1;
  }

  /**
   * Puts these counters, the algorithm's duration and the gauges `read` gives into the
   * process's registry (the counters are read at each scrape).
   */
  register(metrics: Metrics, read: () => SchedulerGauges): void {
    const counter = (name: string, help: string, label: string, rows: () => Array<[string, number]>) =>
      metrics.counter(name, help, label ? [label] : [], function () {
        this.reset();
        for (const [v, n] of rows()) {
          if (label) this.inc({ [label]: v }, n);
          else this.inc(n);
        }
      });
    counter(SCHEDULER_METRICS.schedule, "Scheduling decisions by the Scheduled condition's reason", "result", () => Object.entries(this.results));
    counter(SCHEDULER_METRICS.trigger, "Bindings looked at, by what called for scheduling (none: only the observed generation)", "trigger", () => Object.entries(this.triggers).map(([k, v]) => [k, v ?? 0]));
    counter(SCHEDULER_METRICS.conflicts, "Writes that lost to a concurrent write and were recomputed", "", () => [["", this.conflicts]]);
    counter(SCHEDULER_METRICS.wakeUpsSkipped, "Wake-ups about a binding state already reconciled here", "", () => [["", this.wakeUpsSkipped]]);
    counter(SCHEDULER_METRICS.debounced, "Passes that left a binding's replica or placement update waiting out BINDING_UPDATE_DEBOUNCE", "", () => [["", this.debounced]]);
    counter(SCHEDULER_METRICS.writes, "Binding writes by part", "part", () => Object.entries(this.writes));
    counter(SCHEDULER_METRICS.estimator, "Replica estimates by outcome", "outcome", () => Object.entries(this.estimates));
    counter(SCHEDULER_METRICS.simulations, "Simulate calls by outcome", "outcome", () => Object.entries(this.simulations));
    counter(SCHEDULER_METRICS.failureSimulations, "SimulateFailure calls by outcome", "outcome", () => Object.entries(this.failureSimulations));
    const h = metrics.histogram(SCHEDULER_METRICS.algorithmDuration, "Time in the scheduling algorithm per decision", BUCKETS);
    this.algorithm = (s) => h.observe(s);
    const gauge = (name: string, help: string, pick: (g: SchedulerGauges) => number) =>
      metrics.gauge(name, help, [], function () {
        this.set(pick(read()));
      });
    gauge(SCHEDULER_METRICS.unschedulable, "Bindings waiting for capacity or a cluster change", (g) => g.unschedulable);
    gauge(SCHEDULER_METRICS.clusters, "Clusters in the snapshot", (g) => g.clusters);
    gauge(SCHEDULER_METRICS.assumedPods, "Replicas assigned to clusters that their members have not reported running yet (the assumed ledger)", (g) => g.assumedPods);
    gauge(SCHEDULER_METRICS.leading, "1 while this replica schedules (the leader), 0 while it stands by", (g) => (g.leading ? 1 : 0));
  }
}
