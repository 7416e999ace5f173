// What the binding-level service runners (taint-manager, eviction) share: their scenarios and
// options, and the Ready Push clusters they write first.
import { parseArgs } from "node:util";
import { rfc3339, type Cluster } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";

const SCENARIOS: Record<string, { bindings: number; clusters: number }> = {
  full: { bindings: 10_000, clusters: 10 },
  smoke: { bindings: 300, clusters: 5 },
};

export interface BindingRunnerSettings {
  scenario: string;
  /** Bindings. */
  n: number;
  /** Clusters, member1..memberM. */
  m: number;
  clusters: string[];
  /** `--rate` (per second). */
  rate: number;
  /** `--concurrency`, as given. */
  concurrency: string;
  /** Connections of the service's pool. */
  pool: number;
}

/** `--scenario full|smoke [--bindings N] [--clusters M] [--rate R] [--concurrency C] [--pool P]`; at least two clusters (`why` says what the second is for). */
export function bindingRunnerSettings(defaults: { rate: string; concurrency: string }, why: string): BindingRunnerSettings {
  const { values } = parseArgs({
    options: {
      scenario: { type: "string", default: "full" },
      bindings: { type: "string" },
      clusters: { type: "string" },
      rate: { type: "string", default: defaults.rate },
      concurrency: { type: "string", default: defaults.concurrency },
      pool: { type: "string", default: "8" },
    },
  });
  const base = SCENARIOS[values.scenario!];
  if (!base) throw new Error(`unknown scenario ${values.scenario}; one of ${Object.keys(SCENARIOS).join(", ")}`);
  const m = Number(values.clusters ?? base.clusters);
  if (m < 2) throw new Error(`--clusters: at least 2 (${why})`);
  return {
    scenario: values.scenario!,
    n: Number(values.bindings ?? base.bindings),
    m,
    clusters: Array.from({ length: m }, (_, i) => `member${i + 1}`),
    rate: Number(values.rate),
    concurrency: values.concurrency!,
    pool: Number(values.pool),
  };
}

/** A Ready condition as the cluster status controller writes it. */
export function readyCondition(status: "True" | "False") {
  return { type: "Ready", status, reason: status === "True" ? "ClusterReady" : "ClusterNotReady", message: "", lastTransitionTime: rfc3339(new Date()) };
}

/** Push clusters named `names`, each Ready. */
export async function readyClusters(store: ObjectStore, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const c = await store.create<Cluster>({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name }, spec: { syncMode: "Push", apiEndpoint: `https://${name}.example:6443` } });
    await store.updateStatus({ ...c, status: { conditions: [readyCondition("True")] } });
  }
}
