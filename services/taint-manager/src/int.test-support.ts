import { loadConfig } from "@flotilla/config";
import type { ObjectRef, ObjectStore } from "@flotilla/store";
import { FAST_CONTROLLERS, clusterRef, startService, type TestDatabase } from "@flotilla/testkit";
import { rfc3339, type AnyResourceBinding, type Cluster, type Condition, type ResourceBinding, type ResourceBindingSpec, type Taint, type Toleration, type TargetCluster } from "@flotilla/api";
import { buildApp, type App } from "./app.js";
import { configSchema, type Config } from "./config.js";

export { clusterRef, rbRef } from "@flotilla/testkit";

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
  let cfg!: Config;
  const s = await startService({
    name: "taint-manager",
    build: (b) => {
      cfg = loadConfig(configSchema, { ...FAST, EVENTS_STREAM: b.stream, EVENTS_PREFIX: b.prefix, ...env });
      return buildApp({ store: o.store ? o.store(b.store) : b.store, sql: b.db.sql, log: b.log, cfg, js: b.js, runtime: { ...FAST_CONTROLLERS, abortGraceMs: 200 } });
    },
  });
  return { ...s, cfg };
}

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
