import { loadConfig } from "@flotilla/config";
import type { ObjectStore } from "@flotilla/store";
import { FAST_CONTROLLERS, rbRef, startService, type ServiceEnv, type TestDatabase } from "@flotilla/testkit";
import { rfc3339, type AggregatedStatusItem, type AnyResourceBinding, type Cluster, type GracefulEvictionTask, type ResourceBindingStatus, type TargetCluster } from "@flotilla/api";
import { buildApp, type App } from "./app.js";
import { configSchema, type Config } from "./config.js";

export { clusterRef, rbRef } from "@flotilla/testkit";

export const k8sNow = (offsetMs = 0) => rfc3339(Date.now() + offsetMs);

export interface Env {
  db: TestDatabase;
  store: ObjectStore;
  app: App;
  cfg: Config;
  /** Another replica of the service on the same database and stream (stopped by close()). */
  startAnother: ServiceEnv<App>["startAnother"];
  log: ServiceEnv<App>["log"];
  js: ServiceEnv<App>["js"];
  close(): Promise<void>;
}

/** A fresh database and stream, a relay, and the eviction service built in-process. */
export async function setup(env: Record<string, string> = {}, o: { store?: (s: ObjectStore) => ObjectStore } = {}): Promise<Env> {
  let cfg!: Config;
  const s = await startService({
    name: "eviction",
    build: (b) => {
      cfg = loadConfig(configSchema, { GRACEFUL_EVICTION_TIMEOUT: "3s", RESYNC_PERIOD: "0", EVENTS_STREAM: b.stream, EVENTS_PREFIX: b.prefix, ...env });
      return buildApp({ store: o.store ? o.store(b.store) : b.store, sql: b.db.sql, log: b.log, cfg, js: b.js, runtime: { ...FAST_CONTROLLERS, abortGraceMs: 200 } });
    },
  });
  return { ...s, cfg };
}

export function makeCluster(name: string, ready: "True" | "False" | "Unknown"): Cluster {
  return {
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name },
    spec: { syncMode: "Push", apiEndpoint: `https://${name}.example:6443` },
    status: { conditions: [{ type: "Ready", status: ready, lastTransitionTime: k8sNow() }] },
  };
}

export const DIVIDED = { replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } };

export function task(o: Partial<GracefulEvictionTask> = {}): GracefulEvictionTask {
  return { fromCluster: "member1", replicas: 1, reason: "TaintUntolerated", producer: "TaintManager", purgeMode: "Gracefully", creationTimestamp: k8sNow(), ...o };
}

/** A Divided binding of `replicas` on `clusters` with `tasks`. */
export function makeBinding(name: string, replicas: number, clusters: TargetCluster[], tasks: GracefulEvictionTask[]): AnyResourceBinding {
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name, namespace: "default" },
    spec: {
      resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name },
      replicas,
      clusters,
      placement: { ...DIVIDED },
      gracefulEvictionTasks: tasks,
    },
  };
}

/**
 * What the scheduler and the binding controller write once the binding is scheduled and its
 * Works report: each cluster's health, and (`status`) the resource's status there.
 */
export async function reportStatus(store: ObjectStore, name: string, health: Record<string, string>, observed = true, status: Record<string, NonNullable<AggregatedStatusItem["status"]>> = {}): Promise<void> {
  await store.mutate<AnyResourceBinding>(
    rbRef(name),
    (b) => {
      const next: ResourceBindingStatus = {
        ...b.status,
        schedulerObservedGeneration: observed ? b.metadata.generation : (b.metadata.generation ?? 1) - 1,
        aggregatedStatus: Object.entries(health).map(([clusterName, h]) => ({ clusterName, applied: true, health: h, ...(status[clusterName] ? { status: status[clusterName] } : {}) })),
      };
      return { ...b, status: next };
    },
    { status: true },
  );
}
