import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { FastifyInstance } from "fastify";
import { subjectFor } from "@flotilla/events";
import { LastSignatures, Metrics, ServiceHost, type ServiceDeps, byObjectKey, createController, wireWakeUps, type Controller } from "@flotilla/runtime";
import { ClusterReader, EventRecorder, FleetShares, clustersIn, databaseProbe } from "@flotilla/store";
import { GK, type WakeUp } from "@flotilla/api";
import { noExecuteSignature } from "./logic/taints.js";
import type { Config } from "./config.js";
import { bindingEvictionController } from "./controllers/binding-eviction.js";
import { CLUSTER_CONTROLLER, clusterController } from "./controllers/cluster.js";
import type { ControllerDeps } from "./controllers/deps.js";

import { EvictionPacer } from "./controllers/pacer.js";
import { TAINT_MANAGER_CONTROLLER, taintManagerController } from "./controllers/taint-manager.js";
import { TAINT_POLICY_CONTROLLER, taintPolicyController } from "./controllers/taint-policy.js";

export const COMPONENT = "taint-manager";

export type AppDeps = ServiceDeps<Config>;

/** The taint manager's own metric names (besides the controller runtime's). */
export const TAINT_MANAGER_METRICS = {
  evictions: "flotilla_taint_manager_evictions_total",
  evictionRate: "flotilla_taint_manager_eviction_rate",
  evictionRateShare: "flotilla_taint_manager_eviction_rate_share",
  evictionsPaced: "flotilla_taint_manager_evictions_paced_total",
  evictionWait: "flotilla_taint_manager_eviction_wait_seconds_total",
  clusters: "flotilla_taint_manager_clusters",
} as const;

export interface App {
  http: FastifyInstance;
  controllers: { cluster: Controller; taintPolicy: Controller; taintManager: Controller; bindingEviction: Controller };
  pacer: EvictionPacer;
  /** This replica's leases on fleet-wide limits (the eviction rate). */
  shares: FleetShares;
  metrics: Metrics;
  /** Starts the controllers and the wake-up consumers, then reconciles every cluster once. */
  start(): Promise<void>;
  /** Serves /healthz, /readyz and /metrics; returns the URL. */
  listen(o: { host: string; port: number }): Promise<string>;
  stop(): Promise<void>;
}

/** The taint-manager service: the cluster controller, the ClusterTaintPolicy controller and the NoExecute taint manager. */
export function buildApp(deps: AppDeps): App {
  const { store, cfg, log } = deps;
  const now = deps.now ?? (() => new Date());
  const events = new EventRecorder(store, {
    component: COMPONENT,
    host: deps.host ?? hostname(),
    now,
    onError: (err, e) => log.warn({ err, reason: e.reason }, "recording an event failed"),
  });
  const base: ControllerDeps = { store, cfg, events, now, log };
  // this replica's share of the fleet's eviction rate (one row in limit_leases, renewed every LIMIT_LEASE_RENEW_INTERVAL while it evicts)
  const shares = new FleetShares({
    sql: deps.sql,
    holder: `${COMPONENT}/${deps.host ?? hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
    renewMs: cfg.LIMIT_LEASE_RENEW_INTERVAL,
    onError: (err) => log.warn({ err }, "renewing the eviction rate's lease failed; the last share stays in force"),
  });
  const pacer = new EvictionPacer(
    store,
    { rate: cfg.RESOURCE_EVICTION_RATE, secondaryRate: cfg.SECONDARY_RESOURCE_EVICTION_RATE, unhealthyThreshold: cfg.UNHEALTHY_CLUSTER_THRESHOLD, refreshMs: cfg.FLEET_HEALTH_REFRESH },
    () => now().getTime(),
    shares,
  );
  const clusters = clustersIn(store);
  const listClusters = async () => (await clusters.keys()).map((k) => k.key);
  const runtime = { sql: deps.sql, log, resyncMs: cfg.RESYNC_PERIOD, ...deps.runtime };
  const metrics = deps.metrics ?? new Metrics();
  const evictions = metrics.counter(TAINT_MANAGER_METRICS.evictions, "Clusters evicted from bindings, by mode (graceful: into a graceful-eviction task; immediate: removed at once).", ["mode"]);

  const bindingEviction = createController({
    ...runtime,
    reconciler: bindingEvictionController({
      ...base,
      pacer,
      clusters: new ClusterReader(store, cfg.CLUSTER_READ_TTL, () => now().getTime()),
      onEvicted: (graceful) => evictions.inc({ mode: graceful ? "graceful" : "immediate" }),
    }),
    concurrency: cfg.CONCURRENT_BINDING_EVICTION_SYNCS,
    // an eviction may wait for its pacing turn longer than a normal reconcile takes
    timeoutMs: 0,
    resyncMs: 0,
  });
  const cluster = createController({ ...runtime, reconciler: clusterController(base), concurrency: cfg.CONCURRENT_CLUSTER_SYNCS, listKeys: listClusters });
  const taintPolicy = createController({ ...runtime, reconciler: taintPolicyController(base), concurrency: cfg.CONCURRENT_CLUSTER_SYNCS, listKeys: listClusters });
  const taintManager = createController({
    ...runtime,
    reconciler: taintManagerController({
      ...base,
      evict: (k) => bindingEviction.add(k),
    }),
    concurrency: cfg.CONCURRENT_CLUSTER_SYNCS,
    listKeys: listClusters,
  });
  /**
   * A cluster's wake-up reaches the taint manager only when its NoExecute taints changed (the
   * cluster controller rewrites a cluster at every probe); the pass it planned comes back on its
   * durable timer.
   */
  const lastTaints = new LastSignatures();
  const byNoExecuteChange = async (w: WakeUp): Promise<string[]> => {
    const name = w.name ?? "";
    const sig = noExecuteSignature(await clusters.get(name));
    if (lastTaints.same(name, sig)) return [];
    lastTaints.record(name, sig);
    return [name];
  };
  const controllers = { cluster, taintPolicy, taintManager, bindingEviction };
  metrics.gauge(TAINT_MANAGER_METRICS.evictionRate, "Evictions per second allowed now, across the fleet of taint-manager replicas.", [], function () {
    this.set(pacer.stats.rate);
  });
  metrics.gauge(TAINT_MANAGER_METRICS.evictionRateShare, "This replica's share of the fleet's eviction rate, as last computed.", [], function () {
    this.set(pacer.stats.share);
  });
  metrics.counter(TAINT_MANAGER_METRICS.evictionsPaced, "Evictions let through by the pacer.", [], function () {
    this.reset();
    this.inc(pacer.stats.granted);
  });
  metrics.counter(TAINT_MANAGER_METRICS.evictionWait, "Time evictions spent waiting for their turn.", [], function () {
    this.reset();
    this.inc(pacer.stats.waitedMs / 1000);
  });
  metrics.gauge(TAINT_MANAGER_METRICS.clusters, "Clusters as last counted by the pacer, by health.", ["health"], function () {
    const h = pacer.health();
    this.set({ health: "unhealthy" }, h.unhealthy);
    this.set({ health: "healthy" }, h.total - h.unhealthy);
  });

  const js = deps.js;
  const host = new ServiceHost({ name: COMPONENT, log, metrics, ready: deps.ready ?? databaseProbe(deps.sql) })
    .step({ start: () => shares.start(), stop: () => shares.stop() })
    .controllers(cluster, taintPolicy, taintManager, bindingEviction);
  // without JetStream (tests) the controllers run on timers, resyncs and enqueue() alone
  host.wakeUps(COMPONENT, () => {
    if (!js) return [];
    const common = { js, stream: cfg.EVENTS_STREAM, subject: subjectFor(GK.cluster, cfg.EVENTS_PREFIX), map: byObjectKey, log: log.child({ component: "wake-ups" }) };
    return [
      wireWakeUps({ ...common, durable: `${COMPONENT}-${CLUSTER_CONTROLLER}`, controller: cluster }),
      wireWakeUps({ ...common, durable: `${COMPONENT}-${TAINT_POLICY_CONTROLLER}`, controller: taintPolicy }),
      // a policy created, changed or deleted: every cluster is evaluated again
      wireWakeUps({ ...common, subject: subjectFor(GK.clusterTaintPolicy, cfg.EVENTS_PREFIX), durable: `${COMPONENT}-${TAINT_POLICY_CONTROLLER}-policies`, controller: taintPolicy, map: listClusters }),
      wireWakeUps({ ...common, durable: `${COMPONENT}-${TAINT_MANAGER_CONTROLLER}`, controller: taintManager, map: byNoExecuteChange }),
    ];
  });
  host.resync(cluster, taintPolicy, taintManager);

  return {
    http: host.http,
    controllers,
    pacer,
    shares,
    metrics,
    start: () => host.start(),
    listen: async (o) => (await host.listen(o)).url,
    stop: () => host.stop(),
  };
}

export { configSchema, type Config } from "./config.js";
