import { loadConfig } from "@flotilla/config";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay } from "@flotilla/events";
import { createLogger, silentLogger } from "@flotilla/log";
import { ObjectStore, type ObjectRef } from "@flotilla/store";
import { freshDatabase, uniqueName, NATS_URL, type TestDatabase } from "@flotilla/testkit";
import { rfc3339, type AnyResourceBinding, type Cluster, type Condition, type ResourceBinding, type ResourceBindingSpec, type Taint, type Toleration, type TargetCluster } from "@flotilla/api";
import { buildApp, type App } from "./app.js";
import { configSchema, type Config } from "./config.js";

export const k8sNow = (offsetMs = 0) => rfc3339(Date.now() + offsetMs);

/** Settings shrunk so a whole failover takes seconds. */
export const FAST: Record<string, string> = {
  FAILOVER_EVICTION_TIMEOUT: "1s",
  CLUSTER_MONITOR_GRACE_PERIOD: "60s",
  CLUSTER_STARTUP_GRACE_PERIOD: "60s",
  CLUSTER_TAINT_EVICTION_RETRY_FREQUENCY: "1s",
  CLUSTER_CLEANUP_RETRY_FREQUENCY: "300ms",
  FLEET_HEALTH_REFRESH: "200ms",
  RESYNC_PERIOD: "0",
};

export interface Env {
  db: TestDatabase;
  store: ObjectStore;
  app: App;
  cfg: Config;
  close(): Promise<void>;
}

/** A fresh database and stream, a relay, and the taint-manager built in-process with `env` on top of FAST. */
export async function setup(env: Record<string, string> = {}, o: { store?: (s: ObjectStore) => ObjectStore } = {}): Promise<Env> {
  const db = await freshDatabase();
  const nc = await connectNats({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("TM").toUpperCase();
  const prefix = uniqueName("tm");
  await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
  const store = new ObjectStore(db.sql);
  const relay = startRelay({ sql: db.sql, nc, stream, prefix, pollMs: 50, retentionMs: 0 });
  const cfg = loadConfig(configSchema, { ...FAST, EVENTS_STREAM: stream, EVENTS_PREFIX: prefix, ...env });
  const log = process.env.LOG_LEVEL ? createLogger({ name: "taint-manager", level: process.env.LOG_LEVEL }) : silentLogger();
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
export const crbRef = (name: string): ObjectRef => ({ gk: "work.karmada.io/ClusterResourceBinding", namespace: "", name });

export function readyCond(status: "True" | "False" | "Unknown", o: { transitionMs?: number; heartbeatMs?: number } = {}): Condition {
  return {
    type: "Ready",
    status,
    reason: status === "True" ? "ClusterReady" : "ClusterNotReady",
    message: "",
    lastTransitionTime: k8sNow(o.transitionMs ?? 0),
    ...(o.heartbeatMs !== undefined ? { lastHeartbeatTime: k8sNow(o.heartbeatMs) } : {}),
  };
}

export function makeCluster(name: string, o: { ready?: Condition; taints?: Taint[] } = {}): Cluster {
  return {
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name },
    spec: { syncMode: "Push", apiEndpoint: `https://${name}.example:6443`, ...(o.taints ? { taints: o.taints } : {}) },
    ...(o.ready ? { status: { conditions: [o.ready] } } : {}),
  };
}

export const NOT_READY_300: Toleration = { key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 };
export const UNREACHABLE_300: Toleration = { key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 };

export function makeBinding(
  name: string,
  clusters: TargetCluster[],
  o: { tolerations?: Toleration[]; namespace?: string; replicas?: number; failover?: ResourceBindingSpec["failover"] } = {},
): ResourceBinding {
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name, namespace: o.namespace ?? "default" },
    spec: {
      resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: o.namespace ?? "default", name },
      replicas: o.replicas ?? clusters.reduce((s, c) => s + (c.replicas ?? 0), 0),
      clusters,
      placement: { clusterTolerations: o.tolerations ?? [] },
      ...(o.failover ? { failover: o.failover } : {}),
    },
  };
}

export function makeClusterBinding(name: string, clusters: TargetCluster[], tolerations: Toleration[] = []): AnyResourceBinding {
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ClusterResourceBinding",
    metadata: { name },
    spec: { resource: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name }, clusters, placement: { clusterTolerations: tolerations } },
  };
}

/** Sets one status condition through the status subresource (replacing the one of its type), as a reporter on the member does. */
export async function setCondition(store: ObjectStore, name: string, cond: Condition): Promise<void> {
  await store.mutate<Cluster>(clusterRef(name), (c) => ({ ...c, status: { ...c.status, conditions: [...(c.status?.conditions ?? []).filter((x) => x.type !== cond.type), cond] } }), { status: true });
}

/** Sets the cluster's Ready condition, as the execution service does. */
export async function setReady(store: ObjectStore, name: string, ready: Condition): Promise<void> {
  await setCondition(store, name, ready);
}
