// Failover load test: N bindings on member1, tolerations of 0 s; member1 turns unreachable.
// Measures, from the moment member1's Ready condition turns Unknown: the NoExecute taint, every
// binding off member1 with its graceful-eviction task, and (with the scheduler) every binding
// rescheduled onto member2/member3. The services run as processes from their builds, exactly
// as `npm start` runs them, against a fresh database and stream.
//   npx tsc -b services/taint-manager services/eviction services/scheduler
//   node --conditions=source --import tsx test/load/failover/run.ts [--bindings 10000] [--rate 1000]
//        [--evict-concurrency 32] [--create-concurrency 32] [--no-scheduler] [--no-eviction] [--timeout 120]
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { rfc3339, type Cluster, type Placement, type ResourceBinding } from "@flotilla/api";
import { ObjectStore, unpublishedCount } from "@flotilla/store";
import { NATS_URL, freshDatabase, uniqueName } from "@flotilla/testkit";
import { freePort } from "../lib/proc.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({
  options: {
    bindings: { type: "string", default: "10000" },
    rate: { type: "string", default: "" },
    "evict-concurrency": { type: "string", default: "" },
    "create-concurrency": { type: "string", default: "32" },
    "no-scheduler": { type: "boolean", default: false },
    "no-eviction": { type: "boolean", default: false },
    timeout: { type: "string", default: "120" },
  },
});
const N = Number(values.bindings);
const withScheduler = !values["no-scheduler"] && existsSync(path.join(root, "services/scheduler/dist/main.js"));
const withEviction = !values["no-eviction"];
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** CPU time (user + system, ms) a process has used so far, from /proc. */
function cpuMs(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

const children: ChildProcess[] = [];
const names = new Map<ChildProcess, string>();
function startService(name: string, env: Record<string, string>): ChildProcess {
  const main = path.join(root, "services", name, "dist", "main.js");
  if (!existsSync(main)) throw new Error(`${main} is missing: run npx tsc -b services/${name}`);
  // PROFILE=<dir>: CPU profiles of the services, written when they stop
  const prof = process.env.PROFILE ? [`--cpu-prof`, `--cpu-prof-dir=${process.env.PROFILE}/${name}`] : [];
  const child = spawn(process.execPath, [...prof, main], { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out = (out + d).slice(-8000)));
  child.stderr!.on("data", (d) => (out = (out + d).slice(-8000)));
  child.on("exit", (code) => {
    if (code !== 0 && code !== null) console.error(`${name} exited ${code}:\n${out}`);
  });
  children.push(child);
  names.set(child, name);
  return child;
}

async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

function cluster(name: string): Cluster {
  return {
    apiVersion: "cluster.karmada.io/v1alpha1",
    kind: "Cluster",
    metadata: { name },
    spec: { syncMode: "Push", apiEndpoint: `https://${name}.example:6443` },
    status: {
      kubernetesVersion: "v1.30.0",
      conditions: [
        { type: "Ready", status: "True", reason: "ClusterReady", message: "cluster is healthy and ready to accept workloads", lastTransitionTime: rfc3339(new Date()) },
        { type: "CompleteAPIEnablements", status: "True", reason: "Complete", message: "", lastTransitionTime: rfc3339(new Date()) },
      ],
      apiEnablements: [{ groupVersion: "apps/v1", resources: [{ name: "deployments", kind: "Deployment" }] }],
      resourceSummary: { allocatable: { pods: "1000000", cpu: "100000", memory: "1000Ti" }, allocated: {}, allocating: {} },
    },
  };
}

const placement: Placement = {
  clusterAffinity: { clusterNames: ["member1", "member2", "member3"] },
  clusterTolerations: [
    { key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 0 },
    { key: "cluster.karmada.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 0 },
  ],
  replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" },
};

/** A binding already scheduled onto member1 (what the scheduler would have written). */
function binding(i: number): ResourceBinding {
  const ns = `team-${i % 20}`;
  const name = `app-${i}`;
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: {
      name: `${name}-deployment`,
      namespace: ns,
      labels: { "binding.karmada.io/managed-by": "failover-load" },
      annotations: { "policy.karmada.io/applied-placement": JSON.stringify(placement) },
    },
    spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name }, replicas: 1, clusters: [{ name: "member1", replicas: 1 }], placement },
  };
}

const RB = "work.karmada.io/ResourceBinding";

async function main() {
  const db = await freshDatabase({ max: 16 });
  const store = new ObjectStore(db.sql);
  const stream = uniqueName("FAILOVER").toUpperCase();
  const prefix = uniqueName("failover");
  const knobs: Record<string, string> = {
    FAILOVER_EVICTION_TIMEOUT: "0s",
    CLUSTER_MONITOR_GRACE_PERIOD: "10m",
    GRACEFUL_EVICTION_TIMEOUT: "10m",
    ...(values.rate ? { RESOURCE_EVICTION_RATE: values.rate } : {}),
    ...(values["evict-concurrency"] ? { CONCURRENT_BINDING_EVICTION_SYNCS: values["evict-concurrency"] } : {}),
  };
  const env = { DATABASE_URL: db.url, NATS_URL, EVENTS_STREAM: stream, EVENTS_PREFIX: prefix, HOST: "127.0.0.1", LOG_LEVEL: "warn", ...knobs };
  console.log(`failover load: ${N} bindings on member1 (Divided, 1 replica, tolerationSeconds 0), clusters member1..3; ${os.cpus().length} cores (${os.cpus()[0]?.model})`);
  console.log(`services: taint-manager${withEviction ? ", eviction" : ""}${withScheduler ? ", scheduler" : ""} (processes); settings ${JSON.stringify(knobs)}`);

  try {
    for (const c of ["member1", "member2", "member3"]) await store.create(cluster(c));
    let t = performance.now();
    const items = Array.from({ length: N }, (_, i) => i);
    await pool(items, Number(values["create-concurrency"]), async (i) => {
      const b = await store.create(binding(i));
      await store.updateStatus({ ...b, status: { schedulerObservedGeneration: b.metadata.generation, lastScheduledTime: rfc3339(new Date()), conditions: [{ type: "Scheduled", status: "True", reason: "Success", message: "Binding has been scheduled successfully.", lastTransitionTime: rfc3339(new Date()) }] } });
    });
    console.log(`setup: ${N} scheduled bindings written in ${Math.round(performance.now() - t)} ms`);

    const ports: number[] = [];
    const port = async () => (ports.push(await freePort()), String(ports[ports.length - 1]));
    startService("taint-manager", { ...env, PORT: await port() });
    if (withEviction) startService("eviction", { ...env, PORT: await port() });
    if (withScheduler) startService("scheduler", { ...env, PORT: await port(), SCHEDULER_GRPC_PORT: "0", ESTIMATOR_ENABLED: "false" });
    // wait until the services have worked off the setup: every wake-up published and every
    // controller's queue empty and idle, three times in a row
    t = performance.now();
    for (let quiet = 0; quiet < 3; ) {
      await sleep(300);
      try {
        const n = await unpublishedCount(db.sql);
        const busy = await Promise.all(ports.map(async (p) => {
          const text = await (await fetch(`http://127.0.0.1:${p}/metrics`)).text();
          return text.split("\n").some((l) => /^flotilla_controller_(queue_depth|in_flight)\{/.test(l) && !l.endsWith(" 0"));
        }));
        quiet = n === 0 && !busy.some(Boolean) ? quiet + 1 : 0;
      } catch {
        quiet = 0; // not listening yet
      }
    }
    console.log(`services idle after the setup's wake-ups: ${Math.round(performance.now() - t)} ms`);
    const tainted = await db.sql`SELECT count(*)::int AS n FROM objects WHERE gk = 'cluster.karmada.io/Cluster' AND body->'spec' ? 'taints'`;
    if (tainted[0].n !== 0) throw new Error("a healthy cluster was tainted before the failure");

    // member1 fails: its Ready condition turns Unknown (as the health monitor or the execution service would write it)
    const load0 = os.loadavg()[0];
    const cpu0 = new Map(children.map((c) => [c, cpuMs(c.pid)]));
    const t0 = performance.now();
    const wall0 = Date.now();
    await store.mutate<Cluster>({ gk: "cluster.karmada.io/Cluster", name: "member1" }, (c) => {
      c.status!.conditions = c.status!.conditions!.map((x) => (x.type === "Ready" ? { ...x, status: "Unknown", reason: "ClusterStatusUnknown", message: "failover load test", lastTransitionTime: rfc3339(new Date()) } : x));
      return c;
    }, { status: true });

    const marks: Record<string, number> = {};
    const mark = (k: string) => (marks[k] ??= Math.round(performance.now() - t0));
    const deadline = t0 + Number(values.timeout) * 1000;
    const samples: [number, number, number][] = [];
    for (;;) {
      const [{ noexec }] = await db.sql<{ noexec: boolean }[]>`
        SELECT coalesce(bool_or(t->>'effect' = 'NoExecute'), false) AS noexec FROM objects, jsonb_array_elements(coalesce(body->'spec'->'taints', '[]')) t
        WHERE gk = 'cluster.karmada.io/Cluster' AND name = 'member1'`;
      if (noexec) mark("noExecuteTaint");
      const [c] = await db.sql<{ evicted: number; rescheduled: number }[]>`
        SELECT count(*) FILTER (WHERE index_keys @> ARRAY['evicting:member1'] AND NOT index_keys @> ARRAY['cluster:member1'])::int AS evicted,
               count(*) FILTER (WHERE NOT index_keys @> ARRAY['cluster:member1'] AND jsonb_array_length(coalesce(body->'spec'->'clusters', '[]')) > 0
                                  AND (body->'status'->>'schedulerObservedGeneration') = (body->'metadata'->>'generation'))::int AS rescheduled
        FROM objects WHERE gk = ${RB}`;
      const ms = Math.round(performance.now() - t0);
      samples.push([ms, c.evicted, c.rescheduled]);
      if (c.evicted > 0) mark("firstEvicted");
      if (c.evicted >= N / 2) mark("halfEvicted");
      if (c.evicted >= N) mark("allEvicted");
      if (c.rescheduled >= N) mark("allRescheduled");
      if (marks.allEvicted !== undefined && (!withScheduler || marks.allRescheduled !== undefined)) break;
      if (performance.now() > deadline) {
        console.log(`TIMEOUT after ${values.timeout} s: evicted ${c.evicted}/${N}, rescheduled ${c.rescheduled}/${N}`);
        break;
      }
      await sleep(50);
    }
    const tmMetrics = await fetch(`http://127.0.0.1:${ports[0]}/metrics`).then((r) => r.text(), () => "");
    const metric = (name: string) => tmMetrics.split("\n").find((l) => l.startsWith(name + " "))?.split(" ")[1] ?? "-";
    const errors = tmMetrics.split("\n").find((l) => l.startsWith('flotilla_controller_reconcile_errors_total{controller="binding-eviction",reason="error"}'))?.split(" ")[1] ?? "-";
    const cpu = children.map((c) => `${names.get(c)} ${Math.round(cpuMs(c.pid) - cpu0.get(c)!)} ms`).join(", ");
    const load1 = os.loadavg()[0];
    const [{ events }] = await db.sql<{ events: number }[]>`SELECT count(*)::int AS events FROM objects WHERE gk = '/Event' AND body->>'reason' = 'EvictCluster'`;
    const [{ tasks }] = await db.sql<{ tasks: number }[]>`
      SELECT count(*)::int AS tasks FROM objects WHERE gk = ${RB} AND jsonb_array_length(coalesce(body->'spec'->'gracefulEvictionTasks', '[]')) = 1
        AND body->'spec'->'gracefulEvictionTasks'->0->>'fromCluster' = 'member1' AND body->'spec'->'gracefulEvictionTasks'->0->>'creationTimestamp' IS NOT NULL`;
    const evictWindow = (marks.allEvicted ?? NaN) - (marks.noExecuteTaint ?? NaN);
    console.log(`failure written at ${new Date(wall0).toISOString()}; times from then (ms):`);
    console.log(`  NoExecute taint on member1      ${marks.noExecuteTaint ?? "-"}`);
    console.log(`  first binding evicted           ${marks.firstEvicted ?? "-"}`);
    console.log(`  half evicted                    ${marks.halfEvicted ?? "-"}`);
    console.log(`  all ${N} evicted (task + off)  ${marks.allEvicted ?? "-"}`);
    if (withScheduler) console.log(`  all ${N} rescheduled            ${marks.allRescheduled ?? "-"}`);
    console.log(`  eviction throughput             ${Number.isFinite(evictWindow) ? Math.round((N / evictWindow) * 1000) : "-"} bindings/s (taint → all evicted)`);
    console.log(`  bindings with one stamped task from member1: ${tasks}; EvictCluster events: ${events}`);
    console.log(`  taint-manager pacer: ${metric("flotilla_taint_manager_evictions_paced_total")} evictions let through, ${metric("flotilla_taint_manager_eviction_wait_seconds_total")} s spent waiting; binding-eviction reconcile errors ${errors}`);
    console.log(`  CPU used by the services meanwhile: ${cpu} (Postgres and NATS not counted)`);
    console.log(`  1-minute load average before/after: ${load0.toFixed(2)} / ${load1.toFixed(2)} on ${os.cpus().length} cores (other work on the machine shows here)`);
    const progress = samples.filter((_, i) => i % 20 === 0 || i === samples.length - 1).map(([ms, e, r]) => `${ms}:${e}${withScheduler ? `/${r}` : ""}`);
    console.log(`  progress (ms:evicted${withScheduler ? "/rescheduled" : ""}) ${progress.join(" ")}`);
  } finally {
    for (const c of children) c.kill("SIGTERM");
    await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once("exit", r)))));
    await db.drop();
    const { connectNats, jetstreamManager } = await import("@flotilla/events");
    const nc = await connectNats({ servers: NATS_URL });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => {});
    await nc.close();
  }
}

await main();
