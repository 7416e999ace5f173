// The whole stack as processes for the failover walk-throughs: the simulator's three seed members
// in this process, then gateway, execution, binding, scheduler, taint-manager and eviction from
// their builds (test/load/lib/stack.ts), joined through the gateway, with every timing knob shrunk
// to seconds. Every call to the gateway carries the stack's administrator token.
import path from "node:path";
import { loadConfigFile, startSimulator } from "@flotilla/member-sim";
import { openDatabase } from "@flotilla/store";
import { freshDatabase, uniqueName, type PostgresServer, type TestDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../../load/lib/logs.js";
import { bearer, deleteStream, isolatedEnv, joinAndWaitReady, root, startServices, type Services, type ServicesOptions } from "../../load/lib/stack.js";

export { root };

export type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; deletionTimestamp?: string; finalizers?: string[]; generation?: number };
  // the walk-throughs read deep into specs and statuses of several kinds
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: Record<string, any>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  status?: Record<string, any>;
  [k: string]: unknown;
};

/** Timing knobs of the walk-throughs: Karmada's minutes shrunk to seconds. */
export const KNOBS = {
  // execution: probes and Ready smoothing
  CLUSTER_STATUS_UPDATE_FREQUENCY: "300ms",
  CLUSTER_FAILURE_THRESHOLD: "1s",
  CLUSTER_SUCCESS_THRESHOLD: "1s",
  CLUSTER_PROBE_TIMEOUT: "500ms",
  // taint-manager
  FAILOVER_EVICTION_TIMEOUT: "2s",
  CLUSTER_MONITOR_GRACE_PERIOD: "10s",
  CLUSTER_TAINT_EVICTION_RETRY_FREQUENCY: "1s",
  CLUSTER_CLEANUP_RETRY_FREQUENCY: "500ms",
  // gateway defaulting: the 300 s tolerations
  DEFAULT_NOT_READY_TOLERATION_SECONDS: "2",
  DEFAULT_UNREACHABLE_TOLERATION_SECONDS: "2",
  // eviction
  GRACEFUL_EVICTION_TIMEOUT: "30s",
};

export interface Stack {
  gw: string;
  /** The gateway's administrator token (group system:masters). */
  token: string;
  /** host:port of execution's replica estimator, which the scheduler asks. */
  estimator: string;
  sim: Awaited<ReturnType<typeof startSimulator>>;
  db: TestDatabase;
  get(p: string): Promise<Obj | undefined>;
  list(p: string): Promise<Obj[]>;
  post(p: string, body: unknown): Promise<Obj>;
  del(p: string): Promise<void>;
  logs(): string;
  /** The service processes (to kill one, or to start more replicas with `services.envOf`). */
  services: Services;
  /** Where the service processes' output goes (for more replicas). */
  processLogs: ProcessLogs;
  close(): Promise<void>;
}

export interface StackOptions {
  env?: Record<string, string>;
  readyDelayMs?: number;
  /** Processes per service (startServices' `replicas`); the Stack's calls go to a gateway replica that answers. */
  replicas?: ServicesOptions["replicas"];
  /** Settings of one service only (startServices' `serviceEnv`). */
  serviceEnv?: ServicesOptions["serviceEnv"];
  /** A Postgres of the test's own (default: a fresh database on the machine's server). */
  pg?: PostgresServer;
  /** Sees every request a simulated member receives. */
  onMemberRequest?: (r: MemberRequest) => void;
}

export type MemberRequest = { cluster: string; method: string; url: string; userAgent?: string };

export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const cfg = await loadConfigFile(path.join(root, "packages/member-sim/clusters.example.yaml"));
  const sim = await startSimulator(
    { ...cfg, admin: { host: "127.0.0.1", port: 0 }, defaults: { ...cfg.defaults, readyDelayMs: o.readyDelayMs ?? 300 }, clusters: cfg.clusters.map((c) => ({ ...c, port: 0 })) },
    o.onMemberRequest ? { onRequest: o.onMemberRequest } : {},
  );
  let db: TestDatabase;
  if (o.pg) {
    const own = await openDatabase({ url: o.pg.url(uniqueName("flotilla_e2e")), max: 4 });
    db = { ...own, name: "", drop: () => own.close() };
  } else db = await freshDatabase();
  const env = { ...isolatedEnv(db, "E2E"), DATABASE_POOL_SIZE: "4", LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn", ...KNOBS, ...o.env };
  const logs = new ProcessLogs();
  const close = async (services?: Services) => {
    await services?.stop();
    await sim.close();
    await db.drop();
    await deleteStream(env.EVENTS_STREAM);
  };
  let services: Services | undefined;
  try {
    services = await startServices({ env, logs, readyTimeoutMs: o.replicas ? 90_000 : 30_000, ...(o.replicas ? { replicas: o.replicas } : {}), ...(o.serviceEnv ? { serviceEnv: o.serviceEnv } : {}) });
    await joinAndWaitReady({ gatewayUrl: services.gatewayUrl, token: services.token, adminUrl: sim.adminUrl!, sql: db.sql, count: cfg.clusters.length, timeoutMs: 60_000 });
  } catch (e) {
    console.error(logs.tail(20_000));
    await close(services);
    throw e;
  }
  const gw = services.gatewayUrl;
  const gateways = services.gatewayUrls;
  const token = services.token;
  const auth = bearer(token);
  // as a client behind a Service: a gateway replica that does not answer (killed) is left for the next
  let current = 0;
  const call = async (p: string, init: RequestInit = {}): Promise<Response> => {
    for (let tried = 1; ; tried++) {
      const base = gateways[current % gateways.length]!;
      try {
        return await fetch(`${base}${p}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } });
      } catch (e) {
        if (tried >= gateways.length) throw e;
        current++;
      }
    }
  };
  return {
    gw,
    token,
    estimator: services.estimatorAddress,
    sim,
    db,
    async get(p) {
      const r = await call(p);
      if (r.status === 404) return undefined;
      if (!r.ok) throw new Error(`GET ${p}: ${r.status} ${await r.text()}`);
      return (await r.json()) as Obj;
    },
    async list(p) {
      const r = await call(p);
      if (!r.ok) throw new Error(`GET ${p}: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { items: Obj[] }).items;
    },
    async post(p, body) {
      const r = await call(p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`POST ${p}: ${r.status} ${await r.text()}`);
      return (await r.json()) as Obj;
    },
    async del(p) {
      const r = await call(p, { method: "DELETE" });
      if (!r.ok && r.status !== 404) throw new Error(`DELETE ${p}: ${r.status} ${await r.text()}`);
    },
    logs: () => logs.tail(),
    services,
    processLogs: logs,
    close: () => close(services),
  };
}

export const ready = (c: Obj | undefined) => (c?.status?.conditions as { type: string; status: string }[] | undefined)?.find((x) => x.type === "Ready")?.status;
export const taints = (c: Obj | undefined) => ((c?.spec?.taints ?? []) as { key: string; effect: string }[]).map((t) => `${t.key}:${t.effect}`).sort();
export const clustersOf = (b: Obj | undefined) => Object.fromEntries(((b?.spec?.clusters ?? []) as { name: string; replicas?: number }[]).map((c) => [c.name, c.replicas ?? 0]));
export const tasksOf = (b: Obj | undefined) => ((b?.spec?.gracefulEvictionTasks ?? []) as { fromCluster: string }[]).map((t) => t.fromCluster);

export const nginx = (replicas = 3): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "nginx", namespace: "default", labels: { app: "nginx" } } as Obj["metadata"],
  spec: {
    replicas,
    selector: { matchLabels: { app: "nginx" } },
    template: { metadata: { labels: { app: "nginx" } }, spec: { containers: [{ name: "nginx", image: "nginx", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] } },
  },
});

/** The seeds' `nginx-propagation` PropagationPolicy of the nginx Deployment, with this placement and any other spec fields. */
export const nginxPolicy = (placement: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "nginx-propagation", namespace: "default" },
  spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }], ...spec, placement },
});

/** The seed's Divided policy: nginx on member1:1 and member2:2 by static weight, member3 outside the affinity. */
export const dividedPolicy = nginxPolicy({
  clusterAffinity: { clusterNames: ["member1", "member2"] },
  replicaScheduling: {
    replicaSchedulingType: "Divided",
    replicaDivisionPreference: "Weighted",
    weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }, { targetCluster: { clusterNames: ["member2"] }, weight: 2 }] },
  },
});

export const RB = (name: string, ns = "default") => `/apis/work.karmada.io/v1alpha2/namespaces/${ns}/resourcebindings/${name}`;
export const WORKS = (cluster: string) => `/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-${cluster}/works`;
export const CLUSTER = (name: string) => `/apis/cluster.karmada.io/v1alpha1/clusters/${name}`;
export const EVENTS = (ns = "default") => `/api/v1/namespaces/${ns}/events`;
export const DEPLOY = (name: string, ns = "default") => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
