import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import * as grpc from "@grpc/grpc-js";
import type { AnyResourceBinding } from "@flotilla/api";
import { groupKindOf, subjectFor, type JetStreamClient, type WakeUpConsumer } from "@flotilla/events";
import type { Logger } from "@flotilla/log";
import { Informer, SeenVersions, createController, objectKey, renderMetrics, wireWakeUps, type Controller, type KeyMapper } from "@flotilla/runtime";
import { enabledPluginNames, inTreeRegistry } from "@flotilla/scheduling";
import type { ObjectStore, Sql } from "@flotilla/store";
import { ClusterCache } from "./controllers/cluster-cache.js";
import { EstimateCache, type ReplicaEstimator } from "./controllers/estimates.js";
import { clusterKeys } from "./controllers/fan-out.js";
import { SchedulerMetrics } from "./controllers/metrics.js";
import { bindingScheduler, type BindingStore, type SchedulerSettings } from "./controllers/scheduler.js";
import { simulator } from "./controllers/simulate.js";
import { BindingTracker } from "./controllers/tracker.js";
import { schedulerServiceDefinition, schedulerServiceHandlers } from "./grpc.js";
import { AssumedLedger, bindingLoad } from "./logic/assumed.js";
import { CLUSTER_GK, CRB_GK, RB_GK, bindingKey } from "./logic/keys.js";

export interface AppSettings extends SchedulerSettings {
  /** Bindings scheduled at once. */
  concurrency: number;
  /** Full re-list of the cluster snapshot. */
  clusterRefreshMs: number;
  /** Every binding is enqueued again this often (0: never). */
  resyncMs: number;
  estimatorDeadlineMs: number;
  estimatorCacheTtlMs: number;
  estimatorRetryAfterMs: number;
  /** Keep the assumed ledger (see AssumedLedger); off, capacity is what the members last reported. */
  assumedLedger: boolean;
  /** Reported replicas stay assumed this long. */
  assumedSettleMs: number;
}

export interface AppDeps {
  store: ObjectStore;
  /** Holds the controller's durable timers. */
  sql: Sql;
  js: JetStreamClient;
  stream: string;
  prefix: string;
  log: Logger;
  settings: AppSettings;
  /** The replica estimator (gRPC client); without it the clusters' resource summaries are used alone. */
  estimator?: ReplicaEstimator;
  /** Readiness of the dependencies (database reachable). */
  ready?: () => Promise<boolean>;
  /** Binding reads and writes; default `store` (tests interpose here). */
  bindings?: BindingStore;
  /** JetStream durable consumer name shared by the replicas (default "scheduler"). */
  durable?: string;
  clock?: () => Date;
}

export interface SchedulerApp {
  http: FastifyInstance;
  grpcServer: grpc.Server;
  controller: Controller;
  clusters: ClusterCache;
  ledger?: AssumedLedger;
  metrics: SchedulerMetrics;
  /** Answers a Simulation object (what the gRPC Simulate serves). */
  simulate(body: unknown): Promise<Record<string, unknown>>;
  /** Loads the cluster snapshot, starts the controller and the consumers, then listens (grpcPort 0 = no gRPC). */
  start(o: { host: string; port: number; grpcPort?: number }): Promise<{ url: string; grpcAddress?: string }>;
  stop(): Promise<void>;
}

export const SCHEDULER_DURABLE = "scheduler";

export function buildApp(deps: AppDeps): SchedulerApp {
  const s = deps.settings;
  const { unknown } = enabledPluginNames(inTreeRegistry, s.plugins);
  if (unknown.length) throw new Error(`unknown scheduler plugins in ${JSON.stringify(s.plugins)}: ${unknown.join(", ")} (known: ${Object.keys(inTreeRegistry).join(", ")})`);

  const log = deps.log;
  const metrics = new SchedulerMetrics();
  const tracker = new BindingTracker();
  const seen = new SeenVersions();
  const clusters = new ClusterCache(deps.store, { refreshMs: s.clusterRefreshMs, log: log.child({ component: "clusters" }) });
  const estimates = new EstimateCache(deps.estimator, {
    deadlineMs: s.estimatorDeadlineMs,
    ttlMs: s.estimatorCacheTtlMs,
    retryAfterMs: s.estimatorRetryAfterMs,
    // with the ledger, a snapshot older than its settle period may miss replicas it already let go
    maxSnapshotAgeMs: s.assumedLedger ? s.assumedSettleMs : undefined,
    log: log.child({ component: "estimator" }),
    metrics,
  });
  // every replica follows every binding (a watch, not the shared wake-ups) to know the load it and
  // the other replicas assigned; the first list rebuilds the ledger after a restart
  const ledger = s.assumedLedger ? new AssumedLedger(s.assumedSettleMs) : undefined;
  const bindingInformer =
    ledger &&
    new Informer<undefined>({
      store: deps.store,
      gk: [RB_GK, CRB_GK],
      transform: () => undefined,
      log: log.child({ component: "bindings" }),
      onEvent: (e) => ledger.observe(bindingKey(e.object), e.object.metadata.resourceVersion, e.type === "DELETED" ? undefined : bindingLoad(e.object as AnyResourceBinding), Date.now(), { initial: e.initial }),
    });
  const controller = createController({
    reconciler: bindingScheduler({ store: deps.bindings ?? deps.store, clusters, estimates, ledger, tracker, seen, metrics, settings: s, clock: deps.clock }),
    sql: deps.sql,
    log,
    concurrency: s.concurrency,
    resyncMs: s.resyncMs,
    listKeys: async () => {
      const keys: string[] = [];
      for (const gk of [RB_GK, CRB_GK]) for await (const b of await deps.store.listStream<AnyResourceBinding>(gk)) keys.push(bindingKey(b));
      return keys;
    },
  });

  const fanOut = clusterKeys({ clusters, store: deps.store, tracker, schedulerName: s.schedulerName });
  const map: KeyMapper = (w) => {
    const gk = groupKindOf(w);
    if (gk === CLUSTER_GK) return fanOut(w.name ?? "");
    if (gk !== RB_GK && gk !== CRB_GK) return [];
    const key = objectKey(w);
    // a version decided on, or (upstream's predicate) a change that left the spec as decided on
    if (w.type !== "DELETED" && (seen.covers(key, w.resourceVersion) || (w.type === "MODIFIED" && seen.sameGeneration(key, w.generation)))) {
      metrics.wakeUpsSkipped++;
      return [];
    }
    return [key];
  };
  const simulate = simulator({ clusters, estimates, ledger, plugins: s.plugins, metrics, clock: deps.clock });

  const assumedPods = () => {
    let n = 0;
    for (const l of ledger?.load(Date.now()).values() ?? []) n += l.pods;
    return n;
  };

  const http: FastifyInstance = Fastify({
    loggerInstance: log.child({ component: "http" }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  let consumer: WakeUpConsumer | undefined;
  let started = false;
  http.get("/healthz", async () => "ok");
  http.get("/livez", async () => "ok");
  http.get("/readyz", async (_req, reply) => {
    if (!started) return reply.code(503).send("not ready: starting");
    const ok = await (deps.ready ?? (async () => true))().catch(() => false);
    return ok ? "ok" : reply.code(503).send("not ready: a dependency (database or NATS) is unreachable");
  });
  http.get("/metrics", async (_req, reply) =>
    reply.type("text/plain; version=0.0.4").send(renderMetrics([controller]) + metrics.render({ unschedulable: tracker.parked, clusters: clusters.snapshot().length, assumedPods: assumedPods() })),
  );

  const grpcServer = new grpc.Server();
  grpcServer.addService(schedulerServiceDefinition, schedulerServiceHandlers(simulate, log.child({ component: "grpc" })));
  let grpcBound = false;

  return {
    http,
    grpcServer,
    controller,
    clusters,
    ledger,
    metrics,
    simulate,
    async start(o) {
      await clusters.start();
      await bindingInformer?.start();
      controller.start();
      consumer = wireWakeUps({
        js: deps.js,
        stream: deps.stream,
        durable: deps.durable ?? SCHEDULER_DURABLE,
        subjects: [RB_GK, CRB_GK, CLUSTER_GK].map((gk) => subjectFor(gk, deps.prefix)),
        controller,
        map,
        log: log.child({ component: "wakeups" }),
      });
      await consumer.ready;
      const url = await http.listen({ host: o.host, port: o.port });
      let grpcAddress: string | undefined;
      if (o.grpcPort !== undefined && o.grpcPort >= 0) {
        const p = await new Promise<number>((resolve, reject) =>
          grpcServer.bindAsync(`${o.host}:${o.grpcPort}`, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
        );
        grpcBound = true;
        grpcAddress = `${o.host}:${p}`;
      }
      started = true;
      return { url, grpcAddress };
    },
    async stop() {
      started = false;
      await consumer?.stop().catch(() => {});
      await controller.stop();
      await bindingInformer?.stop();
      clusters.stop();
      if (grpcBound) await new Promise<void>((r) => grpcServer.tryShutdown(() => r()));
      await http.close();
    },
  };
}
