import { hostname } from "node:os";
import type { FastifyInstance } from "fastify";
import { ConditionReady, GK, findCondition, objectKeyOf, type Cluster, type WakeUp } from "@flotilla/api";
import { groupKindOf, subjectFor, type JetStreamClient } from "@flotilla/events";
import { LastSignatures, Metrics, ServiceHost, type ServiceDeps, createController, wireWakeUps, type Controller, type Reconciler } from "@flotilla/runtime";
import { bindingsIn, BINDING_WITH_APPLICATION_FAILOVER_INDEX, BINDING_WITH_EVICTION_TASKS_INDEX, BINDING_WITH_MOVE_BACK_INDEX, EventRecorder, LimitLeases, bindingEvictingIndex, databaseProbe } from "@flotilla/store";
import type { Config } from "./config.js";
import { applicationFailover, name as APP_FAILOVER_CONTROLLER } from "./controllers/application-failover.js";
import { gracefulEviction } from "./controllers/graceful-eviction.js";
import { moveBack, name as MOVE_BACK_CONTROLLER } from "./controllers/move-back.js";
import { ClusterReader } from "@flotilla/store";

export const COMPONENT = "eviction";

export type AppDeps = ServiceDeps<Config>;

/** The eviction service's own metric names (besides the controller runtime's). */
export const EVICTION_METRICS = {
  tasksRemoved: "flotilla_eviction_tasks_removed_total",
  moveBacks: "flotilla_eviction_move_backs_total",
} as const;

export interface App {
  http: FastifyInstance;
  metrics: Metrics;
  controller: Controller;
  /** The application failover controller (bindings whose policy sets failover.application). */
  applicationFailover: Controller;
  /** The move-back controller (bindings with a placement before a failover to return to). */
  moveBack: Controller;
  /** Starts the controllers and their wake-up consumers, then reconciles every binding with tasks or application failover once. */
  start(): Promise<void>;
  /** Serves /healthz, /readyz and /metrics; returns the URL. */
  listen(o: { host: string; port: number }): Promise<string>;
  stop(): Promise<void>;
}

/** The eviction service: the graceful-eviction controller and the application failover controller. */
export function buildApp(deps: AppDeps): App {
  const { store, cfg, log } = deps;
  const now = deps.now ?? (() => new Date());
  const events = new EventRecorder(store, {
    component: COMPONENT,
    host: deps.host ?? hostname(),
    now,
    dedupeMs: cfg.EVENT_DEDUPE_WINDOW,
    onError: (err, e) => log.warn({ err, reason: e.reason }, "recording an event failed"),
  });

  const clusters = new ClusterReader(store, cfg.CLUSTER_READ_TTL, () => now().getTime());
  const metrics = deps.metrics ?? new Metrics();
  const removed = metrics.counter(EVICTION_METRICS.tasksRemoved, "Graceful-eviction tasks removed, by why (ReplacementHealthy, Timeout, SuppressDeletionFalse, ScheduledAgain).", ["why"]);
  const bindings = bindingsIn(store);
  const bindingsWith = async (index: string) => (await bindings.list({ index })).map((b) => bindings.key(b));
  /** A controller of the bindings with the index entry `index` (its resync lists them). */
  const bindingController = (reconciler: Reconciler<string>, concurrency: number, index: string) =>
    createController({ sql: deps.sql, log, resyncMs: cfg.RESYNC_PERIOD, ...deps.runtime, reconciler, concurrency, listKeys: () => bindingsWith(index) });
  /** A binding's wake-up is for the controller of `index` when its index hint has the entry (without a hint, always). */
  const withIndex = (index: string) => (w: WakeUp): string[] => (w.indexKeys && !w.indexKeys.includes(index) ? [] : [objectKeyOf(w)]);
  const controller = bindingController(
    gracefulEviction({ store, clusters, cfg, events, now, log, onTaskRemoved: (why) => removed.inc({ why }) }),
    cfg.CONCURRENT_GRACEFUL_EVICTION_SYNCS,
    BINDING_WITH_EVICTION_TASKS_INDEX,
  );
  // failover.application of the bindings' policies
  const appFailover = bindingController(applicationFailover({ store, cfg, events, now, log }), cfg.CONCURRENT_APPLICATION_FAILOVER_SYNCS, BINDING_WITH_APPLICATION_FAILOVER_INDEX);
  const moveBacks = metrics.counter(EVICTION_METRICS.moveBacks, "Move-backs after recovery, by outcome (started, finished, reverted, dropped).", ["outcome"]);
  // bindings with a placement to return to
  const moveBackController = bindingController(
    moveBack({ store, clusters, cfg, events, now, log, limits: new LimitLeases(deps.sql), onOutcome: (outcome) => moveBacks.inc({ outcome }) }),
    cfg.CONCURRENT_GRACEFUL_EVICTION_SYNCS,
    BINDING_WITH_MOVE_BACK_INDEX,
  );

  /**
   * What about a cluster can change a task's fate: whether it exists or is being deleted, its
   * Ready status and its NoExecute taints. Per cluster, the last one handed on (after a restart
   * the first wake-up of each cluster fans out).
   */
  const seen = new LastSignatures();
  const clusterSignature = (c: Cluster | undefined) =>
    !c
      ? "gone"
      : JSON.stringify([
          !!c.metadata.deletionTimestamp,
          findCondition(c.status?.conditions, ConditionReady)?.status ?? "",
          (c.spec?.taints ?? []).filter((t) => t.effect === "NoExecute").map((t) => `${t.key}=${t.value ?? ""}`).sort(),
        ]);
  /**
   * A binding wakes its own key when it has graceful-eviction tasks (its index hint says so;
   * without a hint, always). A Cluster wakes the bindings with tasks from it, but only when
   * something that matters changed (it may have recovered): heartbeats, which rewrite the
   * cluster on every probe, would otherwise reconcile every such binding each time.
   */
  const map = async (w: WakeUp): Promise<string[]> => {
    if (groupKindOf(w) !== GK.cluster) return withIndex(BINDING_WITH_EVICTION_TASKS_INDEX)(w);
    const name = w.name ?? "";
    clusters.invalidate(name);
    const sig = clusterSignature(await clusters.get(name));
    if (seen.same(name, sig)) return [];
    const keys = await bindingsWith(bindingEvictingIndex(name));
    seen.record(name, sig);
    return keys;
  };

  /** The wake-ups of the bindings (both kinds) with the index entry `index`, for `controller`, on a durable consumer of their own. */
  const bindingConsumer = (js: JetStreamClient, durable: string, target: Controller, index: string) =>
    wireWakeUps({
      js,
      stream: cfg.EVENTS_STREAM,
      durable,
      subjects: [GK.resourceBinding, GK.clusterResourceBinding].map((gk) => subjectFor(gk, cfg.EVENTS_PREFIX)),
      controller: target,
      map: withIndex(index),
      log: log.child({ component: "wake-ups" }),
    });
  const js = deps.js;
  const host = new ServiceHost({ name: COMPONENT, log, metrics, ready: deps.ready ?? databaseProbe(deps.sql) }).controllers(controller, appFailover, moveBackController);
  // without JetStream (tests) the controllers run on timers, resyncs and enqueue() alone
  host.wakeUps(COMPONENT, () => {
    if (!js) return [];
    return [
      wireWakeUps({
        js,
        stream: cfg.EVENTS_STREAM,
        durable: COMPONENT,
        subjects: [GK.resourceBinding, GK.clusterResourceBinding, GK.cluster].map((gk) => subjectFor(gk, cfg.EVENTS_PREFIX)),
        controller,
        map,
        log: log.child({ component: "wake-ups" }),
      }),
      bindingConsumer(js, `${COMPONENT}-${APP_FAILOVER_CONTROLLER}`, appFailover, BINDING_WITH_APPLICATION_FAILOVER_INDEX),
      bindingConsumer(js, `${COMPONENT}-${MOVE_BACK_CONTROLLER}`, moveBackController, BINDING_WITH_MOVE_BACK_INDEX),
    ];
  });
  host.resync(controller, appFailover, moveBackController);

  return {
    http: host.http,
    metrics,
    controller,
    applicationFailover: appFailover,
    moveBack: moveBackController,
    start: () => host.start(),
    listen: async (o) => (await host.listen(o)).url,
    stop: () => host.stop(),
  };
}

export { configSchema, type Config } from "./config.js";
