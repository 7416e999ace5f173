import type { AnyResourceBinding } from "@flotilla/api";
import { schedule } from "@flotilla/scheduling";
import { parseSimulation, simulationResponse } from "../logic/simulation.js";
import { capacityInputs, type AssumedLedger } from "../logic/assumed.js";
import type { EstimatorAnswer } from "../logic/estimates.js";
import type { ClusterCache } from "./cluster-cache.js";
import type { SchedulerMetrics } from "./metrics.js";

export interface SimulateDeps {
  clusters: Pick<ClusterCache, "refreshAll" | "snapshot">;
  estimates: { forBinding(b: AnyResourceBinding): Promise<EstimatorAnswer | undefined> };
  /** The load assigned and not yet reported, taken into account for the current clusters (not for inline ones). */
  ledger?: Pick<AssumedLedger, "load" | "settledThrough">;
  plugins: string;
  metrics: SchedulerMetrics;
  clock?: () => Date;
}

/**
 * Answers a Simulation with the same `schedule()` the controller runs, writing nothing. Inline
 * clusters are scheduled against as given (general estimator only: the replica estimator does
 * not know them); without them the current clusters are re-listed and the estimator is asked as
 * for a real binding.
 */
export function simulator(d: SimulateDeps): (body: unknown) => Promise<Record<string, unknown>> {
  const clock = d.clock ?? (() => new Date());
  return async (body) => {
    let sim;
    try {
      sim = parseSimulation(body);
    } catch (e) {
      d.metrics.simulations.invalid++;
      throw e;
    }
    try {
      let clusters = sim.clusters;
      let inputs: ReturnType<typeof capacityInputs> = {};
      if (!clusters) {
        await d.clusters.refreshAll();
        const answer = await d.estimates.forBinding(sim.binding);
        const snapshot = d.clusters.snapshot();
        clusters = [...snapshot];
        // read as a decision reads them (see the scheduler)
        inputs = capacityInputs(d.ledger, snapshot, answer, Date.now());
      }
      const result = schedule({ binding: sim.binding, clusters, estimates: inputs.estimates, assumed: inputs.assumed, enabled: d.plugins });
      d.metrics.simulations.ok++;
      return simulationResponse(sim, result, clock());
    } catch (e) {
      d.metrics.simulations.error++;
      throw e;
    }
  };
}
