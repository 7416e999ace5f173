// Runs the scheduler service the way main.ts does, against a fresh database, a NATS stream of its
// own and the outbox relay, for the integration tests.
import { bindingRefOfKey, type AnyResourceBinding, type Cluster, type KubeObject } from "@flotilla/api";
import type { RelayOptions } from "@flotilla/events";
import { ObjectStore, type ObjectRef } from "@flotilla/store";
import { eventually, startService, type ServiceBackends, type TestDatabase } from "@flotilla/testkit";
import { testGrpcSecurity, type TestGrpcSecurity } from "@flotilla/auth/testing";
import { buildApp, type AppSettings, type SchedulerApp } from "./app.js";
import type { ReplicaEstimator } from "./controllers/estimates.js";
import type { BindingStore } from "./controllers/scheduler.js";

export const testSettings: AppSettings = {
  schedulerName: "default-scheduler",
  plugins: "*",
  concurrency: 8,
  maxFeasible: 25,
  unschedulableRetryMs: 60_000,
  retryBaseMs: 200,
  retryMaxMs: 2000,
  maxConflicts: 10,
  resyncMs: 0,
  estimatorDeadlineMs: 200,
  estimatorCacheTtlMs: 1000,
  estimatorRetryAfterMs: 1000,
  // the clusters here have no members that report back: capacity is the summary as written
  // (upstream's behaviour); assumed.int.test.ts runs with the ledger
  assumedLedger: false,
  assumedSettleMs: 30_000,
};

export interface Harness {
  db: TestDatabase;
  store: ObjectStore;
  /** The running scheduler (replaced by `restart`). */
  app: SchedulerApp;
  /** Stops the scheduler and starts a new one on the same database and stream, as after a crash. */
  restart(): Promise<SchedulerApp>;
  /** Starts one more replica (a store of its own, the same database, stream and durable consumer); stopped by close(). */
  replica(): Promise<SchedulerApp>;
  grpcAddress: string;
  /** The gRPC API's certificate and service-account keys (callers: `grpc.caller(store, identity)`). */
  grpc: TestGrpcSecurity;
  createCluster(c: Cluster): Promise<Cluster>;
  /** Re-reads, applies `f`, writes back (retrying on conflict); spec and status together. */
  mutateCluster(name: string, f: (c: Cluster) => void): Promise<void>;
  createBinding<T extends AnyResourceBinding>(b: T): Promise<T>;
  get(key: string): Promise<AnyResourceBinding | undefined>;
  /** Waits until `check` holds for the binding, returning it. */
  until(key: string, check: (b: AnyResourceBinding) => boolean, timeoutMs?: number): Promise<AnyResourceBinding>;
  close(): Promise<void>;
}

export async function startHarness(o: { settings?: Partial<AppSettings>; bindings?: (store: ObjectStore) => BindingStore; estimator?: ReplicaEstimator; relay?: Partial<RelayOptions> } = {}): Promise<Harness> {
  const security = await testGrpcSecurity();
  const build = (b: ServiceBackends, own = b.store) =>
    buildApp({
      store: own,
      sql: b.db.sql,
      js: b.js,
      stream: b.stream,
      prefix: b.prefix,
      log: b.log,
      settings: { ...testSettings, ...o.settings },
      bindings: o.bindings?.(b.store),
      estimator: o.estimator,
      ready: async () => true,
      grpcSecurity: security.server(own, b.log),
    });
  const env = await startService({ name: "scheduler", build, start: (a) => a.start({ host: "127.0.0.1", port: 0, grpcPort: 0 }), relay: { ownConnection: true, ...o.relay } }).catch((e: unknown) => {
    security.remove();
    throw e;
  });
  const { db, store } = env;
  const startAnother = (a: SchedulerApp) => env.startAnother(a, (x) => x.start({ host: "127.0.0.1", port: 0 }));
  let app = env.app;
  const get = (key: string) => store.get<AnyResourceBinding>(bindingRefOfKey(key)! as ObjectRef);
  return {
    db,
    store,
    get app() {
      return app;
    },
    async restart() {
      await app.stop();
      app = build(env);
      return startAnother(app);
    },
    replica: () => startAnother(build(env, new ObjectStore(db.sql))),
    grpcAddress: env.started.grpcAddress!,
    grpc: security,
    async createCluster(c) {
      const created = await store.create(c);
      // like an informer that has synced: bindings created next are scheduled against this cluster
      await eventually(() => app.clusters.get(c.metadata.name!)?.metadata.resourceVersion === created.metadata.resourceVersion);
      return created;
    },
    async mutateCluster(name, f) {
      const ref = { gk: "cluster.karmada.io/Cluster", name };
      await store.mutate<Cluster>(ref, (c) => (f(c), c));
      await store.mutate<Cluster>(ref, (c) => (f(c), c), { status: true });
    },
    createBinding: (b) => store.create(b),
    get,
    async until(key, check, timeoutMs = 10_000) {
      return eventually(
        async () => {
          const b = await get(key);
          return b && check(b) ? b : undefined;
        },
        { timeoutMs, message: `binding ${key} did not reach the expected state` },
      );
    },
    close: () => env.close().finally(() => security.remove()),
  };
}

/** The binding's `spec.clusters` as "name:replicas" strings. */
export function targets(b: Pick<KubeObject, "spec"> | undefined): string[] {
  return ((b?.spec?.clusters ?? []) as Array<{ name: string; replicas?: number }>).map((t) => `${t.name}:${t.replicas ?? 0}`);
}

export function scheduledCondition(b: AnyResourceBinding | undefined) {
  return b?.status?.conditions?.find((c) => c.type === "Scheduled");
}
