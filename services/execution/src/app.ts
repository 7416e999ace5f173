import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import * as grpc from "@grpc/grpc-js";
import { CORE, KARMADA, executionNamespace, groupKind, type KubeObject, type Work } from "@flotilla/api";
import { subjectFor, type JetStreamClient, type WakeUpConsumer } from "@flotilla/events";
import type { Logger } from "@flotilla/log";
import { SeenVersions, createController, objectKey, renderMetrics, wireWakeUps, type Controller } from "@flotilla/runtime";
import type { ObjectStore, Sql } from "@flotilla/store";
import type { HealthResult } from "@flotilla/kube";
import { ReadyThresholds } from "./logic/cluster-ready.js";
import { manifestsOf, workKeyOf } from "./logic/work.js";
import { ClusterCache, CLUSTER_GK, type ClusterTransition } from "./controllers/cluster-cache.js";
import { clusterStatusController } from "./controllers/cluster-status.js";
import { estimatorHandlers, estimatorServiceDefinition } from "./controllers/estimator.js";
import { Members } from "./controllers/members.js";
import { executionController, WORK_GK } from "./controllers/work.js";
import type { HttpMembers } from "./logic/credentials.js";

/** The settings buildExecution uses (config.ts's Config satisfies it; tests pass shrunk timings). */
export interface ExecutionSettings {
  CLUSTER_STATUS_UPDATE_FREQUENCY: number;
  CLUSTER_FAILURE_THRESHOLD: number;
  CLUSTER_SUCCESS_THRESHOLD: number;
  CLUSTER_PROBE_TIMEOUT: number;
  CLUSTER_DISCOVERY_REFRESH: number;
  CLUSTER_STATUS_CONCURRENCY: number;
  WORK_CONCURRENCY: number;
  WORK_RESYNC_PERIOD: number;
  WORK_RETRY_INTERVAL: number;
  CLUSTER_CACHE_REFRESH: number;
  MEMBER_REQUEST_TIMEOUT: number;
  MEMBER_MAX_SOCKETS: number;
  MEMBER_WATCH_TIMEOUT: number;
  ESTIMATOR_TIMEOUT: number;
  ESTIMATOR_SNAPSHOT_MAX_AGE: number;
  /** Plain-http member endpoints allowed: none, loopback ones, or any. */
  MEMBER_ALLOW_HTTP: HttpMembers;
  EVENTS_STREAM: string;
  EVENTS_PREFIX: string;
}

export const DEFAULT_SETTINGS: ExecutionSettings = {
  CLUSTER_STATUS_UPDATE_FREQUENCY: 10_000,
  CLUSTER_FAILURE_THRESHOLD: 30_000,
  CLUSTER_SUCCESS_THRESHOLD: 30_000,
  CLUSTER_PROBE_TIMEOUT: 5_000,
  CLUSTER_DISCOVERY_REFRESH: 60_000,
  CLUSTER_STATUS_CONCURRENCY: 100,
  WORK_CONCURRENCY: 64,
  WORK_RESYNC_PERIOD: 600_000,
  WORK_RETRY_INTERVAL: 10_000,
  CLUSTER_CACHE_REFRESH: 2_000,
  MEMBER_REQUEST_TIMEOUT: 10_000,
  MEMBER_MAX_SOCKETS: 64,
  MEMBER_WATCH_TIMEOUT: 300_000,
  ESTIMATOR_TIMEOUT: 3_000,
  ESTIMATOR_SNAPSHOT_MAX_AGE: 15_000,
  MEMBER_ALLOW_HTTP: "none",
  EVENTS_STREAM: "FLOTILLA_OBJECTS",
  EVENTS_PREFIX: "flotilla",
};

export interface ExecutionDeps {
  store: ObjectStore;
  /** Holds the durable timers of the controllers. */
  sql: Sql;
  /** Wake-ups; without it the controllers run on resync, timers and member events only. */
  js?: JetStreamClient;
  log: Logger;
  settings?: Partial<ExecutionSettings>;
  /** Readiness probe of the dependencies (database reachable). */
  ready?: () => Promise<boolean>;
  /** Durable consumer names are `<durablePrefix>-works|-clusters|-secrets` (default "execution"). */
  durablePrefix?: string;
  /** Controller runner tuning (tests shrink the timer poll and backoff). */
  runner?: { timerPollMs?: number; backoff?: { baseMs?: number; maxMs?: number } };
}

export interface Execution {
  http: FastifyInstance;
  grpcServer: grpc.Server;
  works: Controller;
  clusterStatus: Controller;
  clusters: ClusterCache;
  members: Members;
  /** Probe latencies observed since start (ms), for the load test and metrics. */
  probes: { count: number; failures: number; latenciesMs: number[]; lastErrors: string[]; lastAt: Map<string, number> };
  /** Starts caches, controllers, consumers and servers. `port`/`estimatorPort` 0 = any free port, undefined = not served. */
  start(o?: { host?: string; port?: number; estimatorPort?: number }): Promise<{ url?: string; estimatorAddress?: string }>;
  stop(): Promise<void>;
}

const SECRET_GK = groupKind(CORE.secret);

export function buildExecution(deps: ExecutionDeps): Execution {
  const s: ExecutionSettings = { ...DEFAULT_SETTINGS, ...deps.settings };
  const log = deps.log;
  const worksSeen = new SeenVersions();
  const clustersSeen = new SeenVersions();
  const probes = { count: 0, failures: 0, latenciesMs: [] as number[], lastErrors: [] as string[], lastAt: new Map<string, number>() };
  const probeBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const probeHist = { counts: new Array<number>(probeBuckets.length).fill(0), sum: 0, count: 0 };
  const estimatorCalls = { count: 0, sumMs: 0 };
  // eslint-disable-next-line prefer-const
  let works: Controller;

  const members = new Members({
    log: log.child({ component: "members" }),
    client: { timeoutMs: s.MEMBER_REQUEST_TIMEOUT, maxSockets: s.MEMBER_MAX_SOCKETS },
    watchTimeoutSeconds: Math.max(1, Math.round(s.MEMBER_WATCH_TIMEOUT / 1000)),
    onObject: (cluster, _type, obj: KubeObject) => {
      const key = workKeyOf(obj);
      if (key && key.startsWith(executionNamespace(cluster) + "/")) works.add(key);
    },
    onReconnect: (cluster) => fanOut(cluster, "reconnect"),
    onNewClient: (cluster) => fanOut(cluster, "new-client"),
  });

  /**
   * Compares every Work of a member with what the member holds: on start, when the cluster
   * turns Ready, when it is reached through a new client (endpoint or credential changed), and
   * when its informers read it again after failed lists. When the member is
   * Ready, each kind its Works use is listed afresh first (one list per member and kind) and
   * only then are its Works reconciled, against that list: a missing or drifted object is
   * applied again, whatever the Works' status said before. Not Ready, its Works are reconciled
   * so their health turns Unknown.
   */
  type Why = ClusterTransition | "start" | "reconnect" | "new-client";
  const reconcileMember = async (cluster: string, why: Why) => {
    const { items } = await deps.store.list<Work>(WORK_GK, { namespace: executionNamespace(cluster) });
    const entry = clusters.get(cluster);
    if ((why === "start" || why === "ready" || why === "new-client") && items.length && entry?.ready && !entry.deleting && entry.endpoint.ok) {
      const kinds = new Map<string, { apiVersion: string; kind: string }>();
      for (const w of items) {
        if (w.metadata.deletionTimestamp) continue;
        for (const m of manifestsOf(w)) kinds.set(`${m.apiVersion}/${m.kind}`, { apiVersion: m.apiVersion, kind: m.kind });
      }
      const listed = await members.relist(cluster, members.client(cluster, entry.endpoint.endpoint), [...kinds.values()], s.MEMBER_REQUEST_TIMEOUT);
      log.info({ cluster, reason: why, kinds: kinds.size, listed }, "member listed; comparing its works with it");
    }
    for (const w of items) works.add(objectKey({ namespace: w.metadata.namespace, name: w.metadata.name }));
    if (items.length) log.info({ cluster, reason: why, works: items.length }, "reconciling the works of a cluster");
  };

  const fanOut = (cluster: string, t: Why) => {
    if (t === "ready") members.kick(cluster);
    if (t === "gone") members.drop(cluster);
    void reconcileMember(cluster, t).catch((e) => log.warn({ err: e, cluster }, "listing the works of a cluster failed"));
  };

  const clusters = new ClusterCache(deps.store, { refreshMs: s.CLUSTER_CACHE_REFRESH, log: log.child({ component: "cluster-cache" }), onTransition: fanOut, policy: { allowHttp: s.MEMBER_ALLOW_HTTP } });
  const thresholds = new ReadyThresholds({ successThresholdMs: s.CLUSTER_SUCCESS_THRESHOLD, failureThresholdMs: s.CLUSTER_FAILURE_THRESHOLD });

  const runner = { timerPollMs: deps.runner?.timerPollMs, backoff: deps.runner?.backoff };
  works = createController({
    reconciler: executionController({ store: deps.store, clusters, members, seen: worksSeen, retryMs: s.WORK_RETRY_INTERVAL, listWaitMs: s.MEMBER_REQUEST_TIMEOUT }),
    sql: deps.sql,
    log,
    concurrency: s.WORK_CONCURRENCY,
    resyncMs: s.WORK_RESYNC_PERIOD,
    listKeys: async () => (await deps.store.list(WORK_GK)).items.filter((w) => (w.metadata.namespace ?? "").startsWith("karmada-es-")).map((w) => objectKey({ namespace: w.metadata.namespace, name: w.metadata.name })),
    ...runner,
  });

  const onProbe = (cluster: string, h: HealthResult | undefined) => {
    probes.count++;
    probes.lastAt.set(cluster, Date.now());
    if (!h?.healthy) {
      probes.failures++;
      probes.lastErrors.push(`${cluster}: ${h ? (h.error ?? `HTTP ${h.statusCode} from ${h.path}`) : "no client"}`);
      if (probes.lastErrors.length > 20) probes.lastErrors.shift();
    }
    if (h) {
      probes.latenciesMs.push(h.latencyMs);
      if (probes.latenciesMs.length > 10_000) probes.latenciesMs.splice(0, 5_000);
      const sec = h.latencyMs / 1000;
      probeHist.sum += sec;
      probeHist.count++;
      for (let i = 0; i < probeBuckets.length; i++) if (sec <= probeBuckets[i]!) probeHist.counts[i]!++;
    }
  };
  const clusterStatus = createController({
    reconciler: clusterStatusController({
      store: deps.store,
      clusters,
      members,
      thresholds,
      seen: clustersSeen,
      cfg: { updateFrequencyMs: s.CLUSTER_STATUS_UPDATE_FREQUENCY, probeTimeoutMs: s.CLUSTER_PROBE_TIMEOUT, discoveryRefreshMs: s.CLUSTER_DISCOVERY_REFRESH },
      onProbe,
    }),
    sql: deps.sql,
    log,
    concurrency: s.CLUSTER_STATUS_CONCURRENCY,
    resyncMs: Math.max(60_000, s.CLUSTER_STATUS_UPDATE_FREQUENCY * 6),
    listKeys: async () => (await deps.store.list(CLUSTER_GK)).items.map((c) => c.metadata.name ?? ""),
    timeoutMs: Math.max(30_000, s.CLUSTER_PROBE_TIMEOUT * 4),
    timerPollMs: deps.runner?.timerPollMs ?? Math.max(10, Math.min(250, Math.floor(s.CLUSTER_STATUS_UPDATE_FREQUENCY / 4))),
    backoff: deps.runner?.backoff,
  });

  const grpcServer = new grpc.Server();
  grpcServer.addService(
    estimatorServiceDefinition,
    estimatorHandlers({
      clusters,
      members,
      cfg: { timeoutMs: s.ESTIMATOR_TIMEOUT, maxSnapshotAgeMs: s.ESTIMATOR_SNAPSHOT_MAX_AGE },
      log: log.child({ component: "estimator" }),
      onCall: (ms) => {
        estimatorCalls.count++;
        estimatorCalls.sumMs += ms;
      },
    }),
  );

  const http: FastifyInstance = Fastify({ loggerInstance: log.child({ component: "http" }) as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
  http.get("/healthz", async () => "ok");
  http.get("/livez", async () => "ok");
  http.get("/readyz", async (_req, reply) => ((await (deps.ready?.() ?? Promise.resolve(true)).catch(() => false)) ? "ok" : reply.code(503).send("not ready: a dependency (database or NATS) is unreachable")));
  http.get("/metrics", async (_req, reply) => {
    const lines = [
      "# HELP flotilla_execution_clusters Clusters known to this replica.",
      "# TYPE flotilla_execution_clusters gauge",
      `flotilla_execution_clusters ${clusters.names().length}`,
      "# HELP flotilla_execution_cluster_probe_seconds Latency of member health probes.",
      "# TYPE flotilla_execution_cluster_probe_seconds histogram",
      ...probeBuckets.map((b, i) => `flotilla_execution_cluster_probe_seconds_bucket{le="${b}"} ${probeHist.counts[i]}`),
      `flotilla_execution_cluster_probe_seconds_bucket{le="+Inf"} ${probeHist.count}`,
      `flotilla_execution_cluster_probe_seconds_sum ${probeHist.sum}`,
      `flotilla_execution_cluster_probe_seconds_count ${probeHist.count}`,
      "# HELP flotilla_execution_cluster_probe_failures_total Probes that found a member unreachable or unhealthy.",
      "# TYPE flotilla_execution_cluster_probe_failures_total counter",
      `flotilla_execution_cluster_probe_failures_total ${probes.failures}`,
      "# HELP flotilla_execution_estimator_calls_total Estimator calls answered.",
      "# TYPE flotilla_execution_estimator_calls_total counter",
      `flotilla_execution_estimator_calls_total ${estimatorCalls.count}`,
      `flotilla_execution_estimator_call_seconds_sum ${estimatorCalls.sumMs / 1000}`,
    ];
    return reply.type("text/plain; version=0.0.4").send(renderMetrics([works, clusterStatus]) + lines.join("\n") + "\n");
  });

  const consumers: WakeUpConsumer[] = [];
  let grpcBound = false;
  let started = false;

  return {
    http,
    grpcServer,
    works,
    clusterStatus,
    clusters,
    members,
    probes,
    async start(o = {}) {
      started = true;
      await clusters.start();
      works.start();
      clusterStatus.start();
      void clusterStatus.resync().catch(() => {});
      // nothing is taken from an earlier life: every member is compared with its Works now
      for (const cluster of clusters.names()) fanOut(cluster, "start");
      if (deps.js) {
        const prefix = s.EVENTS_PREFIX;
        const durable = deps.durablePrefix ?? "execution";
        consumers.push(
          wireWakeUps({
            js: deps.js,
            stream: s.EVENTS_STREAM,
            durable: `${durable}-works`,
            subject: subjectFor(WORK_GK, prefix),
            controller: works,
            map: (w) => {
              if (!(w.namespace ?? "").startsWith("karmada-es-")) return [];
              const key = objectKey(w);
              return worksSeen.covers(key, w.resourceVersion) ? [] : [key];
            },
            log: log.child({ component: "wakeups" }),
          }),
          wireWakeUps({
            js: deps.js,
            stream: s.EVENTS_STREAM,
            durable: `${durable}-clusters`,
            subject: subjectFor(groupKind(KARMADA.cluster), prefix),
            controller: clusterStatus,
            map: async (w) => {
              const name = w.name ?? "";
              if (clustersSeen.covers(name, w.resourceVersion)) return [];
              await clusters.fresh(name); // the reconcile (and the Works) read the cache
              return [name];
            },
            log: log.child({ component: "wakeups" }),
          }),
          wireWakeUps({
            js: deps.js,
            stream: s.EVENTS_STREAM,
            durable: `${durable}-secrets`,
            subject: subjectFor(SECRET_GK, prefix),
            controller: clusterStatus,
            map: async (w) => {
              const names = clusters.referencing(w.namespace ?? "", w.name ?? "");
              for (const n of names) await clusters.fresh(n);
              return names;
            },
            log: log.child({ component: "wakeups" }),
          }),
        );
      }
      const out: { url?: string; estimatorAddress?: string } = {};
      const host = o.host ?? "127.0.0.1";
      if (o.port !== undefined) out.url = await http.listen({ host, port: o.port });
      if (o.estimatorPort !== undefined) {
        const p = await new Promise<number>((resolve, reject) =>
          grpcServer.bindAsync(`${host}:${o.estimatorPort}`, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
        );
        grpcBound = true;
        out.estimatorAddress = `${host}:${p}`;
      }
      return out;
    },
    async stop() {
      if (!started) return;
      await Promise.allSettled(consumers.map((c) => c.stop({ timeoutMs: 2000 })));
      await Promise.allSettled([works.stop(), clusterStatus.stop()]);
      clusters.stop();
      await members.close();
      if (grpcBound) await new Promise<void>((r) => grpcServer.tryShutdown(() => r()));
      await http.close();
    },
  };
}
