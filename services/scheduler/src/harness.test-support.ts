// Runs the scheduler service the way main.ts does, against a fresh database, a NATS stream of its
// own and the outbox relay, for the integration tests.
import { createLogger } from "@flotilla/log";
import type { AnyResourceBinding, Cluster, KubeObject } from "@flotilla/api";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay, type NatsConnection, type RelayOptions } from "@flotilla/events";
import { ObjectStore, type ObjectRef } from "@flotilla/store";
import { freshDatabase, eventually, uniqueName, NATS_URL, type TestDatabase } from "@flotilla/testkit";
import { buildApp, type AppSettings, type SchedulerApp } from "./app.js";
import type { ReplicaEstimator } from "./controllers/estimates.js";
import type { BindingStore } from "./controllers/scheduler.js";
import { refOfKey } from "./logic/keys.js";

export const testSettings: AppSettings = {
  schedulerName: "default-scheduler",
  plugins: "*",
  concurrency: 8,
  maxFeasible: 25,
  unschedulableRetryMs: 60_000,
  retryBaseMs: 200,
  retryMaxMs: 2000,
  maxConflicts: 10,
  clusterRefreshMs: 60_000,
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
  const log = createLogger({ name: "scheduler", level: process.env.LOG_LEVEL ?? "silent" });
  const db = await freshDatabase();
  const nc: NatsConnection = await connectNats({ servers: NATS_URL });
  const relayNc: NatsConnection = await connectNats({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("SCH").toUpperCase();
  const prefix = uniqueName("sch");
  await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
  const store = new ObjectStore(db.sql);
  const relay = startRelay({ sql: db.sql, nc: relayNc, stream, prefix, pollMs: 50, ...o.relay });
  const replicas: SchedulerApp[] = [];
  const build = (own = store) =>
    buildApp({
      store: own,
      sql: db.sql,
      js: jetstream(nc),
      stream,
      prefix,
      log,
      settings: { ...testSettings, ...o.settings },
      bindings: o.bindings?.(store),
      estimator: o.estimator,
      ready: async () => true,
    });
  let app = build();
  const { grpcAddress } = await app.start({ host: "127.0.0.1", port: 0, grpcPort: 0 });
  const get = (key: string) => store.get<AnyResourceBinding>(refOfKey(key) as ObjectRef);
  return {
    db,
    store,
    get app() {
      return app;
    },
    async restart() {
      await app.stop();
      app = build();
      await app.start({ host: "127.0.0.1", port: 0 });
      return app;
    },
    async replica() {
      const r = build(new ObjectStore(db.sql));
      await r.start({ host: "127.0.0.1", port: 0 });
      replicas.push(r);
      return r;
    },
    grpcAddress: grpcAddress!,
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
    async close() {
      for (const r of replicas) await r.stop();
      await app.stop();
      await relay.stop();
      await jsm.streams.delete(stream).catch(() => {});
      await Promise.allSettled([nc.close(), relayNc.close()]);
      await db.drop();
    },
  };
}

/** The binding's `spec.clusters` as "name:replicas" strings. */
export function targets(b: Pick<KubeObject, "spec"> | undefined): string[] {
  return ((b?.spec?.clusters ?? []) as Array<{ name: string; replicas?: number }>).map((t) => `${t.name}:${t.replicas ?? 0}`);
}

export function scheduledCondition(b: AnyResourceBinding | undefined) {
  return b?.status?.conditions?.find((c) => c.type === "Scheduled");
}
