import type { Trigger } from "../logic/status.js";

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1] as const;

/** The scheduler's own counters, rendered in Prometheus text next to the controller runtime's. */
export class SchedulerMetrics {
  /** Decisions by Scheduled reason. */
  readonly results: Record<string, number> = { Success: 0, NoClusterFit: 0, Unschedulable: 0, SchedulerError: 0 };
  readonly triggers: Partial<Record<Trigger | "none", number>> = {};
  /** Optimistic-concurrency conflicts that made a reconcile re-read and recompute. */
  conflicts = 0;
  /** Wake-ups about a binding state this replica had already reconciled (its own writes, mostly). */
  wakeUpsSkipped = 0;
  readonly writes = { spec: 0, status: 0 };
  readonly estimates = { ok: 0, error: 0, cached: 0, skipped: 0, fallback: 0 };
  readonly simulations: Record<string, number> = { ok: 0, invalid: 0, error: 0 };
  private readonly buckets = new Array<number>(BUCKETS.length).fill(0);
  private count = 0;
  private sum = 0;

  /** Time spent in `schedule()` for one decision. */
  observeAlgorithm(ms: number): void {
    const s = ms / 1000;
    this.count++;
    this.sum += s;
    for (let i = 0; i < BUCKETS.length; i++) if (s <= BUCKETS[i]) this.buckets[i]++;
  }

  trigger(t: Trigger | "none"): void {
    this.triggers[t] = (this.triggers[t] ?? 0) + 1;
  }

  render(gauges: { unschedulable: number; clusters: number; assumedPods: number; leading: boolean }): string {
    const out: string[] = [];
    const counter = (name: string, help: string, rows: Array<[string, number]>) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      for (const [labels, v] of rows) out.push(`${name}${labels} ${v}`);
    };
    const gauge = (name: string, help: string, v: number) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${v}`);
    counter("flotilla_scheduler_schedule_total", "Scheduling decisions by the Scheduled condition's reason", Object.entries(this.results).map(([k, v]) => [`{result="${k}"}`, v]));
    counter("flotilla_scheduler_trigger_total", "Bindings looked at, by what called for scheduling (none: only the observed generation)", Object.entries(this.triggers).map(([k, v]) => [`{trigger="${k}"}`, v ?? 0]));
    counter("flotilla_scheduler_conflicts_total", "Writes that lost to a concurrent write and were recomputed", [["", this.conflicts]]);
    counter("flotilla_scheduler_wakeups_skipped_total", "Wake-ups about a binding state already reconciled here", [["", this.wakeUpsSkipped]]);
    counter("flotilla_scheduler_writes_total", "Binding writes by part", Object.entries(this.writes).map(([k, v]) => [`{part="${k}"}`, v]));
    counter("flotilla_scheduler_estimator_total", "Replica estimates by outcome", Object.entries(this.estimates).map(([k, v]) => [`{outcome="${k}"}`, v]));
    counter("flotilla_scheduler_simulations_total", "Simulate calls by outcome", Object.entries(this.simulations).map(([k, v]) => [`{outcome="${k}"}`, v]));
    const h = "flotilla_scheduler_algorithm_duration_seconds";
    out.push(`# HELP ${h} Time in the scheduling algorithm per decision`, `# TYPE ${h} histogram`);
    BUCKETS.forEach((b, i) => out.push(`${h}_bucket{le="${b}"} ${this.buckets[i]}`));
    out.push(`${h}_bucket{le="+Inf"} ${this.count}`, `${h}_sum ${this.sum}`, `${h}_count ${this.count}`);
    gauge("flotilla_scheduler_unschedulable_bindings", "Bindings waiting for capacity or a cluster change", gauges.unschedulable);
    gauge("flotilla_scheduler_clusters", "Clusters in the snapshot", gauges.clusters);
    gauge("flotilla_scheduler_assumed_pods", "Replicas assigned to clusters that their members have not reported running yet (the assumed ledger)", gauges.assumedPods);
    gauge("flotilla_scheduler_leading", "1 while this replica schedules (the leader), 0 while it stands by", gauges.leading ? 1 : 0);
    return out.join("\n") + "\n";
  }
}
