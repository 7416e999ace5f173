/**
 * Load scenarios of the binding service, as data. `detect`: templates + policies → bindings
 * (resource detector + policy controller only). `works`: scheduled bindings → Works (binding
 * controller only). Each measures a burst (inputs written while the service is stopped, then
 * drained) and a paced phase (inputs written at a fixed rate while it runs, for end-to-end latency).
 */
export interface Scenario {
  name: string;
  /** Deployments written for the burst, spread over `namespaces`. */
  templates: number;
  namespaces: number;
  /** Target clusters per binding (works scenario). */
  clusters: number;
  /** Paced phase: at most this many inputs per second (half the burst throughput unless `--paced-rate` is given), and how many. */
  pacedRate: number;
  pacedCount: number;
  /** Controller concurrency and the database pool size. */
  concurrency: number;
  pool: number;
}

export const SCENARIOS: Record<string, Scenario> = {
  full: { name: "full", templates: 20_000, namespaces: 20, clusters: 2, pacedRate: 500, pacedCount: 5_000, concurrency: 32, pool: 8 },
  smoke: { name: "smoke", templates: 300, namespaces: 3, clusters: 2, pacedRate: 100, pacedCount: 100, concurrency: 16, pool: 8 },
};
