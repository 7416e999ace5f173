import type { TestContext } from "node:test";
import { KARMADA, CORE, executionNamespace, groupKind, ExecutionControllerFinalizer, type Cluster, type KubeObject, type Work } from "@flotilla/api";
import { startSimulator, type ClusterConfig, type Simulator } from "@flotilla/member-sim";
import type { ObjectStore } from "@flotilla/store";
import { startService, testLogger, type ServiceBackends, type TestDatabase } from "@flotilla/testkit";
import { testGrpcSecurity, type TestGrpcSecurity } from "@flotilla/auth/testing";
import { buildExecution, type Execution, type ExecutionSettings } from "./app.js";

export const log = testLogger("execution-test");
export const WORK = groupKind(KARMADA.work);
export const CLUSTER = groupKind(KARMADA.cluster);
export const SECRET = groupKind(CORE.secret);

/** Timing knobs shrunk so a whole failure/recovery runs in about a second. */
export const FAST: Partial<ExecutionSettings> = {
  CLUSTER_STATUS_UPDATE_FREQUENCY: 200,
  CLUSTER_FAILURE_THRESHOLD: 1000,
  CLUSTER_SUCCESS_THRESHOLD: 1000,
  CLUSTER_PROBE_TIMEOUT: 500,
  CLUSTER_CACHE_REFRESH: 200,
  MEMBER_REQUEST_TIMEOUT: 2000,
  WORK_RESYNC_PERIOD: 0,
  WORK_RETRY_INTERVAL: 300,
};

export interface Harness {
  db: TestDatabase;
  store: ObjectStore;
  sim: Simulator;
  /** The running execution service (replaced by `restart`). */
  readonly exec: Execution;
  estimatorAddress: string;
  /** The estimator's certificate and service-account keys (callers: `grpc.caller(store, identity)`). */
  grpc: TestGrpcSecurity;
  /** Stops the execution service; `startAgain` then runs a new one on the same database and stream (through `store` when given: a wrapper that fails on purpose, say). */
  stopExecution(): Promise<void>;
  /** A new execution service (fresh memory: no clients, informers or records) on the same database and stream. */
  startAgain(o?: { store?: ObjectStore }): Promise<Execution>;
  /** Creates the Secret (karmada-cluster/<name>, data.token) and the Cluster for a simulated member. */
  join(name: string, o?: { token?: string }): Promise<Cluster>;
  /** Creates a Work for `cluster` holding `manifests`, with the execution finalizer as the binding controller sets it. */
  work(cluster: string, name: string, manifests: KubeObject[], o?: { annotations?: Record<string, string>; suspend?: boolean; finalizer?: boolean }): Promise<Work>;
  getWork(cluster: string, name: string): Promise<Work | undefined>;
  getCluster(name: string): Promise<Cluster | undefined>;
}

/** A fresh database, stream, relay, simulator and execution service, torn down after the test. */
export async function harness(t: TestContext, o: { clusters: ClusterConfig[]; readyDelayMs?: number; settings?: Partial<ExecutionSettings> }): Promise<Harness> {
  const security = await testGrpcSecurity();
  t.after(() => security.remove());
  const sim = await startSimulator({ admin: false, defaults: { readyDelayMs: o.readyDelayMs ?? 50 }, clusters: o.clusters });
  const build = (b: ServiceBackends, store = b.store) =>
    buildExecution({
      store,
      sql: b.db.sql,
      js: b.js,
      log,
      // the simulator serves plain http on 127.0.0.1
      settings: { ...FAST, MEMBER_ALLOW_HTTP: "loopback", ...o.settings, EVENTS_STREAM: b.stream, EVENTS_PREFIX: b.prefix },
      runner: { timerPollMs: 20, backoff: { baseMs: 20, maxMs: 300 } },
      grpcSecurity: security.server(store, log),
    });
  const env = await startService({ name: "execution", log, relay: { pollMs: 20 }, build, start: (e) => e.start({ estimatorPort: 0 }) }).catch(async (e: unknown) => {
    await sim.close();
    throw e;
  });
  t.after(async () => {
    await env.close();
    await sim.close();
  });
  const { store } = env;
  let exec = env.app;
  return {
    db: env.db,
    store,
    sim,
    get exec() {
      return exec;
    },
    estimatorAddress: env.started.estimatorAddress!,
    grpc: security,
    stopExecution: () => exec.stop(),
    async startAgain(so) {
      await exec.stop();
      exec = build(env, so?.store);
      await env.startAnother(exec, (e) => e.start());
      return exec;
    },
    async join(name, jo = {}) {
      const c = sim.cluster(name);
      await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "karmada-cluster" }, type: "Opaque", data: { token: Buffer.from(jo.token ?? c.token).toString("base64") } });
      return store.create<Cluster>({
        apiVersion: "cluster.karmada.io/v1alpha1",
        kind: "Cluster",
        metadata: { name, finalizers: ["karmada.io/cluster-controller"] },
        spec: { apiEndpoint: c.url, secretRef: { namespace: "karmada-cluster", name }, syncMode: "Push" },
      });
    },
    async work(cluster, name, manifests, wo = {}) {
      return store.create<Work>({
        apiVersion: "work.karmada.io/v1alpha1",
        kind: "Work",
        metadata: { name, namespace: executionNamespace(cluster), ...(wo.finalizer === false ? {} : { finalizers: [ExecutionControllerFinalizer] }), ...(wo.annotations ? { annotations: wo.annotations } : {}) },
        spec: { workload: { manifests: manifests as never }, ...(wo.suspend ? { suspendDispatching: true } : {}) },
      });
    },
    getWork: (cluster, name) => store.get<Work>({ gk: WORK, namespace: executionNamespace(cluster), name }),
    getCluster: (name) => store.get<Cluster>({ gk: CLUSTER, name }),
  };
}

export function deployment(name: string, replicas: number, o: { namespace?: string; cpu?: string; memory?: string; image?: string; annotations?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: o.namespace ?? "default", labels: { app: name }, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image: o.image ?? "nginx:1.25", resources: { requests: { cpu: o.cpu ?? "100m", memory: o.memory ?? "128Mi" } } }] },
      },
    },
  };
}

export function configMap(name: string, data: Record<string, string>, namespace = "default"): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

export function condition(obj: { status?: { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] } } | undefined, type: string) {
  return obj?.status?.conditions?.find((c) => c.type === type);
}
