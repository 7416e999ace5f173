import type { FastifyInstance } from "fastify";
import { randomUUID } from "node:crypto";
import { ESTIMATOR_METHODS, authorizedHandlers, serverCredentials, type GrpcServerSecurity } from "@flotilla/auth";
import { GK, KARMADA, clusterOfExecutionNamespace, executionNamespace, groupKind, type KubeObject } from "@flotilla/api";
import { subjectFor, type JetStreamClient } from "@flotilla/events";
import type { Logger } from "@flotilla/log";
import { Metrics, SeenVersions, ServiceHost, createController, objectKey, wireWakeUps, type Controller } from "@flotilla/runtime";
import { clustersIn, worksIn, type ObjectStore, type Sql } from "@flotilla/store";
import type { HealthResult } from "@flotilla/kube";
import { ReadyThresholds } from "@flotilla/member-apply";
import { workKeyOf } from "@flotilla/member-apply";
import { ClusterCache } from "./controllers/cluster-cache.js";
import { MemberComparisons, type CompareWhy } from "./controllers/member-comparisons.js";
import { clusterStatusController } from "./controllers/cluster-status.js";
import { estimatorHandlers, estimatorServiceDefinition } from "./controllers/estimator.js";
import { MemberLeases } from "./controllers/member-leases.js";
import { Members } from "./controllers/members.js";
import { executionController } from "./controllers/work.js";
import { common, defaultsOf, type ConfigOf } from "@flotilla/config";
import { configSchema, type Config } from "./config.js";

/** The settings buildExecution uses: the service's own (config.ts) but its listeners and name, and the wake-up stream's (tests pass shrunk timings). */
export type ExecutionSettings = Omit<Config, "HOST" | "PORT" | "ESTIMATOR_PORT" | "REPLICA_NAME"> & Pick<ConfigOf<typeof common>, "EVENTS_STREAM" | "EVENTS_PREFIX">;

export const DEFAULT_SETTINGS: ExecutionSettings = { ...defaultsOf(configSchema), EVENTS_STREAM: defaultsOf(common).EVENTS_STREAM, EVENTS_PREFIX: defaultsOf(common).EVENTS_PREFIX };

/** A replica's own wake-up consumers are deleted by the server after this long without a pull (the replica went away). */
const OWN_CONSUMER_INACTIVE_MS = 5 * 60_000;

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
  /** The process's metrics registry (default: one of its own). */
  metrics?: Metrics;
  /**
   * This replica's name among the execution replicas (member leases, its own wake-up consumers).
   * Keep it across restarts of one replica (main uses host name and port) so that a restarted
   * replica takes its members back at once; default: a random one.
   */
  replica?: string;
  /**
   * The replica estimator's TLS material and who may call it (service account tokens, RBAC:
   * `create` on maxavailablereplicas in estimator.flotilla.io). Without it no estimator port is served.
   */
  grpcSecurity?: GrpcServerSecurity;
}

/** The execution service's own metric names (besides the controller runtime's). */
export const EXECUTION_METRICS = {
  clusters: "flotilla_execution_clusters",
  probeDuration: "flotilla_execution_member_probe_duration_seconds",
  probeFailures: "flotilla_execution_member_probe_failures_total",
  estimatorCallDuration: "flotilla_execution_estimator_call_duration_seconds",
  ownedClusters: "flotilla_execution_owned_clusters",
  leaseChanges: "flotilla_execution_member_lease_changes_total",
  leaseFailedRounds: "flotilla_execution_member_lease_failed_rounds_total",
} as const;

export interface Execution {
  http: FastifyInstance;
  works: Controller;
  clusterStatus: Controller;
  clusters: ClusterCache;
  members: Members;
  metrics: Metrics;
  /** The member leases of this replica (undefined with MEMBER_SHARDING off: every member is this replica's). */
  leases?: MemberLeases;
  /** Whether this replica works on the member now. */
  owns(cluster: string): boolean;
  /** Probe latencies observed since start (ms), for the load test and metrics. */
  probes: { count: number; failures: number; latenciesMs: number[]; lastErrors: string[]; lastAt: Map<string, number> };
  /** Starts caches, controllers, consumers and servers. `port`/`estimatorPort` 0 = any free port, undefined = not served. */
  start(o?: { host?: string; port?: number; estimatorPort?: number }): Promise<{ url?: string; estimatorAddress?: string }>;
  stop(): Promise<void>;
}

export function buildExecution(deps: ExecutionDeps): Execution {
  const s: ExecutionSettings = { ...DEFAULT_SETTINGS, ...deps.settings };
  const log = deps.log;
  const worksSeen = new SeenVersions();
  const clustersSeen = new SeenVersions();
  const probes = { count: 0, failures: 0, latenciesMs: [] as number[], lastErrors: [] as string[], lastAt: new Map<string, number>() };
  const metrics = deps.metrics ?? new Metrics();
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const probeDuration = metrics.histogram(EXECUTION_METRICS.probeDuration, "Latency of member health probes (/readyz, falling back to /healthz).", buckets);
  const probeFailures = metrics.counter(EXECUTION_METRICS.probeFailures, "Probes that found a member unreachable or unhealthy.");
  const estimatorCalls = metrics.histogram(EXECUTION_METRICS.estimatorCallDuration, "Estimator calls answered, by how long they took.", buckets);
  // eslint-disable-next-line prefer-const
  let works: Controller;
  // eslint-disable-next-line prefer-const
  let clusterStatus: Controller;
  const replica = deps.replica ?? `execution-${randomUUID().slice(0, 8)}`;
  // a renewal more often than a third of the lease keeps a lease through two failed rounds
  const renewMs = Math.max(50, Math.min(s.MEMBER_LEASE_RENEW_INTERVAL, Math.floor(s.MEMBER_LEASE_DURATION / 3)));
  const leases = s.MEMBER_SHARDING
    ? new MemberLeases({
        sql: deps.sql,
        replica,
        leaseMs: s.MEMBER_LEASE_DURATION,
        renewMs,
        members: () => clusters.names(),
        log: log.child({ component: "member-leases", replica }),
        onAcquired: (cluster, first) => {
          // taken over from a replica that was smoothing its Ready condition: go on smoothing
          if (!first) thresholds.continueFrom(cluster, clusters.get(cluster)?.cluster.status?.conditions);
          clusterStatus.add(cluster);
          if (first) fanOut(cluster, "start");
          else comparisons.takeOver(cluster);
        },
        onReleased: (cluster) => {
          members.stopWatching(cluster);
          thresholds.forget(cluster);
        },
      })
    : undefined;
  const owns = (cluster: string): boolean => !leases || leases.owns(cluster);

  const members: Members = new Members({
    log: log.child({ component: "members" }),
    client: { timeoutMs: s.MEMBER_REQUEST_TIMEOUT, maxSockets: s.MEMBER_MAX_SOCKETS, userAgent: `flotilla-execution/${replica}` },
    watchTimeoutSeconds: Math.max(1, Math.round(s.MEMBER_WATCH_TIMEOUT / 1000)),
    onObject: (cluster, _type, obj: KubeObject) => {
      const key = workKeyOf(obj);
      if (key && key.startsWith(executionNamespace(cluster) + "/")) works.add(key);
    },
    onReconnect: (cluster) => fanOut(cluster, "reconnect"),
    onNewClient: (cluster) => fanOut(cluster, "new-client"),
  });

  const comparisons: MemberComparisons = new MemberComparisons({
    store: deps.store,
    clusters: () => clusters,
    members: () => members,
    works: () => works,
    owns,
    log,
    requestTimeoutMs: s.MEMBER_REQUEST_TIMEOUT,
    probeTimeoutMs: s.CLUSTER_PROBE_TIMEOUT,
    retryIntervalMs: s.WORK_RETRY_INTERVAL,
  });
  const fanOut = (cluster: string, why: CompareWhy): void => comparisons.fanOut(cluster, why);

  const clusters = new ClusterCache(deps.store, { refreshMs: s.CLUSTER_CACHE_REFRESH, log: log.child({ component: "cluster-cache" }), onTransition: fanOut, policy: { allowHttp: s.MEMBER_ALLOW_HTTP } });
  const thresholds = new ReadyThresholds({ successThresholdMs: s.CLUSTER_SUCCESS_THRESHOLD, failureThresholdMs: s.CLUSTER_FAILURE_THRESHOLD });

  const runner = { timerPollMs: deps.runner?.timerPollMs, backoff: deps.runner?.backoff };
  works = createController({
    reconciler: executionController({ store: deps.store, clusters, members, seen: worksSeen, retryMs: s.WORK_RETRY_INTERVAL, listWaitMs: s.MEMBER_REQUEST_TIMEOUT, owns }),
    sql: deps.sql,
    log,
    concurrency: s.WORK_CONCURRENCY,
    resyncMs: s.WORK_RESYNC_PERIOD,
    // sharded, a Work's retry belongs to its member's owner (a new owner compares all its Works)
    ...(leases ? { timerScope: replica } : {}),
    listKeys: async () =>
      (await worksIn(deps.store).keys())
        .map(({ key }) => key)
        .filter((key) => {
          const cluster = clusterOfExecutionNamespace(key.slice(0, key.indexOf("/")));
          return cluster !== undefined && owns(cluster);
        }),
    ...runner,
  });

  const onProbe = (cluster: string, h: HealthResult | undefined) => {
    probes.count++;
    probes.lastAt.set(cluster, Date.now());
    if (!h?.healthy) {
      probes.failures++;
      probeFailures.inc();
      probes.lastErrors.push(`${cluster}: ${h ? (h.error ?? `HTTP ${h.statusCode} from ${h.path}`) : "no client"}`);
      if (probes.lastErrors.length > 20) probes.lastErrors.shift();
    }
    if (h) {
      probes.latenciesMs.push(h.latencyMs);
      if (probes.latenciesMs.length > 10_000) probes.latenciesMs.splice(0, 5_000);
      probeDuration.observe(h.latencyMs / 1000);
    }
  };
  clusterStatus = createController({
    reconciler: clusterStatusController({
      store: deps.store,
      clusters,
      members,
      thresholds,
      seen: clustersSeen,
      cfg: { updateFrequencyMs: s.CLUSTER_STATUS_UPDATE_FREQUENCY, probeTimeoutMs: s.CLUSTER_PROBE_TIMEOUT, discoveryRefreshMs: s.CLUSTER_DISCOVERY_REFRESH },
      onProbe,
      owns,
    }),
    sql: deps.sql,
    log,
    concurrency: s.CLUSTER_STATUS_CONCURRENCY,
    resyncMs: Math.max(60_000, s.CLUSTER_STATUS_UPDATE_FREQUENCY * 6),
    ...(leases ? { timerScope: replica } : {}),
    listKeys: async () => (await clustersIn(deps.store).keys()).map(({ key }) => key).filter(owns),
    timeoutMs: Math.max(30_000, s.CLUSTER_PROBE_TIMEOUT * 4),
    timerPollMs: deps.runner?.timerPollMs ?? Math.max(10, Math.min(250, Math.floor(s.CLUSTER_STATUS_UPDATE_FREQUENCY / 4))),
    backoff: deps.runner?.backoff,
  });

  metrics.gauge(EXECUTION_METRICS.clusters, "Clusters known to this replica.", [], function () {
    this.set(clusters.names().length);
  });
  metrics.gauge(EXECUTION_METRICS.ownedClusters, "Member clusters this replica probes, watches and applies (its leases).", [], function () {
    this.set(leases ? leases.owned().length : clusters.names().length);
  });
  metrics.counter(EXECUTION_METRICS.leaseChanges, "Member leases this replica took or gave up.", ["change"], function () {
    this.reset();
    this.inc({ change: "acquired" }, leases?.stats.acquired ?? 0);
    this.inc({ change: "released" }, leases?.stats.released ?? 0);
  });
  metrics.counter(EXECUTION_METRICS.leaseFailedRounds, "Lease rounds that could not reach the database.", [], function () {
    this.reset();
    this.inc(leases?.stats.failedRounds ?? 0);
  });
  const js = deps.js;
  const host = new ServiceHost({ name: "execution", log, metrics, ready: deps.ready });
  const sec = deps.grpcSecurity;
  if (sec) {
    const estimatorLog = log.child({ component: "estimator" });
    const handlers = estimatorHandlers({
      clusters,
      members,
      cfg: { timeoutMs: s.ESTIMATOR_TIMEOUT, maxSnapshotAgeMs: s.ESTIMATOR_SNAPSHOT_MAX_AGE },
      log: estimatorLog,
      onCall: (ms) => estimatorCalls.observe(ms / 1000),
    });
    host
      .grpc(estimatorServiceDefinition, authorizedHandlers({ authenticator: sec.tokens, authorizer: sec.authorizer }, handlers, ESTIMATOR_METHODS, estimatorLog), { credentials: serverCredentials(sec.tls) })
      .step({ start: () => sec.authorizer.start(), stop: () => sec.authorizer.stop() });
  }
  host
    .step({ start: () => clusters.start(), stop: () => clusters.stop() })
    .closing(() => members.close())
    // only once nothing runs: the members are free for the other replicas at once
    .step({ stop: () => leases?.stop() })
    .controllers(works, clusterStatus)
    .step({
      start: async () => {
        if (leases) {
          // each member this replica takes is compared with its Works then (onAcquired)
          await leases.start();
          return;
        }
        void clusterStatus.resync().catch(() => {});
        // nothing is taken from an earlier life: every member is compared with its Works now
        for (const cluster of clusters.names()) fanOut(cluster, "start");
      },
      stop: () => comparisons.stop(),
    });
  // without JetStream (tests) the controllers run on resyncs, timers and member events alone
  host.wakeUps(
    deps.durablePrefix ?? "execution",
    () => {
      if (!js) return [];
      // Sharded, a wake-up must reach the replica that owns its member: every replica has its own
      // consumers (from the moment it starts; taking a member compares all its Works anyway) and
      // keeps the wake-ups of its members; without sharding the replicas share one.
      const durable = leases ? `${deps.durablePrefix ?? "execution"}-${replica.replace(/[^A-Za-z0-9_-]/g, "_")}` : (deps.durablePrefix ?? "execution");
      const common = { js, stream: s.EVENTS_STREAM, ...(leases ? { ownConsumer: { inactiveThresholdMs: OWN_CONSUMER_INACTIVE_MS } } : {}), log: log.child({ component: "wakeups" }) };
      return [
        wireWakeUps({
          ...common,
          durable: `${durable}-works`,
          subject: subjectFor(GK.work, s.EVENTS_PREFIX),
          controller: works,
          map: (w) => {
            const cluster = clusterOfExecutionNamespace(w.namespace ?? "");
            if (cluster === undefined || !owns(cluster)) return [];
            const key = objectKey(w);
            return worksSeen.covers(key, w.resourceVersion) ? [] : [key];
          },
        }),
        wireWakeUps({
          ...common,
          durable: `${durable}-clusters`,
          subject: subjectFor(groupKind(KARMADA.cluster), s.EVENTS_PREFIX),
          controller: clusterStatus,
          map: async (w) => {
            const name = w.name ?? "";
            if (clustersSeen.covers(name, w.resourceVersion)) return [];
            await clusters.fresh(name); // the reconcile (and the Works) read the cache
            if (leases && !leases.owns(name)) {
              leases.nudge(); // a new member is taken at once rather than at the next round
              return [];
            }
            return [name];
          },
        }),
        wireWakeUps({
          ...common,
          durable: `${durable}-secrets`,
          subject: subjectFor(GK.secret, s.EVENTS_PREFIX),
          controller: clusterStatus,
          map: async (w) => {
            const names = clusters.referencing(w.namespace ?? "", w.name ?? "");
            for (const n of names) await clusters.fresh(n);
            return names.filter(owns);
          },
        }),
      ];
    },
    { stopTimeoutMs: 2000 },
  );

  return {
    http: host.http,
    works,
    clusterStatus,
    clusters,
    members,
    metrics,
    leases,
    owns,
    probes,
    async start(o = {}) {
      if (o.estimatorPort !== undefined && !sec) throw new Error("the replica estimator is served only with TLS and authentication (grpcSecurity)");
      await host.start();
      const out: { url?: string; estimatorAddress?: string } = {};
      const hostname = o.host ?? "127.0.0.1";
      if (o.port !== undefined) out.url = (await host.listen({ host: hostname, port: o.port })).url;
      if (o.estimatorPort !== undefined) out.estimatorAddress = await host.listenGrpc(hostname, o.estimatorPort);
      return out;
    },
    stop: () => host.stop(),
  };
}
