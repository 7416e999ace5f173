import { bindingsIn, type RepositoryStore } from "@flotilla/store";
import { failureSimulationResponse, parseFailureSimulation, simulateFailure } from "../logic/failure-simulation.js";
import { reportTimesOf, type AssumedLedger } from "../logic/assumed.js";

import type { ClusterCache } from "./cluster-cache.js";
import type { SchedulerMetrics } from "./metrics.js";

export interface SimulateFailureDeps {
  clusters: Pick<ClusterCache, "refreshAll" | "snapshot">;
  store: RepositoryStore;
  /** The load assigned and not yet reported, the base every move is added to. */
  ledger?: Pick<AssumedLedger, "load">;
  plugins: string;
  schedulerName: string;
  metrics: SchedulerMetrics;
  clock?: () => Date;
}

/**
 * Answers a FailureSimulation against the current fleet, writing nothing: the clusters are
 * re-listed, every ResourceBinding and ClusterResourceBinding read, and `simulateFailure` runs
 * the same `schedule()` the controller does for each evicted binding. Capacity comes from the
 * clusters' resourceSummary and the assumed ledger; the member replica estimator is not asked.
 */
export function failureSimulator(d: SimulateFailureDeps): (body: unknown) => Promise<Record<string, unknown>> {
  const clock = d.clock ?? (() => new Date());
  return async (body) => {
    await d.clusters.refreshAll();
    const snapshot = d.clusters.snapshot();
    const clusters = [...snapshot];
    let sim;
    try {
      sim = parseFailureSimulation(body, new Set(clusters.map((c) => c.metadata.name ?? "")));
    } catch (e) {
      d.metrics.failureSimulations.invalid++;
      throw e;
    }
    try {
      const bindings = await bindingsIn(d.store).list();
      const status = simulateFailure({
        failed: sim.clusters,
        clusters,
        bindings,
        assumed: d.ledger?.load(Date.now(), (c) => reportTimesOf(snapshot).get(c)),
        plugins: d.plugins,
        schedulerName: d.schedulerName,
        now: clock(),
      });
      d.metrics.failureSimulations.ok++;
      return failureSimulationResponse(sim, status);
    } catch (e) {
      d.metrics.failureSimulations.error++;
      throw e;
    }
  };
}
