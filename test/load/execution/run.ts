// Execution service load test: Works applied across simulated members end to end (Work written
// → wake-up → member API → Work status Applied=True), member health-probe latency, and the
// estimator over gRPC, against the real Postgres and NATS. The service is built in this process
// exactly as main.ts builds it (relay included, its own Postgres pool); the simulator runs as a
// separate process, as members would.
//   node --conditions=source --import tsx test/load/execution/run.ts [--scenario full|smoke]
//        [--clusters N] [--works N] [--kind Deployment|ConfigMap] [--paced-rate N] [--paced-count N]
//        [--concurrency N] [--pool N] [--probe-frequency-ms N] [--only burst|paced]
// Needs `npx tsc -b packages/member-sim` (the simulator CLI runs from dist).
import os from "node:os";
import { parseArgs } from "node:util";
import { ExecutionControllerFinalizer, type Cluster, type KubeObject, type Work, rfc3339 } from "@flotilla/api";
import { buildExecution, type Execution } from "@flotilla/execution";
import { createLogger, silentLogger } from "@flotilla/log";
import { EstimatorClient } from "@flotilla/proto/grpc";
import { ObjectStore } from "@flotilla/store";
import { inProcessStack } from "../lib/in-process.js";
import { ProcessLogs } from "../lib/logs.js";
import { cpuMs, rssBytes } from "../lib/proc.js";
import { percentile, pool, sleep } from "../lib/stats.js";
import { startSimulatorProcess, type SimMember } from "../lib/stack.js";
import { SCENARIOS, type Scenario } from "./scenarios.js";
import { SCHEDULER_IDENTITY } from "@flotilla/auth";
import { testGrpcSecurity } from "@flotilla/auth/testing";

const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: "full" },
    clusters: { type: "string" },
    works: { type: "string" },
    kind: { type: "string" },
    "paced-rate": { type: "string" },
    "paced-count": { type: "string" },
    concurrency: { type: "string" },
    pool: { type: "string" },
    "probe-frequency-ms": { type: "string" },
    only: { type: "string" },
  },
});
const base = SCENARIOS[values.scenario!];
if (!base) throw new Error(`unknown scenario ${values.scenario}; one of ${Object.keys(SCENARIOS).join(", ")}`);
const num = (v: string | undefined, d: number) => (v === undefined ? d : Number(v));
const sc: Scenario = {
  ...base,
  clusters: num(values.clusters, base.clusters),
  works: num(values.works, base.works),
  kind: (values.kind as Scenario["kind"]) ?? base.kind,
  pacedRate: num(values["paced-rate"], base.pacedRate),
  pacedCount: num(values["paced-count"], base.pacedCount),
  concurrency: num(values.concurrency, base.concurrency),
  pool: num(values.pool, base.pool),
  probeFrequencyMs: num(values["probe-frequency-ms"], base.probeFrequencyMs),
};
const runBurst = !values.only || values.only === "burst";
const runPaced = !values.only || values.only === "paced";

const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
/** CPU seconds (user + system) a process used so far, from /proc. */
const cpuOf = (pid: number | undefined) => (cpuMs(pid) || 0) / 1000;
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
function manifest(i: number): KubeObject {
  const name = `app-${i}`;
  if (sc.kind === "ConfigMap") return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "load" }, data: { i: String(i) } };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "load", labels: { app: name } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx:1.25", resources: { requests: { cpu: "10m", memory: "16Mi" } } }] } },
    },
  };
}

function work(i: number, clusters: readonly SimMember[]): Work {
  const c = clusters[i % clusters.length]!;
  return {
    apiVersion: "work.karmada.io/v1alpha1",
    kind: "Work",
    metadata: { name: `app-${i}-w`, namespace: `karmada-es-${c.name}`, finalizers: [ExecutionControllerFinalizer] },
    spec: { workload: { manifests: [manifest(i) as never] } },
  };
}

/** The execution's store, noting when each Work's status first says Applied=True. */
class TimingStore extends ObjectStore {
  readonly appliedAt = new Map<string, number>();
  /** When the execution first read each Work (its first reconcile started). */
  readonly firstReadAt = new Map<string, number>();
  /** Time spent in reads and status writes (ms), for the trace. */
  readonly spent = { get: 0, gets: 0, status: 0, statuses: 0 };
  override async get<T extends KubeObject = KubeObject>(ref: { gk: string; namespace?: string; name: string }): Promise<T | undefined> {
    if (ref.gk === "work.karmada.io/Work") {
      const key = `${ref.namespace}/${ref.name}`;
      if (!this.firstReadAt.has(key)) this.firstReadAt.set(key, performance.now());
    }
    const t = performance.now();
    try {
      return await super.get<T>(ref);
    } finally {
      this.spent.get += performance.now() - t;
      this.spent.gets++;
    }
  }
  override async updateStatus<T extends KubeObject>(obj: T): Promise<T> {
    const t = performance.now();
    const out = await super.updateStatus(obj);
    this.spent.status += performance.now() - t;
    this.spent.statuses++;
    if (obj.kind === "Work") {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      const applied = (obj.status?.conditions as { type: string; status: string }[] | undefined)?.some((c) => c.type === "Applied" && c.status === "True");
      if (applied && !this.appliedAt.has(key)) this.appliedAt.set(key, performance.now());
    }
    return out;
  }
}

async function main() {
  console.log(`execution load test: scenario ${sc.name}: ${sc.clusters} clusters, ${sc.works} Works (burst), ${sc.pacedCount} Works at ${sc.pacedRate}/s (paced), ${sc.kind}, concurrency ${sc.concurrency}, pool ${sc.pool}, probe every ${sc.probeFrequencyMs} ms`);
  console.log(`machine: ${os.cpus().length} cpus (${os.cpus()[0]?.model}), node ${process.version}`);

  const sim = await startSimulatorProcess({ count: sc.clusters, readyDelayMs: sc.readyDelayMs, nodePods: 110, logs: new ProcessLogs() });
  const stack = await inProcessStack({ label: "LOADX", max: 8 });
  const { db, stream, prefix } = stack;
  const driver = new ObjectStore(db.sql);
  const execSql = await stack.pool(sc.pool);
  const store = new TimingStore(execSql);
  let exec: Execution | undefined;
  const cleanup = async () => {
    await exec?.stop().catch(() => {});
    await sim.stop();
    await stack.close().catch(() => {});
  };

  try {
    // join every member, Ready already (as if probed), so the burst can be written before the service runs
    const t0 = performance.now();
    await pool(sim.clusters.length, 16, async (i) => {
      const c = sim.clusters[i]!;
      await driver.create({ apiVersion: "v1", kind: "Secret", metadata: { name: c.name, namespace: "karmada-cluster" }, data: { token: Buffer.from(c.token).toString("base64") } });
      const cl = await driver.create<Cluster>({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: c.name }, spec: { apiEndpoint: c.server, secretRef: { namespace: "karmada-cluster", name: c.name }, syncMode: "Push" } });
      await driver.updateStatus({ ...cl, status: { conditions: [{ type: "Ready", status: "True", reason: "ClusterReady", lastTransitionTime: rfc3339(new Date()) }] } });
    });
    console.log(`joined ${sim.clusters.length} members in ${fmt(performance.now() - t0)}`);

    const createdAt = new Map<string, number>();
    const settings = {
      EVENTS_STREAM: stream,
      EVENTS_PREFIX: prefix,
      WORK_CONCURRENCY: sc.concurrency,
      WORK_RESYNC_PERIOD: 0,
      CLUSTER_STATUS_UPDATE_FREQUENCY: sc.probeFrequencyMs,
      MEMBER_ALLOW_HTTP: "loopback" as const,
    };
    const log = process.env.LOAD_LOG ? createLogger({ name: "execution", level: process.env.LOAD_LOG }) : silentLogger();
    // the estimator serves TLS and takes service account tokens: a certificate and key of the run's own
    const security = await testGrpcSecurity();
    const build = () => buildExecution({ store, sql: execSql, js: stack.js, log, settings, grpcSecurity: security.server(store, log) });

    let index = 0;
    let estimatorAddress: string | undefined;
    if (runBurst) {
      const works = Array.from({ length: sc.works }, () => work(index++, sim.clusters));
      const w0 = performance.now();
      await pool(works.length, 32, async (i) => {
        const w = works[i]!;
        await driver.create(w);
        createdAt.set(`${w.metadata.namespace}/${w.metadata.name}`, performance.now());
      });
      const writeMs = performance.now() - w0;
      console.log(`\nburst: wrote ${sc.works} Works in ${fmt(writeMs)} (${(sc.works / (writeMs / 1000)).toFixed(0)}/s) with the service stopped`);

      exec = build();
      const s0 = performance.now();
      const cpu0 = { self: selfCpu(), sim: cpuOf(sim.child.pid) };
      estimatorAddress = (await exec.start({ estimatorPort: 0 })).estimatorAddress;
      let last = 0;
      while (store.appliedAt.size < sc.works) {
        await sleep(200);
        if (performance.now() - s0 > 600_000) throw new Error(`burst: only ${store.appliedAt.size}/${sc.works} applied after 10 min`);
        if (store.appliedAt.size !== last && Math.floor(store.appliedAt.size / 5000) !== Math.floor(last / 5000)) console.log(`  ${store.appliedAt.size} applied after ${fmt(performance.now() - s0)}`);
        if (process.env.LOAD_TRACE && Math.round(performance.now() - s0) % 5000 < 200) {
          const c = exec.works.snapshot();
          const sp = store.spent;
          console.log(`  t=${fmt(performance.now() - s0)} read ${store.firstReadAt.size} applied ${store.appliedAt.size} queue ${c.queueDepth} inflight ${c.inFlight} backoff ${c.backoffKeys}; avg get ${(sp.get / Math.max(1, sp.gets)).toFixed(1)} ms, avg status write ${(sp.status / Math.max(1, sp.statuses)).toFixed(1)} ms`);
        }
        last = store.appliedAt.size;
      }
      const times = [...store.appliedAt.values()];
      const drainMs = Math.max(...times) - s0;
      const members = await Promise.all(sim.clusters.slice(0, 1).map(async (c) => (await fetch(`${sim.adminUrl}/admin/clusters/${c.name}`)).json() as Promise<{ objects: number }>));
      const cpu = { self: selfCpu() - cpu0.self, sim: cpuOf(sim.child.pid) - cpu0.sim };
      console.log(`burst: ${sc.works} Works applied in ${fmt(drainMs)} after start: ${(sc.works / (drainMs / 1000)).toFixed(0)} Works/s (first member holds ${members[0]?.objects} objects)`);
      console.log(`  cpu while draining (until now, health updates included): execution+relay ${cpu.self.toFixed(1)} s = ${((cpu.self / sc.works) * 1000).toFixed(2)} ms per Work; simulator ${cpu.sim.toFixed(1)} s = ${((cpu.sim / sc.works) * 1000).toFixed(2)} ms per Work; load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
      const snap = exec.works.snapshot();
      const p = snap.metrics.percentiles();
      console.log(`  reconciles: ${JSON.stringify(p)}`);
      console.log(`  memory: this process rss ${mb(process.memoryUsage().rss)} MB heap ${mb(process.memoryUsage().heapUsed)} MB; simulator rss ${mb(rssBytes(sim.child.pid))} MB`);
    }

    if (runPaced) {
      if (!exec) {
        exec = build();
        estimatorAddress = (await exec.start({ estimatorPort: 0 })).estimatorAddress;
      }
      const before = store.appliedAt.size;
      const interval = 1000 / sc.pacedRate;
      const keys: string[] = [];
      const p0 = performance.now();
      const pcpu0 = { self: selfCpu(), sim: cpuOf(sim.child.pid) };
      const inflight = new Set<Promise<unknown>>();
      for (let n = 0; n < sc.pacedCount; n++) {
        const due = p0 + n * interval;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        const w = work(index++, sim.clusters);
        const key = `${w.metadata.namespace}/${w.metadata.name}`;
        keys.push(key);
        const pr = driver.create(w).then(() => createdAt.set(key, performance.now()));
        inflight.add(pr);
        void pr.finally(() => inflight.delete(pr));
        if (inflight.size > 256) await Promise.race(inflight);
      }
      await Promise.all(inflight);
      const writeMs = performance.now() - p0;
      while (keys.some((k) => !store.appliedAt.has(k))) {
        await sleep(100);
        if (performance.now() - p0 > 600_000) throw new Error("paced: not all applied after 10 min");
      }
      const lat = keys.map((k) => store.appliedAt.get(k)! - createdAt.get(k)!).sort((a, b) => a - b);
      const endMs = Math.max(...keys.map((k) => store.appliedAt.get(k)!)) - p0;
      console.log(`\npaced: wrote ${sc.pacedCount} Works in ${fmt(writeMs)} (${(sc.pacedCount / (writeMs / 1000)).toFixed(0)}/s offered); all applied ${fmt(endMs)} after the first write: ${(sc.pacedCount / (endMs / 1000)).toFixed(0)} Works/s`);
      console.log(`  cpu: this process (driver + execution + relay) ${(selfCpu() - pcpu0.self).toFixed(1)} s, simulator ${(cpuOf(sim.child.pid) - pcpu0.sim).toFixed(1)} s; load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
      console.log(`  latency create → Applied: p50 ${fmt(percentile(lat, 0.5))}, p99 ${fmt(percentile(lat, 0.99))}, max ${fmt(lat[lat.length - 1]!)} (${store.appliedAt.size - before} applied)`);
      const wake = keys.map((k) => store.firstReadAt.get(k)! - createdAt.get(k)!).sort((a, b) => a - b);
      const svc = keys.map((k) => store.appliedAt.get(k)! - store.firstReadAt.get(k)!).sort((a, b) => a - b);
      console.log(`    of which create → first reconcile (outbox, relay, NATS, queue): p50 ${fmt(percentile(wake, 0.5))}, p99 ${fmt(percentile(wake, 0.99))}; first reconcile → Applied written (member + status): p50 ${fmt(percentile(svc, 0.5))}, p99 ${fmt(percentile(svc, 0.99))}`);
      console.log(`  memory: this process rss ${mb(process.memoryUsage().rss)} MB heap ${mb(process.memoryUsage().heapUsed)} MB; simulator rss ${mb(rssBytes(sim.child.pid))} MB`);
    }

    // probes: let at least two full periods pass with the Works in place
    const probe0 = exec!.probes.count;
    const lat0 = exec!.probes.latenciesMs.length;
    const win0 = performance.now();
    await sleep(Math.max(2 * sc.probeFrequencyMs + 500, 3000));
    const probes = exec!.probes.count - probe0;
    const winMs = performance.now() - win0;
    const pl = exec!.probes.latenciesMs.slice(lat0).sort((a, b) => a - b);
    console.log(`\nprobes: ${probes} in ${fmt(winMs)} over ${sc.clusters} clusters every ${sc.probeFrequencyMs} ms (${(probes / (winMs / sc.probeFrequencyMs) / sc.clusters).toFixed(2)} probes per cluster per period); latency p50 ${fmt(percentile(pl, 0.5))}, p99 ${fmt(percentile(pl, 0.99))}, max ${fmt(pl[pl.length - 1] ?? 0)}; failures ${exec!.probes.failures}`);

    if (exec!.probes.lastErrors.length) console.log(`  last probe failures: ${exec!.probes.lastErrors.slice(-5).join("; ")}`);

    // the estimator over gRPC for every member (snapshots from the status probes)
    const client = new EstimatorClient(estimatorAddress!, { deadlineMs: 3000, credentials: security.caller(store, SCHEDULER_IDENTITY) });
    const names = sim.clusters.map((c) => c.name);
    const el: number[] = [];
    for (let i = 0; i < 50; i++) {
      const e0 = performance.now();
      const r = await client.maxAvailableReplicas(names, { resourceRequest: { cpu: "100m", memory: "128Mi" } });
      el.push(performance.now() - e0);
      if (i === 0) console.log(`\nestimator: first call: ${fmt(el[0]!)}; e.g. ${r[0]!.name} can take ${r[0]!.maxReplicas}, ${r.filter((x) => x.maxReplicas < 0).length} errors`);
    }
    el.sort((a, b) => a - b);
    console.log(`estimator: 50 calls for ${names.length} clusters: p50 ${fmt(percentile(el, 0.5))}, p99 ${fmt(percentile(el, 0.99))}`);
    client.close();
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
