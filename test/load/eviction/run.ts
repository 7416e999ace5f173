// Eviction service load test: bindings carrying a graceful-eviction task (from member1, as the
// taint manager leaves them) whose replacement turns Healthy → the graceful-eviction controller
// drops the task. The service is built in this process exactly as main.ts builds it (its own
// pool, a relay of its own), against a fresh database and stream.
//   node --conditions=source --import tsx test/load/eviction/run.ts [--scenario full|smoke]
//        [--bindings N] [--clusters M] [--rate N] [--concurrency N] [--pool N]
import os from "node:os";
import { rfc3339, type KubeObject, type ResourceBinding } from "@flotilla/api";
import { loadConfig } from "@flotilla/config";
import { buildApp, configSchema, type App } from "@flotilla/eviction";
import { silentLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { bindingRunnerSettings, readyClusters } from "../lib/binding-runner.js";
import { distribution, fmt, markdownTable, mib, pool, sleep } from "../lib/stats.js";
import { backendCpuDelta, countedStack, describe, minus, rssPeak, selfCpuMs, untilIdle, type Counts, type CountedStack } from "../lib/counted.js";

const S = bindingRunnerSettings({ rate: "0", concurrency: "16" }, "member1 was evicted from, the others replace it");
const { n: N, m: M, clusters, rate: RATE, pool: POOL } = S;
const EVICTED = "member1";
const NAMESPACES = 10;
const RB = "work.karmada.io/ResourceBinding";

/** The service's store, noting when each binding's last graceful-eviction task is dropped. */
class TimingStore extends ObjectStore {
  readonly droppedAt = new Map<string, number>();
  override async update<T extends KubeObject>(obj: T): Promise<T> {
    const out = await super.update(obj);
    if (obj.kind === "ResourceBinding" && !((obj as ResourceBinding).spec?.gracefulEvictionTasks?.length ?? 0)) {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      if (!this.droppedAt.has(key)) this.droppedAt.set(key, performance.now());
    }
    return out;
  }
}

const ref = (i: number) => ({ gk: RB, namespace: `ns-${i % NAMESPACES}`, name: `app-${i}` });
const replacement = (i: number) => clusters[1 + (i % (M - 1))]!;

/** Binding i as the taint manager and the scheduler leave it: off member1 with a task from it, both replicas rescheduled onto another cluster. */
function binding(i: number): ResourceBinding {
  const { namespace, name } = ref(i);
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: { name, namespace },
    spec: {
      resource: { apiVersion: "apps/v1", kind: "Deployment", namespace, name },
      replicas: 2,
      clusters: [{ name: replacement(i), replicas: 2 }],
      placement: { clusterTolerations: [], replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } },
      gracefulEvictionTasks: [{ fromCluster: EVICTED, replicas: 1, reason: "TaintUntolerated", producer: "TaintManager", purgeMode: "Gracefully", creationTimestamp: rfc3339(new Date()) }],
    },
  };
}

/** The binding's status as the binding service aggregates it: scheduled (observed), the replacement reporting `health`. */
async function report(store: ObjectStore, i: number, health: "Unknown" | "Healthy"): Promise<void> {
  await store.mutate<ResourceBinding>(
    ref(i),
    (b) => ({ ...b, status: { ...b.status, schedulerObservedGeneration: b.metadata.generation, aggregatedStatus: [{ clusterName: replacement(i), applied: true, health }] } }),
    { status: true },
  );
}

/** Writes the N bindings' status at `rate` per second (0: as fast as 16 writers go); returns when each write returned. */
async function reportAll(store: ObjectStore, health: "Unknown" | "Healthy", rate: number): Promise<Map<string, number>> {
  const at = new Map<string, number>();
  const t0 = performance.now();
  await pool(N, rate > 0 ? 64 : 16, async (i) => {
    if (rate > 0) {
      const due = t0 + (i * 1000) / rate;
      if (due > performance.now()) await sleep(due - performance.now());
    }
    await report(store, i, health);
    at.set(`${ref(i).namespace}/${ref(i).name}`, performance.now());
  });
  return at;
}

/** Clusters and bindings written (relay running); then the bindings' first status, counted alone: what the measured phase's own status writes cost. */
async function setup(s: CountedStack): Promise<Counts> {
  const ph = s.phase();
  try {
    await ph.relay();
    const gen = new ObjectStore(await ph.pool(16));
    await readyClusters(gen, clusters);
    const w0 = performance.now();
    await pool(N, 16, (i) => gen.create(binding(i)));
    console.log(`setup: ${M} Ready clusters and ${N} ResourceBindings with a graceful-eviction task from ${EVICTED} written in ${fmt((performance.now() - w0) / 1000, 1)} s`);
    await ph.drained();
  } finally {
    await ph.close();
  }
  const c0 = await s.counts();
  const ph2 = s.phase();
  try {
    await ph2.relay();
    await reportAll(new ObjectStore(await ph2.pool(16)), "Unknown", 0);
    await ph2.drained();
  } finally {
    await ph2.close();
  }
  return minus(await s.counts(), c0);
}

interface Running {
  app: App;
  store: TimingStore;
  gen: ObjectStore;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** The service on a phase of its own (pool, relay), started and idle: every controller's queue empty and the outbox published, three checks in a row. */
async function startService(s: CountedStack): Promise<Running> {
  const ph = s.phase();
  await ph.relay();
  const sql = await ph.pool(POOL);
  const store = new TimingStore(sql);
  const gen = new ObjectStore(await ph.pool(16));
  const cfg = loadConfig(configSchema, {
    EVENTS_STREAM: s.stream,
    EVENTS_PREFIX: s.prefix,
    DATABASE_POOL_SIZE: String(POOL),
    CONCURRENT_GRACEFUL_EVICTION_SYNCS: S.concurrency,
    RESYNC_PERIOD: "0",
  });
  const app = buildApp({ store, sql, log: silentLogger(), cfg, js: s.js });
  await app.start();
  const idle = () => untilIdle(ph, () => [app.controller, app.applicationFailover, app.moveBack]);
  await idle();
  return {
    app,
    store,
    gen,
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
  `eviction load test: scenario ${S.scenario}: ${N} bindings over ${M} clusters, each with a task from ${EVICTED}; replacements turn Healthy ${RATE > 0 ? `at ${RATE}/s` : "as fast as 16 writers go"}; ` +
    `CONCURRENT_GRACEFUL_EVICTION_SYNCS ${S.concurrency}, pool ${POOL}; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), Node ${process.version}; Postgres, NATS and this process share the machine`,
);
const s = await countedStack("LOADEV");
try {
  const reports = await setup(s);
  // the first start works off the setup's wake-ups (every binding assessed, its task kept); the
  // second measures what a start of the idle service costs, taken off the measured phase below
  await (await startService(s)).stop();
  const c0 = await s.counts();
  await (await startService(s)).stop();
  const c1 = await s.counts();
  const startup = minus(c1, c0);

  const r = await startService(s);
  if (r.store.droppedAt.size) throw new Error(`${r.store.droppedAt.size} tasks dropped before any replacement was Healthy`);
  const mem = rssPeak();
  const cpu0 = { self: selfCpuMs(), pg: await s.backendCpu() };
  const t0 = performance.now();
  const healthyAt = await reportAll(r.gen, "Healthy", RATE);
  const tWritten = performance.now();
  for (;;) {
    if (r.store.droppedAt.size >= N) break;
    if (performance.now() - t0 > 600_000) throw new Error(`only ${r.store.droppedAt.size}/${N} tasks dropped after 10 min`);
    await sleep(20);
  }
  const tLast = Math.max(...r.store.droppedAt.values());
  await r.idle();
  const cpu1 = { self: selfCpuMs(), pg: await s.backendCpu() };
  const rss = mem.stop();
  const rec = r.app.controller.snapshot().metrics;
  const reconciles = rec.reconciles;
  const pc = rec.percentiles([0.5, 0.99]);
  await r.stop();
  const c2 = await s.counts();
  const work = minus(minus(minus(c2, c1), startup), reports);

  const lat = distribution([...healthyAt].map(([k, t]) => (r.store.droppedAt.get(k) ?? NaN) - t).filter((x) => !Number.isNaN(x)));
  const self = cpu1.self - cpu0.self;
  const pg = backendCpuDelta(cpu0.pg, cpu1.pg);
  console.log(
    `\n${markdownTable(
      ["measure", "value"],
      [
        ["tasks dropped (replacement Healthy)", `${fmt(r.store.droppedAt.size)} of ${fmt(N)} (graceful-eviction reconciles: ${fmt(reconciles.done)} done, ${fmt(reconciles.error)} failed)`],
        ["replacements reported Healthy", `${fmt(N)} status writes in ${fmt((tWritten - t0) / 1000, 2)} s (${fmt(N / ((tWritten - t0) / 1000))}/s)`],
        ["throughput, first Healthy → last task dropped", `${fmt(N / ((tLast - t0) / 1000))} bindings/s in ${fmt((tLast - t0) / 1000, 2)} s`],
        ["latency Healthy written → task dropped", `p50 ${fmt(lat.p50, 1)} ms, p99 ${fmt(lat.p99, 1)} ms, max ${fmt(lat.max, 1)} ms`],
        ["graceful-eviction reconcile", `p50 ${fmt(pc.p50, 1)} ms, p99 ${fmt(pc.p99, 1)} ms (last 2048)`],
        ["CPU ms per binding", `${fmt((self + pg) / N, 2)} (this process: service + relay + the status writes ${fmt(self / N, 2)}; Postgres backends ${fmt(pg / N, 2)})`],
        ["peak RSS of this process", `${mib(rss)} MiB`],
        ["counted cost per binding", per(work, N)],
        ["counted cost of the phase", `${total(work)}; taken off: a start of the idle service (${total(startup)}) and the status writes, as counted when the same writes set Unknown (${total(reports)})`],
      ],
    )}`,
  );
} finally {
  await s.close();
}
console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
process.exit(0);
