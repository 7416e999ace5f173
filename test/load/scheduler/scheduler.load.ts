// Scheduler load test: N ResourceBindings over C simulated Clusters, scheduled through Postgres
// and NATS by the scheduler service running as its own process from its build
// (services/scheduler/dist/main.js, as the other load runners run the services), exactly as
// deployed: outbox relay -> JetStream -> wake-ups -> reconcile -> two writes per binding.
//
//   npm run build
//   node --conditions=source --import tsx test/load/scheduler/scheduler.load.ts [options]
//     --bindings 10000   --clusters 100
//     --rate 0           bindings created per second (0: as fast as --writers allow)
//     --writers 32       creations in flight
//     --concurrency 32   the scheduler's CONCURRENCY
//     --smoke            500 bindings over 20 clusters
//     --replicas 1       scheduler processes (they share the durable consumer)
//     --backlog          create every binding first, then start the scheduler (throughput of the
//                        scheduling pipeline alone; latency then measures the queue, not a decision)
//     --timeout-s 300    longest wait for every binding to be Scheduled
//     --profile DIR      CPU profiles of the scheduler processes (written when they stop)
//
// Prints throughput (bindings scheduled per second, first creation to last Scheduled), latency
// from the creation call to the binding's Scheduled status (observed with a store watch),
// the scheduler process's CPU time and memory, and the machine's CPU use. Uses a fresh database
// and its own stream, so it never touches a running stack.
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { GK, type AnyResourceBinding } from "@flotilla/api";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase } from "@flotilla/testkit";
import { backendCpu, backendCpuDelta } from "../lib/counters.js";
import { ProcessLogs } from "../lib/logs.js";
import { scrape, sum } from "../lib/metrics.js";
import { RssSampler, busyShare, cpuMs, cpuMsByName, freePort, machineCpu, peakRssBytes } from "../lib/proc.js";
import { deleteStream, isolatedEnv, launchService, waitReady, type Managed } from "../lib/stack.js";
import { distribution, mib, pool, sleep } from "../lib/stats.js";
import { NAMESPACE, SHAPES, makeBinding, makeClusters } from "./scenario.js";

const { values } = parseArgs({
  options: {
    bindings: { type: "string", default: "10000" },
    clusters: { type: "string", default: "100" },
    rate: { type: "string", default: "0" },
    writers: { type: "string", default: "32" },
    concurrency: { type: "string", default: "32" },
    smoke: { type: "boolean", default: false },
    backlog: { type: "boolean", default: false },
    replicas: { type: "string", default: "1" },
    "timeout-s": { type: "string", default: "300" },
    profile: { type: "string" },
  },
});
const N = values.smoke ? 500 : Number(values.bindings);
const C = values.smoke ? 20 : Number(values.clusters);
const RATE = Number(values.rate);
const WRITERS = Number(values.writers);
const BACKLOG = values.backlog!;
const REPLICAS = Number(values.replicas);

const db = await freshDatabase({ max: 16 });
const store = new ObjectStore(db.sql);
// a stream of its own, which the scheduler creates when it starts
const env = {
  ...isolatedEnv(db, "LOAD"),
  SCHEDULER_GRPC_PORT: "0",
  ESTIMATOR_ENABLED: "false",
  CONCURRENCY: values.concurrency!,
  RESYNC: "0",
  // the clusters here are objects with a fixed resourceSummary and no members behind them: nothing
  // ever reports a replica running, so with the assumed ledger the fleet would fill up and later
  // bindings be Unschedulable (ASSUMED_LEDGER=true in the environment measures it anyway)
  ASSUMED_LEDGER: process.env.ASSUMED_LEDGER ?? "false",
  LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
};

for (const c of makeClusters(C)) await store.create(c);

const ports: number[] = [];
for (let i = 0; i < REPLICAS; i++) ports.push(await freePort());
const logs = new ProcessLogs();
const schedulers: Managed[] = [];
const stopSchedulers = () => Promise.all(schedulers.map((s) => s.stop()));
process.once("SIGINT", () => void stopSchedulers().finally(() => process.exit(130)));

async function startSchedulers(): Promise<void> {
  for (const port of ports) {
    schedulers.push(launchService("scheduler", { env: { ...env, PORT: String(port) }, logs, ...(values.profile ? { cpuProfDir: path.resolve(values.profile) } : {}) }));
  }
  await waitReady(schedulers, ports, 30_000);
}

// Observe Scheduled through a store watch (Postgres outbox, independent of NATS).
const created = new Map<string, number>();
const scheduledAt = new Map<string, number>();
const failed = new Map<string, string>();
const ac = new AbortController();
const watch = await store.watch<AnyResourceBinding>(GK.resourceBinding, { namespace: NAMESPACE, signal: ac.signal });
const watching = (async () => {
  for await (const e of watch) {
    const b = e.object;
    const name = b.metadata.name!;
    if (scheduledAt.has(name)) continue;
    const cond = b.status?.conditions?.find((c) => c.type === "Scheduled");
    if (cond?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation) scheduledAt.set(name, performance.now());
    else if (cond?.status === "False") failed.set(name, `${cond.reason}: ${cond.message}`);
    if (scheduledAt.size >= N) break;
  }
})();

async function createAll(t0: number): Promise<void> {
  await pool(N, WRITERS, async (i) => {
    if (RATE > 0) {
      const wait = t0 + (i / RATE) * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
    }
    const b = makeBinding(i, C);
    const at = performance.now();
    await store.create(b);
    created.set(b.metadata.name!, at);
  });
}

// Streaming (default): the scheduler runs while the bindings are created; throughput and latency
// from the first creation. Backlog: every binding exists (and its wake-up waits in the outbox)
// before the scheduler starts; throughput from the scheduler being ready.
let createdMs = 0;
if (BACKLOG) {
  const c0 = performance.now();
  await createAll(c0);
  createdMs = performance.now() - c0;
}
await startSchedulers();
const load0 = os.loadavg()[0]!;
const schedulerCpuMs = () => schedulers.reduce((a, s) => a + (cpuMs(s.child.pid) || 0), 0);
const rss = new RssSampler(() => new Map(schedulers.map((s, i) => [String(i), s.child.pid])), 200);
const before = { backends: await backendCpu(db.sql, db.name), nats: cpuMsByName("nats-server"), self: process.cpuUsage(), scheduler: schedulerCpuMs(), machine: machineCpu() };
const t0 = performance.now();
if (!BACKLOG) {
  await createAll(t0);
  createdMs = performance.now() - t0;
}

const deadline = Date.now() + Number(values["timeout-s"]) * 1000;
while (scheduledAt.size < N && Date.now() < deadline) await sleep(200);
const t1 = Math.max(...scheduledAt.values());
rss.stop();
const machinePct = busyShare(before.machine, machineCpu()) * 100;
const schedulerS = (schedulerCpuMs() - before.scheduler) / 1000;
const hwm = Math.max(...schedulers.map((s) => peakRssBytes(s.child.pid)));
const pgS = backendCpuDelta(before.backends, await backendCpu(db.sql, db.name)) / 1000;
const natsS = (cpuMsByName("nats-server") - before.nats) / 1000;
const self = process.cpuUsage(before.self);
ac.abort();
await watching.catch(() => {});

const lat = distribution([...scheduledAt].map(([n, t]) => t - created.get(n)!));
const wallS = (t1 - t0) / 1000;
const samples = (await Promise.all(ports.map((p) => scrape(`http://127.0.0.1:${p}/metrics`)))).flat();
/** "value=count" for each value of the label, summed over the scheduler processes. */
const byLabel = (name: string, label: string) => {
  const sums = new Map<string, number>();
  for (const s of samples) if (s.name === name) sums.set(s.labels[label] ?? "", (sums.get(s.labels[label] ?? "") ?? 0) + s.value);
  return [...sums].map(([k, v]) => `${k}=${v}`).join(" ");
};

// spot checks: every binding's replicas add up as its strategy says
const { items } = await store.list<AnyResourceBinding>(GK.resourceBinding, { namespace: NAMESPACE });
let wrong = 0;
for (const b of items) {
  const total = (b.spec?.clusters ?? []).reduce((s, t) => s + (t.replicas ?? 0), 0);
  const dup = b.spec?.placement?.replicaScheduling?.replicaSchedulingType === "Duplicated";
  const ok = dup ? (b.spec?.clusters ?? []).every((t) => t.replicas === b.spec?.replicas) && (b.spec?.clusters ?? []).length > 0 : total === b.spec?.replicas;
  if (!ok) wrong++;
}
const status = items[0]?.status;

console.log(`\nscheduler load test ${new Date().toISOString()}  (${os.cpus().length} CPUs: ${os.cpus()[0]?.model}; node ${process.version})`);
console.log(`bindings ${N} over ${C} clusters; shapes ${SHAPES.map((s) => `${s.name}×${s.weight}`).join(", ")}; ${BACKLOG ? "backlog (created before the scheduler started)" : "streaming"}; creation ${RATE > 0 ? `${RATE}/s` : "unpaced"}, ${WRITERS} writers; ${REPLICAS} scheduler process(es), CONCURRENCY=${values.concurrency}, pool 8, estimator off`);
console.log(`created        ${created.size} in ${(createdMs / 1000).toFixed(2)} s (${(created.size / (createdMs / 1000)).toFixed(0)}/s)`);
console.log(`scheduled      ${scheduledAt.size}/${N} (failed conditions seen: ${failed.size}; wrong replica sums: ${wrong})`);
console.log(`throughput     ${(scheduledAt.size / wallS).toFixed(0)} bindings/s (${BACKLOG ? "scheduler ready" : "first creation"} -> last Scheduled: ${wallS.toFixed(2)} s)`);
console.log(`latency        creation call -> Scheduled${BACKLOG ? " (backlog: includes the wait before the scheduler started)" : ""}: p50 ${lat.p50.toFixed(0)} ms, p90 ${lat.p90.toFixed(0)} ms, p99 ${lat.p99.toFixed(0)} ms, max ${lat.max.toFixed(0)} ms`);
console.log(`scheduler      ${REPLICAS} process(es): cpu ${schedulerS.toFixed(1)} s over ${wallS.toFixed(1)} s wall; rss ${mib(Math.max(...rss.peak.values()))} MiB sampled during the run, peak ${mib(hwm)} MiB (largest process)`);
console.log(`machine        load average ${load0.toFixed(2)} before the run; ${machinePct.toFixed(0)}% of ${os.cpus().length} cores during the run (Postgres, NATS, scheduler, this generator, anything else)`);
console.log(`cpu seconds    scheduler ${schedulerS.toFixed(1)}, postgres (this database's backends) ${pgS.toFixed(1)}, nats-server ${natsS.toFixed(1)}, load generator ${((self.user + self.system) / 1e6).toFixed(1)}`);
console.log(`per binding    scheduler ${((schedulerS / N) * 1000).toFixed(2)} ms, postgres ${((pgS / N) * 1000).toFixed(2)} ms, nats ${((natsS / N) * 1000).toFixed(2)} ms cpu`);
console.log(`load generator rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
console.log(`scheduler      ${byLabel("flotilla_scheduler_writes_total", "part")} | conflicts ${sum(samples, "flotilla_scheduler_conflicts_total")} | skipped wake-ups ${sum(samples, "flotilla_scheduler_wakeups_skipped_total")}`);
console.log(`               decisions ${byLabel("flotilla_scheduler_schedule_total", "result")}`);
const algCount = sum(samples, "flotilla_scheduler_algorithm_duration_seconds_count");
console.log(`               schedule() ${((sum(samples, "flotilla_scheduler_algorithm_duration_seconds_sum") / Math.max(1, algCount)) * 1000).toFixed(3)} ms per decision on average (${algCount} decisions)`);
console.log(`               triggers ${byLabel("flotilla_scheduler_trigger_total", "trigger")}`);
console.log(`status size    ${JSON.stringify(status ?? {}).length} bytes (first binding's status incl. diagnosis)`);
if (failed.size) console.log(`first failure  ${[...failed.values()][0]}`);
const findings = logs.findings();
if (findings.length) console.log(`logged\n${findings.join("\n")}`);

await stopSchedulers();
await deleteStream(env.EVENTS_STREAM);
await db.drop();
process.exit(scheduledAt.size === N && wrong === 0 ? 0 : 1);
