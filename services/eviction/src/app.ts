import { hostname } from "node:os";
import Fastify, { type FastifyInstance } from "fastify";
import type { AnyResourceBinding, Cluster, WakeUp } from "@flotilla/api";
import { groupKindOf, subjectFor, type JetStreamClient, type WakeUpConsumer } from "@flotilla/events";
import type { Logger } from "@flotilla/log";
import { createController, renderMetrics, wireWakeUps, type Controller, type ControllerOptions } from "@flotilla/runtime";
import { BINDING_WITH_EVICTION_TASKS_INDEX, EventRecorder, bindingEvictingIndex, databaseProbe, type ObjectStore } from "@flotilla/store";
import type { Config } from "./config.js";
import { gracefulEviction, name as CONTROLLER } from "./controllers/graceful-eviction.js";
import { ClusterReader } from "@flotilla/store";
import { GK, bindingKey, keyOf } from "./controllers/keys.js";

export const COMPONENT = "eviction";

export interface AppDeps {
  store: ObjectStore;
  log: Logger;
  cfg: Config;
  /** JetStream for wake-ups (stream and prefix from cfg); without it the controller runs on timers, resyncs and enqueue() alone. */
  js?: JetStreamClient;
  now?: () => Date;
  /** Reported as the events' source host (default: the hostname). */
  host?: string;
  /** Runtime overrides (tests shrink timerPollMs and backoff). */
  runtime?: Partial<Omit<ControllerOptions, "reconciler" | "sql" | "log" | "listKeys">>;
  /** Readiness of the dependencies (default: the database answers within 2 s). */
  ready?: () => Promise<boolean>;
}

export interface App {
  http: FastifyInstance;
  controller: Controller;
  /** Starts the controller and its wake-up consumer, then reconciles every binding with tasks once. */
  start(): Promise<void>;
  /** Serves /healthz, /readyz and /metrics; returns the URL. */
  listen(o: { host: string; port: number }): Promise<string>;
  stop(): Promise<void>;
}

/** The eviction service: the graceful-eviction controller. */
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
  const bindingsWith = async (index: string) => {
    const [rbs, crbs] = await Promise.all([
      store.list<AnyResourceBinding>(GK.resourceBinding, { index }),
      store.list<AnyResourceBinding>(GK.clusterResourceBinding, { index }),
    ]);
    return [...rbs.items, ...crbs.items].map(keyOf);
  };
  const controller = createController({
    sql: store.sql,
    log,
    resyncMs: cfg.RESYNC_PERIOD,
    ...deps.runtime,
    reconciler: gracefulEviction({ store, clusters, cfg, events, now, log }),
    concurrency: cfg.CONCURRENT_GRACEFUL_EVICTION_SYNCS,
    listKeys: () => bindingsWith(BINDING_WITH_EVICTION_TASKS_INDEX),
  });

  /**
   * What about a cluster can change a task's fate: whether it exists or is being deleted, its
   * Ready status and its NoExecute taints. Per cluster, the last one seen; in memory only as a
   * shortcut (after a restart the first wake-up of each cluster fans out).
   */
  const seen = new Map<string, string>();
  const clusterSignature = (c: Cluster | undefined) =>
    !c
      ? "gone"
      : JSON.stringify([
          !!c.metadata.deletionTimestamp,
          (c.status?.conditions ?? []).find((x) => x.type === "Ready")?.status ?? "",
          (c.spec?.taints ?? []).filter((t) => t.effect === "NoExecute").map((t) => `${t.key}=${t.value ?? ""}`).sort(),
        ]);
  /**
   * A binding wakes its own key when it has graceful-eviction tasks (its index hint says so;
   * without a hint, always). A Cluster wakes the bindings with tasks from it, but only when
   * something that matters changed (it may have recovered): heartbeats, which rewrite the
   * cluster on every probe, would otherwise reconcile every such binding each time.
   */
  const map = async (w: WakeUp): Promise<string[]> => {
    if (groupKindOf(w) !== GK.cluster) return w.indexKeys && !w.indexKeys.includes(BINDING_WITH_EVICTION_TASKS_INDEX) ? [] : [bindingKey(w)];
    const name = w.name ?? "";
    clusters.invalidate(name);
    const sig = clusterSignature(await clusters.get(name));
    if (seen.get(name) === sig) return [];
    const keys = await bindingsWith(bindingEvictingIndex(name));
    if (seen.size > 10_000) seen.clear();
    seen.set(name, sig);
    return keys;
  };

  let consumer: WakeUpConsumer | undefined;
  let started = false;
  const http = Fastify({ logger: false });
  http.get("/healthz", async () => "ok");
  const ready = deps.ready ?? databaseProbe(store.sql);
  http.get("/readyz", async (_req, reply) => {
    if (!started) return reply.code(503).send("not ready: starting");
    return (await ready().catch(() => false)) ? "ok" : reply.code(503).send("not ready: a dependency (database or NATS) is unreachable");
  });
  http.get("/metrics", async (_req, reply) => reply.type("text/plain; version=0.0.4").send(renderMetrics([controller])));

  return {
    http,
    controller,
    async start() {
      controller.start();
      if (deps.js) {
        consumer = wireWakeUps({
          js: deps.js,
          stream: cfg.EVENTS_STREAM,
          durable: COMPONENT,
          subjects: [GK.resourceBinding, GK.clusterResourceBinding, GK.cluster].map((gk) => subjectFor(gk, cfg.EVENTS_PREFIX)),
          controller,
          map,
          log: log.child({ component: "wake-ups" }),
        });
        await consumer.ready;
      }
      await controller.resync();
      started = true;
      log.info({ controller: CONTROLLER }, "eviction started");
    },
    async listen(o) {
      return http.listen({ host: o.host, port: o.port });
    },
    async stop() {
      started = false;
      await consumer?.stop().catch(() => {});
      await controller.stop();
      await http.close();
    },
  };
}

export { configSchema, type Config } from "./config.js";
