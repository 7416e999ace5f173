import { renderTable } from "./table.js";

/**
 * `flotilla simulate-failure member1 [member2 ...]`: the FailureSimulation the command sends, and
 * the answer as a table per binding (BINDING, FROM, TO, RESULT, DETAIL) and one of the capacity
 * left per cluster (CLUSTER, STATE, RECEIVES, PODS, CPU, MEMORY, each "before -> after").
 */

export const FAILURE_SIMULATIONS_PATH = "/apis/scheduling.flotilla.io/v1alpha1/failuresimulations";

export class SimulateFailureError extends Error {
  override readonly name = "SimulateFailureError";
}

/** The request for these cluster names (the server checks they exist). */
export function failureSimulation(clusters: readonly string[]): Record<string, unknown> {
  if (!clusters.length) throw new SimulateFailureError("simulate-failure needs at least one cluster name: simulate-failure member1 [member2 ...]");
  return { apiVersion: "scheduling.flotilla.io/v1alpha1", kind: "FailureSimulation", metadata: { name: `fail-${clusters.join("-")}`.slice(0, 253) }, spec: { clusters: [...clusters] } };
}

interface Placed {
  name: string;
  replicas: number;
}
interface Outcome {
  kind?: string;
  namespace?: string;
  name?: string;
  result?: string;
  before?: Placed[];
  after?: Placed[];
  evictions?: Array<{ cluster: string; replicas?: number; afterSeconds?: number; purgeMode?: string }>;
  tolerated?: string[];
  message?: string;
}
interface Left {
  pods?: number;
  cpu?: string;
  memory?: string;
}
interface Capacity {
  name?: string;
  failed?: boolean;
  receives?: number;
  before?: Left;
  after?: Left;
}
export interface FailureSimulationStatus {
  failedClusters?: string[];
  bindings?: Outcome[];
  capacity?: Capacity[];
}

const placed = (ps: readonly Placed[] | undefined) => (ps?.length ? ps.map((p) => `${p.name}:${p.replicas}`).join(",") : "-");
const ref = (o: Outcome) => `${o.kind === "ClusterResourceBinding" ? "crb/" : ""}${o.namespace ? `${o.namespace}/` : ""}${o.name ?? ""}`;

function detail(o: Outcome): string {
  const parts: string[] = [];
  const later = (o.evictions ?? []).filter((e) => e.afterSeconds !== undefined);
  if (later.length) parts.push(later.map((e) => `evicted from ${e.cluster} after ${e.afterSeconds}s`).join(", "));
  const purge = [...new Set((o.evictions ?? []).map((e) => e.purgeMode).filter((m) => m && m !== "Gracefully"))];
  if (purge.length) parts.push(`purgeMode ${purge.join(",")}`);
  if (o.result !== "Rescheduled" && o.message) parts.push(o.message);
  return parts.join("; ") || "-";
}

const change = (a: string | number | undefined, b: string | number | undefined) => (a === undefined ? "-" : b === undefined || String(a) === String(b) ? String(a) : `${a} -> ${b}`);

/** The answer as two tables. */
export function failureSimulationTables(s: FailureSimulationStatus): string {
  const failed = s.failedClusters ?? [];
  const bindings = s.bindings ?? [];
  let out = `Failing ${failed.join(", ")}: ${bindings.length} binding(s) placed there\n`;
  if (bindings.length) {
    out += renderTable({
      headers: ["BINDING", "FROM", "TO", "RESULT", "DETAIL"],
      rows: bindings.map((o) => [ref(o), placed(o.before), placed(o.after), o.result ?? "", detail(o)]),
    });
  }
  out += "\nCapacity left:\n";
  out += renderTable({
    headers: ["CLUSTER", "STATE", "RECEIVES", "PODS", "CPU", "MEMORY"],
    rows: (s.capacity ?? []).map((c) => [
      c.name ?? "",
      c.failed ? "failed" : "up",
      String(c.receives ?? 0),
      c.failed ? "-" : change(c.before?.pods, c.after?.pods),
      c.failed ? "-" : change(c.before?.cpu, c.after?.cpu),
      c.failed ? "-" : change(c.before?.memory, c.after?.memory),
    ]),
  });
  return out;
}
