// Scheduler load test: N ResourceBindings over C simulated Clusters, scheduled through Postgres
// and NATS by the scheduler service running as its own process (services/scheduler/src/main.ts),
// exactly as deployed: outbox relay -> JetStream -> wake-ups -> reconcile -> two writes per binding.
//
//   node --conditions=source --import tsx test/load/scheduler/scheduler.load.ts [options]
//     --bindings 10000   --clusters 100
//     --rate 0           bindings created per second (0: as fast as --writers allow)
//     --writers 32       creations in flight
//     --concurrency 32   the scheduler's CONCURRENCY
//     --smoke            500 bindings over 20 clusters
//     --replicas 1       scheduler processes (they share the durable consumer)
//     --backlog          create every binding first, then start the scheduler (throughput of the
//                        scheduling pipeline alone; latency then measures the queue, not a decision)
//
// Prints throughput (bindings scheduled per second, first creation to last Scheduled), latency
// from the creation call to the binding's Scheduled status (observed with a store watch),
// the scheduler process's CPU time and memory, and the machine's CPU use. Uses a fresh database
// and its own stream, so it never touches a running stack.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { KARMADA, groupKind, type AnyResourceBinding } from "@flotilla/api";
import { connectNats, ensureStream, jetstreamManager } from "@flotilla/events";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase, uniqueName, NATS_URL, sleep } from "@flotilla/testkit";
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
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const RB_GK = groupKind(KARMADA.resourceBinding);

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

/** utime+stime of a process in seconds, and its resident memory (current, peak) in MiB. */
function procStats(pid: number): { cpuS: number; rssMiB: number; hwmMiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const hz = 100;
  const cpuS = (Number(f[11]) + Number(f[12])) / hz;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { cpuS, rssMiB: kb("VmRSS"), hwmMiB: kb("VmHWM") };
}

/** Busy and total jiffies of the whole machine. */
function machineCpu(): { busy: number; total: number } {
  const l = readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).slice(1).map(Number);
  const idle = l[3] + l[4];
  const total = l.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** CPU seconds of this database's Postgres backends and of the NATS server (shared with anything else using it). */
async function backendCpu(): Promise<{ pg: number; nats: number }> {
  const rows = await db.sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`;
  let pg = 0;
  for (const r of rows) {
    try {
      pg += procStats(r.pid).cpuS;
    } catch {
      // the backend ended
    }
  }
  let nats = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, "utf8").trim() === "nats-server") nats += procStats(Number(d)).cpuS;
    } catch {
      // gone
    }
  }
  return { pg, nats };
}

const pct = (xs: number[], p: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN);

const db = await freshDatabase({ max: 16 });
const store = new ObjectStore(db.sql);
const nc = await connectNats({ servers: NATS_URL });
const jsm = await jetstreamManager(nc);
const stream = uniqueName("LOAD").toUpperCase();
const prefix = uniqueName("load");
await ensureStream(jsm, { stream, prefix, maxAgeMs: 30 * 60_000 });

for (const c of makeClusters(C)) await store.create(c);

const ports: number[] = [];
for (let i = 0; i < REPLICAS; i++) ports.push(await freePort());
const port = ports[0];
const children: ChildProcess[] = [];
const stopChild = async () => {
  for (const c of children) {
    if (c.exitCode !== null) continue;
    c.kill("SIGTERM");
    await new Promise((r) => c.once("exit", r));
  }
};
process.once("SIGINT", () => void stopChild().finally(() => process.exit(130)));

const profile = values.profile ? ["--cpu-prof", `--cpu-prof-dir=${values.profile}`] : [];
async function startScheduler(port: number): Promise<ChildProcess> {
  const c = spawn(process.execPath, [...profile, "--conditions=source", "--import", "tsx", path.join(root, "services/scheduler/src/main.ts")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      NATS_URL,
      EVENTS_STREAM: stream,
      EVENTS_PREFIX: prefix,
      HOST: "127.0.0.1",
      PORT: String(port),
      SCHEDULER_GRPC_PORT: "0",
      ESTIMATOR_ENABLED: "false",
      CONCURRENCY: values.concurrency,
      RESYNC: "0",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.push(c);
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return c;
    } catch {}
    if (i > 300 || c.exitCode !== null) throw new Error("the scheduler did not become ready");
    await sleep(100);
  }
}

// Observe Scheduled through a store watch (Postgres outbox, independent of NATS).
const created = new Map<string, number>();
const scheduledAt = new Map<string, number>();
const failed = new Map<string, string>();
const ac = new AbortController();
const watch = await store.watch<AnyResourceBinding>(RB_GK, { namespace: NAMESPACE, signal: ac.signal });
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
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (;;) {
        const i = next++;
        if (i >= N) return;
        if (RATE > 0) {
          const wait = t0 + (i / RATE) * 1000 - performance.now();
          if (wait > 0) await sleep(wait);
        }
        const b = makeBinding(i, C);
        const at = performance.now();
        await store.create(b);
        created.set(b.metadata.name!, at);
      }
    }),
  );
}

// Streaming (default): the scheduler runs while the bindings are created; throughput and latency
// from the first creation. Backlog: every binding exists (and its wake-up waits in the outbox)
// before the scheduler starts; throughput from the scheduler being ready.
let createdMs = 0;
if (BACKLOG) {
  const c0 = performance.now();
  await createAll(c0);
  createdMs = performance.now() - c0;
  await Promise.all(ports.map(startScheduler));
} else {
  await Promise.all(ports.map(startScheduler));
}
const load0 = os.loadavg()[0];
const back0 = await backendCpu();
const self0 = process.cpuUsage();
const childrenCpu = () => children.reduce((a, c) => a + procStats(c.pid!).cpuS, 0);
const child0 = { cpuS: childrenCpu() };
const cpu0 = machineCpu();
const t0 = performance.now();
if (!BACKLOG) {
  await createAll(t0);
  createdMs = performance.now() - t0;
}

const deadline = Date.now() + Number(values["timeout-s"]) * 1000;
let peakRss = 0;
while (scheduledAt.size < N && Date.now() < deadline) {
  await sleep(200);
  peakRss = Math.max(peakRss, ...children.map((c) => procStats(c.pid!).rssMiB));
}
const t1 = Math.max(...scheduledAt.values());
const cpu1 = machineCpu();
const child1 = { cpuS: childrenCpu(), hwmMiB: Math.max(...children.map((c) => procStats(c.pid!).hwmMiB)) };
const back1 = await backendCpu();
const self1 = process.cpuUsage(self0);
ac.abort();
await watching.catch(() => {});

const lat = [...scheduledAt].map(([n, t]) => t - created.get(n)!).sort((a, b) => a - b);
const wallS = (t1 - t0) / 1000;
const metrics = (await Promise.all(ports.map(async (p) => (await fetch(`http://127.0.0.1:${p}/metrics`)).text()))).join("\n");
const metric = (re: RegExp) => {
  const sums = new Map<string, number>();
  for (const m of metrics.matchAll(re)) sums.set(m[1], (sums.get(m[1]) ?? 0) + Number(m[2]));
  return [...sums].map(([k, v]) => `${k}=${v}`).join(" ");
};

// spot checks: every binding's replicas add up as its strategy says
const { items } = await store.list<AnyResourceBinding>(RB_GK, { namespace: NAMESPACE });
let wrong = 0;
for (const b of items) {
  const sum = (b.spec?.clusters ?? []).reduce((s, t) => s + (t.replicas ?? 0), 0);
  const dup = b.spec?.placement?.replicaScheduling?.replicaSchedulingType === "Duplicated";
  const ok = dup ? (b.spec?.clusters ?? []).every((t) => t.replicas === b.spec?.replicas) && (b.spec?.clusters ?? []).length > 0 : sum === b.spec?.replicas;
  if (!ok) wrong++;
}
const status = items[0]?.status;

console.log(`\nscheduler load test ${new Date().toISOString()}  (${os.cpus().length} CPUs: ${os.cpus()[0]?.model}; node ${process.version})`);
console.log(`bindings ${N} over ${C} clusters; shapes ${SHAPES.map((s) => `${s.name}×${s.weight}`).join(", ")}; ${BACKLOG ? "backlog (created before the scheduler started)" : "streaming"}; creation ${RATE > 0 ? `${RATE}/s` : "unpaced"}, ${WRITERS} writers; ${REPLICAS} scheduler process(es), CONCURRENCY=${values.concurrency}, pool 8, estimator off`);
console.log(`created        ${created.size} in ${(createdMs / 1000).toFixed(2)} s (${(created.size / (createdMs / 1000)).toFixed(0)}/s)`);
console.log(`scheduled      ${scheduledAt.size}/${N} (failed conditions seen: ${failed.size}; wrong replica sums: ${wrong})`);
console.log(`throughput     ${(scheduledAt.size / wallS).toFixed(0)} bindings/s (${BACKLOG ? "scheduler ready" : "first creation"} -> last Scheduled: ${wallS.toFixed(2)} s)`);
console.log(`latency        creation call -> Scheduled${BACKLOG ? " (backlog: includes the wait before the scheduler started)" : ""}: p50 ${pct(lat, 50).toFixed(0)} ms, p90 ${pct(lat, 90).toFixed(0)} ms, p99 ${pct(lat, 99).toFixed(0)} ms, max ${lat.at(-1)?.toFixed(0)} ms`);
console.log(`scheduler      ${REPLICAS} process(es): cpu ${(child1.cpuS - child0.cpuS).toFixed(1)} s over ${wallS.toFixed(1)} s wall; rss ${peakRss.toFixed(0)} MiB sampled during the run, peak ${child1.hwmMiB.toFixed(0)} MiB (largest process)`);
console.log(`machine        load average ${load0.toFixed(2)} before the run; ${(((cpu1.busy - cpu0.busy) / (cpu1.total - cpu0.total)) * 100).toFixed(0)}% of ${os.cpus().length} cores during the run (Postgres, NATS, scheduler, this generator, anything else)`);
console.log(`cpu seconds    scheduler ${(child1.cpuS - child0.cpuS).toFixed(1)}, postgres (this database's backends) ${(back1.pg - back0.pg).toFixed(1)}, nats-server ${(back1.nats - back0.nats).toFixed(1)}, load generator ${((self1.user + self1.system) / 1e6).toFixed(1)}`);
console.log(`per binding    scheduler ${(((child1.cpuS - child0.cpuS) / N) * 1000).toFixed(2)} ms, postgres ${(((back1.pg - back0.pg) / N) * 1000).toFixed(2)} ms, nats ${(((back1.nats - back0.nats) / N) * 1000).toFixed(2)} ms cpu`);
console.log(`load generator rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
console.log(`scheduler      ${metric(/flotilla_scheduler_writes_total\{part="(\w+)"\} (\d+)/g)} | conflicts ${metric(/flotilla_scheduler_(conflicts)_total (\d+)/g)} | skipped wake-ups ${metric(/flotilla_scheduler_(wakeups_skipped)_total (\d+)/g)}`);
console.log(`               decisions ${metric(/flotilla_scheduler_schedule_total\{result="(\w+)"\} (\d+)/g)}`);
const algSum = [...metrics.matchAll(/flotilla_scheduler_algorithm_duration_seconds_sum (\S+)/g)].reduce((a, m) => a + Number(m[1]), 0);
const algCount = [...metrics.matchAll(/flotilla_scheduler_algorithm_duration_seconds_count (\S+)/g)].reduce((a, m) => a + Number(m[1]), 0);
console.log(`               schedule() ${((algSum / Math.max(1, algCount)) * 1000).toFixed(3)} ms per decision on average (${algCount} decisions)`);
console.log(`               triggers ${metric(/flotilla_scheduler_trigger_total\{trigger="(\w+)"\} (\d+)/g)}`);
console.log(`status size    ${JSON.stringify(status ?? {}).length} bytes (first binding's status incl. diagnosis)`);
if (failed.size) console.log(`first failure  ${[...failed.values()][0]}`);

await stopChild();
await jsm.streams.delete(stream).catch(() => {});
await nc.close();
await db.drop();
process.exit(scheduledAt.size === N && wrong === 0 ? 0 : 1);
