import type { TestContext } from "node:test";
import { createLogger } from "@flotilla/log";
import { KARMADA, CORE, executionNamespace, groupKind, ExecutionControllerFinalizer, type Cluster, type KubeObject, type Work } from "@flotilla/api";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay } from "@flotilla/events";
import { startSimulator, type ClusterConfig, type Simulator } from "@flotilla/member-sim";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase, uniqueName, NATS_URL, type TestDatabase } from "@flotilla/testkit";
import { buildExecution, type Execution, type ExecutionSettings } from "./app.js";

export const log = createLogger({ name: "execution-test", level: process.env.LOG_LEVEL ?? "silent" });
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
  const db = await freshDatabase();
  const nc = await connectNats({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("EX").toUpperCase();
  const prefix = uniqueName("ex");
  await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
  const relay = startRelay({ sql: db.sql, nc, stream, prefix, pollMs: 20, retentionMs: 0 });
  const store = new ObjectStore(db.sql);
  const sim = await startSimulator({ admin: false, defaults: { readyDelayMs: o.readyDelayMs ?? 50 }, clusters: o.clusters });
  const build = (over?: ObjectStore) =>
    buildExecution({
      store: over ?? store,
      sql: db.sql,
      js: jetstream(nc),
      log,
      // the simulator serves plain http on 127.0.0.1
      settings: { ...FAST, MEMBER_ALLOW_HTTP: "loopback", ...o.settings, EVENTS_STREAM: stream, EVENTS_PREFIX: prefix },
      runner: { timerPollMs: 20, backoff: { baseMs: 20, maxMs: 300 } },
    });
  let exec = build();
  let running = true;
  const { estimatorAddress } = await exec.start({ estimatorPort: 0 });
  t.after(async () => {
    if (running) await exec.stop();
    await relay.stop();
    await sim.close();
    await jsm.streams.delete(stream).catch(() => {});
    await nc.close();
    await db.drop();
  });
  return {
    db,
    store,
    sim,
    get exec() {
      return exec;
    },
    estimatorAddress: estimatorAddress!,
    async stopExecution() {
      if (running) await exec.stop();
      running = false;
    },
    async startAgain(so) {
      if (running) await exec.stop();
      exec = build(so?.store);
      running = true;
      await exec.start();
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
