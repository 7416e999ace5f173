/**
 * Load scenarios of the execution service, as data.
 * - burst: `works` Works (one manifest each) spread over `clusters` members are written while the
 *   service is stopped; then it starts and drains them (wake-ups → member apply → Work status).
 * - paced: `pacedCount` Works written at `pacedRate`/s while it runs, for end-to-end latency
 *   (Work created → Applied=True in its status).
 * - probes: member health probes every `probeFrequencyMs` across all clusters during the run.
 */
export interface Scenario {
  name: string;
  clusters: number;
  works: number;
  /** "Deployment" (1 replica: status then health follow) or "ConfigMap" (applied only). */
  kind: "Deployment" | "ConfigMap";
  pacedRate: number;
  pacedCount: number;
  /** WORK_CONCURRENCY and the execution's Postgres pool. */
  concurrency: number;
  pool: number;
  /** CLUSTER_STATUS_UPDATE_FREQUENCY. */
  probeFrequencyMs: number;
  /** The simulator's delay before a Deployment's pods are ready. */
  readyDelayMs: number;
}

export const SCENARIOS: Record<string, Scenario> = {
  full: { name: "full", clusters: 100, works: 20_000, kind: "Deployment", pacedRate: 2000, pacedCount: 10_000, concurrency: 64, pool: 8, probeFrequencyMs: 10_000, readyDelayMs: 200 },
  smoke: { name: "smoke", clusters: 10, works: 500, kind: "Deployment", pacedRate: 200, pacedCount: 200, concurrency: 32, pool: 8, probeFrequencyMs: 1000, readyDelayMs: 100 },
};
