import { loadConfig } from "@flotilla/config";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay } from "@flotilla/events";
import { createLogger, silentLogger } from "@flotilla/log";
import { ObjectStore, type ObjectRef } from "@flotilla/store";
import { freshDatabase, uniqueName, NATS_URL, type TestDatabase } from "@flotilla/testkit";
import { rfc3339, type AggregatedStatusItem, type AnyResourceBinding, type Cluster, type GracefulEvictionTask, type ResourceBindingStatus, type TargetCluster } from "@flotilla/api";
import { buildApp, type App } from "./app.js";
import { configSchema, type Config } from "./config.js";

export const k8sNow = (offsetMs = 0) => rfc3339(Date.now() + offsetMs);

export interface Env {
  db: TestDatabase;
  store: ObjectStore;
  app: App;
  cfg: Config;
  close(): Promise<void>;
}

/** A fresh database and stream, a relay, and the eviction service built in-process. */
export async function setup(env: Record<string, string> = {}, o: { store?: (s: ObjectStore) => ObjectStore } = {}): Promise<Env> {
  const db = await freshDatabase();
  const nc = await connectNats({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("EV").toUpperCase();
  const prefix = uniqueName("ev");
  await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
  const store = new ObjectStore(db.sql);
  const relay = startRelay({ sql: db.sql, nc, stream, prefix, pollMs: 50, retentionMs: 0 });
  const cfg = loadConfig(configSchema, { GRACEFUL_EVICTION_TIMEOUT: "3s", RESYNC_PERIOD: "0", EVENTS_STREAM: stream, EVENTS_PREFIX: prefix, ...env });
  const log = process.env.LOG_LEVEL ? createLogger({ name: "eviction", level: process.env.LOG_LEVEL }) : silentLogger();
  const app = buildApp({
    store: o.store ? o.store(store) : store,
    sql: db.sql,
    log,
    cfg,
    js: jetstream(nc),
    runtime: { timerPollMs: 50, backoff: { baseMs: 20, maxMs: 500 }, stopTimeoutMs: 2000, abortGraceMs: 200 },
  });
  await app.start();
  return {
    db,
    store,
    app,
    cfg,
    async close() {
      await app.stop();
      await relay.stop();
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close();
      await db.drop();
    },
  };
}

export const clusterRef = (name: string): ObjectRef => ({ gk: "cluster.karmada.io/Cluster", namespace: "", name });
export const rbRef = (name: string, namespace = "default"): ObjectRef => ({ gk: "work.karmada.io/ResourceBinding", namespace, name });

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
