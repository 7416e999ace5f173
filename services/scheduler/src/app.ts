import type { FastifyInstance } from "fastify";
import { GK } from "@flotilla/api";
import { SCHEDULER_METHODS, authorizedHandlers, serverCredentials, type GrpcServerSecurity } from "@flotilla/auth";
import { groupKindOf, subjectFor, type JetStreamClient, type WakeUpConsumer } from "@flotilla/events";
import type { Logger } from "@flotilla/log";
import { Metrics, SeenVersions, ServiceHost, createController, objectKey, wireWakeUps, type Controller, type KeyLocks, type KeyMapper } from "@flotilla/runtime";
import { enabledPluginNames, inTreeRegistry } from "@flotilla/scheduling";
import { bindingsIn, startLeaderElection, type LeaderElection, type ObjectStore, type Sql } from "@flotilla/store";
import { bindingLoads } from "./controllers/binding-loads.js";
import { ClusterCache } from "./controllers/cluster-cache.js";
import { EstimateCache, type ReplicaEstimator } from "./controllers/estimates.js";
import { clusterKeys } from "./controllers/fan-out.js";
import { SchedulerMetrics } from "./controllers/metrics.js";
import { bindingScheduler, type BindingStore, type SchedulerSettings } from "./controllers/scheduler.js";
import { retryOnRelease } from "./controllers/released.js";
import { simulator } from "./controllers/simulate.js";
import { failureSimulator } from "./controllers/simulate-failure.js";
import { BindingTracker } from "./controllers/tracker.js";
import { schedulerServiceDefinition, schedulerServiceHandlers } from "./grpc.js";
import { AssumedLedger } from "./logic/assumed.js";

export interface AppSettings extends SchedulerSettings {
  /** Bindings scheduled at once. */
  concurrency: number;
  /** Every binding is enqueued again this often (0: never). */
  resyncMs: number;
  estimatorDeadlineMs: number;
  estimatorCacheTtlMs: number;
  estimatorRetryAfterMs: number;
  /** Keep the assumed ledger (see AssumedLedger); off, capacity is what the members last reported. */
  assumedLedger: boolean;
  /** Reported replicas stay assumed this long. */
  assumedSettleMs: number;
  /**
   * One replica schedules at a time (Karmada's --leader-elect): the assumed ledger is exact only in
   * one process. The others keep their caches and ledger warm and take over when the leader goes.
   */
  leaderElect?: boolean;
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
  /** One replica reconciles a binding at a time, a leader that lost its lock included (the process's key locks; default: none). */
  keyLocks?: KeyLocks;
  /** JetStream durable consumer name shared by the replicas (default "scheduler"). */
  durable?: string;
  clock?: () => Date;
  /** The process's metrics registry (default: one of its own). */
  registry?: Metrics;
  /**
   * The gRPC API's TLS material and who may call it (service account tokens, RBAC: `create` on
   * simulations / failuresimulations in scheduling.flotilla.io). Without it no gRPC port is served.
   */
  grpcSecurity?: GrpcServerSecurity;
}

export interface SchedulerApp {
  http: FastifyInstance;
  /** The controller of the current (or next) leadership term. */
  readonly controller: Controller;
  /** True while this replica schedules (always, without leader election). */
  readonly leading: boolean;
  clusters: ClusterCache;
  ledger?: AssumedLedger;
  metrics: SchedulerMetrics;
  /** The registry /metrics serves (the controller runtime's metrics and the scheduler's). */
  registry: Metrics;
  /** Answers a Simulation object (what the gRPC Simulate serves). */
  simulate(body: unknown): Promise<Record<string, unknown>>;
  /** Answers a FailureSimulation object (what the gRPC SimulateFailure serves). */
  simulateFailure(body: unknown): Promise<Record<string, unknown>>;
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
  const registry = deps.registry ?? new Metrics();
  const tracker = new BindingTracker();
  const seen = new SeenVersions();
  const clusters = new ClusterCache(deps.store, { log: log.child({ component: "clusters" }) });
  const estimates = new EstimateCache(deps.estimator, {
    deadlineMs: s.estimatorDeadlineMs,
    ttlMs: s.estimatorCacheTtlMs,
    retryAfterMs: s.estimatorRetryAfterMs,
    log: log.child({ component: "estimator" }),
    metrics,
  });
  // every replica follows every binding (a watch, not the shared wake-ups) to know the load it and
  // the other replicas assigned; the first list rebuilds the ledger after a restart
  const ledger = s.assumedLedger ? new AssumedLedger(s.assumedSettleMs) : undefined;
  const bindingInformer = ledger && bindingLoads({ store: deps.store, ledger, log: log.child({ component: "bindings" }) });
  const newController = () => withMetrics(createController({
    reconciler: bindingScheduler({ store: deps.bindings ?? deps.store, clusters, estimates, ledger, tracker, seen, metrics, settings: s, clock: deps.clock }),
    sql: deps.sql,
    log,
    keyLocks: deps.keyLocks,
    concurrency: s.concurrency,
    resyncMs: s.resyncMs,
    // with versions: a binding parked after a terminal failure is resynced only once it changed
    listKeys: () => bindingsIn(deps.store).keys(),
  }));
  // every term's controller counts in the same families (their totals add up)
  const withMetrics = (c: Controller) => (registry.controllers([c]), c);
  let controller = newController();

  const fanOut = clusterKeys({ clusters, store: deps.store, tracker, schedulerName: s.schedulerName });
  const map: KeyMapper = (w) => {
    const gk = groupKindOf(w);
    if (gk === GK.cluster) return fanOut(w.name ?? "");
    if (gk !== GK.resourceBinding && gk !== GK.clusterResourceBinding) return [];
    const key = objectKey(w);
    // a version decided on, or (upstream's predicate) a change that left the spec as decided on
    if (w.type !== "DELETED" && (seen.covers(key, w.resourceVersion) || (w.type === "MODIFIED" && seen.sameGeneration(key, w.generation)))) {
      metrics.wakeUpsSkipped++;
      return [];
    }
    return [{ key, resourceVersion: w.resourceVersion }];
  };
  // load the ledger lets go of (no Cluster changes for it) retries the parked bindings at once
  const releases = ledger && retryOnRelease({ ledger, clusters, tracker, add: (key) => controller.add(key) });
  const simulate = simulator({ clusters, estimates, ledger, plugins: s.plugins, metrics, clock: deps.clock });
  const simulateFailure = failureSimulator({ clusters, store: deps.store, ledger, plugins: s.plugins, schedulerName: s.schedulerName, metrics, clock: deps.clock });

  const assumedPods = () => {
    let n = 0;
    for (const l of ledger?.load(Date.now()).values() ?? []) n += l.pods;
    return n;
  };

  let consumer: WakeUpConsumer | undefined;
  let election: LeaderElection | undefined;
  let terms = 0;

  /** A term: the controller and the shared durable consumer run only while leading. */
  async function startScheduling(): Promise<void> {
    if (terms++ > 0) controller = newController(); // a controller runs one term
    // a standby took no cluster wake-ups (they go to the leader's consumer): read them all first
    if (s.leaderElect) await clusters.refreshAll();
    controller.start();
    releases?.start();
    consumer = wireWakeUps({
      js: deps.js,
      stream: deps.stream,
      durable: deps.durable ?? SCHEDULER_DURABLE,
      subjects: [GK.resourceBinding, GK.clusterResourceBinding, GK.cluster].map((gk) => subjectFor(gk, deps.prefix)),
      controller,
      map,
      log: log.child({ component: "wakeups" }),
    });
    // what a previous leader left undone comes back: its unacknowledged wake-ups are redelivered
    // to this durable consumer, its timers are claimed from the database
    await consumer.ready;
  }
  async function stopScheduling(): Promise<void> {
    releases?.stop();
    await consumer?.stop().catch(() => {});
    consumer = undefined;
    await controller.stop();
  }
  metrics.register(registry, () => ({ unschedulable: tracker.parked, clusters: clusters.snapshot().length, assumedPods: assumedPods(), leading: leading() }));
  registry.consumers(deps.durable ?? SCHEDULER_DURABLE, () => (consumer ? [consumer] : []));
  const host = new ServiceHost({ name: "scheduler", log, metrics: registry, ready: deps.ready });
  const sec = deps.grpcSecurity;
  if (sec) {
    const grpcLog = log.child({ component: "grpc" });
    host
      .grpc(schedulerServiceDefinition, authorizedHandlers({ authenticator: sec.tokens, authorizer: sec.authorizer }, schedulerServiceHandlers(simulate, grpcLog, simulateFailure), SCHEDULER_METHODS, grpcLog), { credentials: serverCredentials(sec.tls) })
      .step({ start: () => sec.authorizer.start(), stop: () => sec.authorizer.stop() });
  }
  host
    .step({ start: () => clusters.start(), stop: () => clusters.stop() })
    .step({ start: () => bindingInformer?.start(), stop: () => bindingInformer?.stop() })
    .step({
      start: async () => {
        if (!s.leaderElect) return startScheduling();
        election = startLeaderElection({
          sql: deps.sql,
          name: `scheduler/${s.schedulerName}/${deps.stream}`,
          onStartedLeading: startScheduling,
          onStoppedLeading: stopScheduling,
          log: log.child({ component: "leader" }),
        });
      },
      stop: () => (election ? election.stop() : stopScheduling()),
    });

  const leading = () => (election ? election.leading : host.running);
  return {
    http: host.http,
    get controller() {
      return controller;
    },
    get leading() {
      return leading();
    },
    clusters,
    ledger,
    metrics,
    registry,
    simulate,
    simulateFailure,
    async start(o) {
      if (o.grpcPort !== undefined && !sec) throw new Error("the scheduler's gRPC API is served only with TLS and authentication (grpcSecurity)");
      await host.start();
      return host.listen({ host: o.host, port: o.port, grpcPort: o.grpcPort });
    },
    stop: () => host.stop(),
  };
}
export { SCHEDULER_METRICS } from "./controllers/metrics.js";
