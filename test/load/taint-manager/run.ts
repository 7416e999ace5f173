// Taint-manager load test: a cluster goes NotReady → the cluster controller taints it NoExecute →
// the taint manager evicts every binding on it that does not tolerate the taint, paced by
// RESOURCE_EVICTION_RATE. The service is built in this process exactly as main.ts builds it (its
// own pool, a relay of its own), against a fresh database and stream.
//   node --conditions=source --import tsx test/load/taint-manager/run.ts [--scenario full|smoke]
//        [--bindings N] [--clusters M] [--rate N] [--concurrency N] [--pool N]
import os from "node:os";
import type { Sql } from "postgres";
import { type Cluster, type KubeObject, type ResourceBinding } from "@flotilla/api";
import { loadConfig } from "@flotilla/config";
import { silentLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { buildApp, configSchema, type App } from "@flotilla/taint-manager";
import { bindingRunnerSettings, readyCondition, readyClusters } from "../lib/binding-runner.js";
import { distribution, fmt, markdownTable, mib, pool, sleep } from "../lib/stats.js";
import { backendCpuDelta, countedStack, describe, minus, rssPeak, selfCpuMs, untilIdle, type Counts, type CountedStack } from "../lib/counted.js";

const S = bindingRunnerSettings({ rate: "1000", concurrency: "32" }, "member1 fails, the others stay");
const { n: N, m: M, clusters, rate: RATE, pool: POOL } = S;
const FAILING = "member1";
const NAMESPACES = 10;

/** The service's store, noting when member1 gets its NoExecute taint and when each binding leaves member1. */
class TimingStore extends ObjectStore {
  taintedAt: number | undefined;
  readonly evictedAt = new Map<string, number>();
  override async update<T extends KubeObject>(obj: T): Promise<T> {
    const out = await super.update(obj);
    const t = performance.now();
    if (obj.kind === "Cluster" && obj.metadata.name === FAILING && this.taintedAt === undefined && (obj as Cluster).spec?.taints?.some((x) => x.effect === "NoExecute")) this.taintedAt = t;
    if (obj.kind === "ResourceBinding") {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      if (!this.evictedAt.has(key) && !(obj as ResourceBinding).spec?.clusters?.some((c) => c.name === FAILING)) this.evictedAt.set(key, t);
    }
    return out;
  }
}


/** Binding i: one replica on member1 and one on another cluster; Divided, no tolerations (evicted at once). */
function binding(i: number): ResourceBinding {
  const name = `app-${i}`;
  const namespace = `ns-${i % NAMESPACES}`;
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name, namespace },
    spec: {
      resource: { apiVersion: "apps/v1", kind: "Deployment", namespace, name },
      replicas: 2,
      clusters: [
        { name: FAILING, replicas: 1 },
        { name: clusters[1 + (i % (M - 1))]!, replicas: 1 },
      ],
      placement: { clusterTolerations: [], replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } },
    },
  };
}

async function setup(s: CountedStack): Promise<void> {
  const ph = s.phase();
  try {
    await ph.relay();
    const gen = new ObjectStore(await ph.pool(16));
    await readyClusters(gen, clusters);
    const w0 = performance.now();
    await pool(N, 16, (i) => gen.create(binding(i)));
    console.log(`setup: ${M} Ready clusters and ${N} ResourceBindings (each on ${FAILING} and one other cluster) written in ${fmt((performance.now() - w0) / 1000, 1)} s`);
    await ph.drained();
  } finally {
    await ph.close();
  }
}

interface Running {
  app: App;
  store: TimingStore;
  gen: ObjectStore;
  sql: Sql;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** The service on a phase of its own (pool, relay), started and idle: every controller's queue empty and the outbox published, three checks in a row. */
async function startService(s: CountedStack): Promise<Running> {
  const ph = s.phase();
  await ph.relay();
  const sql = await ph.pool(POOL);
  const store = new TimingStore(sql);
  const gen = new ObjectStore(await ph.pool(2));
  const cfg = loadConfig(configSchema, {
    EVENTS_STREAM: s.stream,
    EVENTS_PREFIX: s.prefix,
    DATABASE_POOL_SIZE: String(POOL),
    FAILOVER_EVICTION_TIMEOUT: "0s",
    RESOURCE_EVICTION_RATE: String(RATE),
    CONCURRENT_BINDING_EVICTION_SYNCS: S.concurrency,
    RESYNC_PERIOD: "0",
  });
  const app = buildApp({ store, sql, log: silentLogger(), cfg, js: s.js });
  await app.start();
  const idle = () => untilIdle(ph, () => Object.values(app.controllers));
  await idle();
  return {
    app,
    store,
    gen,
    sql,
    idle,
    async stop() {
      await app.stop().catch(() => {});
      await ph.close();
    },
  };
}

const per = (c: Counts, n: number) => describe(c, n);
const total = (c: Counts) => describe(c);

console.log(`load average at the start: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(
  `taint-manager load test: scenario ${S.scenario}: ${N} bindings over ${M} clusters, ${FAILING} fails; RESOURCE_EVICTION_RATE ${RATE}/s, CONCURRENT_BINDING_EVICTION_SYNCS ${S.concurrency}, pool ${POOL}; ` +
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), Node ${process.version}; Postgres, NATS and this process share the machine`,
);
const s = await countedStack("LOADTM");
try {
  await setup(s);
  // the first start works off the setup's wake-ups (and adds the clusters' finalizers); the second
  // measures what a start of an idle service costs, taken off the measured phase below
  await (await startService(s)).stop();
  const c0 = await s.counts();
  await (await startService(s)).stop();
  const c1 = await s.counts();
  const startup = minus(c1, c0);

  const r = await startService(s);
  const mem = rssPeak();
  const cpu0 = { self: selfCpuMs(), pg: await s.backendCpu() };
  const t0 = performance.now();
  await r.gen.mutate<Cluster>({ gk: "cluster.karmada.io/Cluster", namespace: "", name: FAILING }, (c) => ({ ...c, status: { ...c.status, conditions: [...(c.status?.conditions ?? []).filter((x) => x.type !== "Ready"), readyCondition("False")] } }), { status: true });
  for (;;) {
    if (r.store.evictedAt.size >= N) break;
    if (performance.now() - t0 > 600_000) throw new Error(`only ${r.store.evictedAt.size}/${N} evicted after 10 min`);
    await sleep(20);
  }
  const tLast = Math.max(...r.store.evictedAt.values());
  await r.idle();
  const cpu1 = { self: selfCpuMs(), pg: await s.backendCpu() };
  const rss = mem.stop();
  const pacer = r.app.pacer.stats;
  const evictions = r.app.controllers.bindingEviction.snapshot().metrics.reconciles;
  await r.stop();
  const c2 = await s.counts();
  const work = minus(minus(c2, c1), startup);

  const taint = (r.store.taintedAt ?? NaN) - t0;
  const lat = distribution([...r.store.evictedAt.values()].map((t) => t - t0));
  const fromTaint = distribution([...r.store.evictedAt.values()].map((t) => t - r.store.taintedAt!));
  const self = cpu1.self - cpu0.self;
  const pg = backendCpuDelta(cpu0.pg, cpu1.pg);
  console.log(
    `\n${markdownTable(
      ["measure", "value"],
      [
        ["bindings evicted from member1", `${fmt(r.store.evictedAt.size)} of ${fmt(N)} (binding-eviction reconciles: ${fmt(evictions.done)} done, ${fmt(evictions.error)} failed)`],
        ["Ready=False written → NoExecute taint", `${fmt(taint, 0)} ms`],
        ["throughput, taint → last eviction", `${fmt(N / ((tLast - r.store.taintedAt!) / 1000))} bindings/s (pacer: ${fmt(pacer.granted)} let through, ${fmt(pacer.waitedMs / 1000, 1)} s waited in all)`],
        ["throughput, Ready=False → last eviction", `${fmt(N / ((tLast - t0) / 1000))} bindings/s in ${fmt((tLast - t0) / 1000, 2)} s`],
        ["latency Ready=False → binding evicted", `p50 ${fmt(lat.p50, 1)} ms, p99 ${fmt(lat.p99, 1)} ms, max ${fmt(lat.max, 1)} ms`],
        ["latency taint → binding evicted", `p50 ${fmt(fromTaint.p50, 1)} ms, p99 ${fmt(fromTaint.p99, 1)} ms`],
        ["CPU ms per binding", `${fmt((self + pg) / N, 2)} (this process: service + relay ${fmt(self / N, 2)}; Postgres backends ${fmt(pg / N, 2)})`],
        ["peak RSS of this process", `${mib(rss)} MiB`],
        ["counted cost per binding", per(work, N)],
        ["counted cost of the phase", `${total(work)} (a start of the idle service, taken off: ${total(startup)})`],
      ],
    )}`,
  );
} finally {
  await s.close();
}
console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
process.exit(0);
