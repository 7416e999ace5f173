// Binding service load test: detection (templates + policies → bindings) and Work writing
// (bindings → Works), each measured alone against the real Postgres and NATS, with the
// service built in this process exactly as main.ts builds it (relay included).
//   node --conditions=source --import tsx test/load/binding/run.ts [--scenario full|smoke] [--only detect|works]
//        [--templates N] [--namespaces N] [--clusters N] [--concurrency N] [--pool N] [--paced-rate N] [--paced-count N]
import { randomUUID } from "node:crypto";
import os from "node:os";
import { parseArgs } from "node:util";
import type { Sql } from "postgres";
import { applyDefaults, workName, type KubeObject, rfc3339 } from "@flotilla/api";
import { buildApp, type App } from "@flotilla/binding";
import { silentLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { unpublished } from "../lib/counters.js";
import { inProcessStack } from "../lib/in-process.js";
import { busyShare, machineCpu } from "../lib/proc.js";
import { distribution, fmt, markdownTable, mib, pool, sleep } from "../lib/stats.js";
import { SCENARIOS, type Scenario } from "./scenarios.js";

const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: "full" },
    only: { type: "string" },
    templates: { type: "string" },
    namespaces: { type: "string" },
    clusters: { type: "string" },
    concurrency: { type: "string" },
    pool: { type: "string" },
    "paced-rate": { type: "string" },
    "paced-count": { type: "string" },
  },
});
const base = SCENARIOS[values.scenario!];
if (!base) throw new Error(`unknown scenario ${values.scenario}; one of ${Object.keys(SCENARIOS).join(", ")}`);
const num = (v: string | undefined, d: number) => (v === undefined ? d : Number(v));
const sc: Scenario & { pacedFixed: boolean } = {
  ...base,
  templates: num(values.templates, base.templates),
  namespaces: num(values.namespaces, base.namespaces),
  clusters: num(values.clusters, base.clusters),
  concurrency: num(values.concurrency, base.concurrency),
  pool: num(values.pool, base.pool),
  pacedRate: num(values["paced-rate"], base.pacedRate),
  pacedFixed: values["paced-rate"] !== undefined,
  pacedCount: num(values["paced-count"], base.pacedCount),
};

const nss = Array.from({ length: sc.namespaces }, (_, i) => `ns-${i}`);
const clusters = Array.from({ length: sc.clusters }, (_, i) => `member${i + 1}`);
const RB = "work.karmada.io/ResourceBinding";
const WORK = "work.karmada.io/Work";

function deployment(name: string, ns: string, i: number): KubeObject {
  const app = i % 2 === 0 ? "web" : "api";
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns, labels: { app, tier: i % 3 === 0 ? "front" : "back" } },
    spec: {
      replicas: 1 + (i % 5),
      selector: { matchLabels: { app } },
      template: { metadata: { labels: { app } }, spec: { containers: [{ name: "app", image: "nginx:1.25", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] } },
    },
  };
}

/** Per namespace: a kind-only PP, a label-selector PP that wins for app=web, and a CPP for everything (loses to the PPs). */
function policies(namespaces: string[], clusters: string[]): KubeObject[] {
  const placement = { clusterAffinity: { clusterNames: clusters }, replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } };
  const out: KubeObject[] = [
    { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterPropagationPolicy", metadata: { name: "all-deployments" }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], placement } },
  ];
  for (const ns of namespaces) {
    out.push({ apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "deployments", namespace: ns }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], placement } });
    out.push({ apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "web", namespace: ns }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { app: "web" } } }], placement } });
  }
  return out.map((p) => applyDefaults(p, { now: new Date(), uuid: randomUUID }));
}

const cpuCol = (p: { self: number; machine: number }) => `${fmt(p.self)}% / ${fmt(p.machine)}%`;

interface Env {
  /** The service's store. */
  store: ObjectStore;
  /** The load generator's own store (its own pool, as the gateway would have). */
  gen: ObjectStore;
  sql: Sql;
  count(gk: string): Promise<number>;
  app(run: { detector?: boolean; policy?: boolean; binding?: boolean }): Promise<App>;
  close(): Promise<void>;
}

async function env(): Promise<Env> {
  const stack = await inProcessStack({ label: "LOADB", max: sc.pool });
  const { db } = stack;
  const store = new ObjectStore(db.sql);
  const gen = new ObjectStore(await stack.pool(8));
  const apps: App[] = [];
  return {
    store,
    gen,
    sql: db.sql,
    count: async (gk) => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM objects WHERE gk = ${gk}`)[0]!.n,
    async app(run) {
      const app = buildApp({
        store,
        sql: db.sql,
        js: stack.js,
        stream: stack.stream,
        prefix: stack.prefix,
        log: silentLogger(),
        run,
        settings: { detectorConcurrency: sc.concurrency, bindingConcurrency: sc.concurrency, resyncMs: 0 },
      });
      apps.push(app);
      await app.start();
      await app.consumer!.ready;
      return app;
    },
    async close() {
      for (const a of apps) await a.stop().catch(() => {});
      await stack.close();
    },
  };
}

/** Samples memory until stopped; returns the peaks, and the CPU this process and the whole machine used meanwhile. */
function memorySampler() {
  let rss = 0;
  let heap = 0;
  const cpu0 = process.cpuUsage();
  const m0 = machineCpu();
  const w0 = performance.now();
  const t = setInterval(() => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  }, 50);
  return {
    stop() {
      clearInterval(t);
      const cpu = process.cpuUsage(cpu0);
      const m1 = machineCpu();
      const wallMs = performance.now() - w0;
      // percent of one core; the machine figure covers Postgres, NATS and anything else running
      const self = ((cpu.user + cpu.system) / 1000 / wallMs) * 100;
      const machine = busyShare(m0, m1) * 100 * os.cpus().length;
      return { rss, heap, self, machine };
    },
  };
}

async function waitCount(e: Env, gk: string, n: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await e.count(gk);
    if (c >= n) return performance.now();
    if (Date.now() > deadline) throw new Error(`timed out: ${c}/${n} ${gk}`);
    await sleep(20);
  }
}

async function drainOutbox(e: Env): Promise<void> {
  while ((await unpublished(e.sql)) > 0) await sleep(50);
}

/**
 * Records when objects of a kind are first seen, reading the outbox's ADDED rows past a floor
 * (the oldest transaction still running at the previous read: everything older was visible
 * then) every 20 ms, so each read costs about what arrived since the last one. (A store watch
 * would also wait for every older transaction on the Postgres server to end.)
 */
function firstSeen(e: Env, gk: string): { seen: Map<string, number>; stop(): void } {
  const seen = new Map<string, number>();
  let stopped = false;
  let floor = "0";
  const started = (async () => {
    floor = (await e.sql<{ x: string }[]>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x`)[0]!.x;
  })();
  void (async () => {
    await started;
    while (!stopped) {
      const rows = await e.sql<{ x: string; k: string | null }[]>`
        WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x)
        SELECT s.x, o.namespace || '/' || o.name AS k FROM s
        LEFT JOIN outbox o ON o.rv >= ${floor}::bigint AND o.gk = ${gk} AND o.type = 'ADDED'`;
      const now = performance.now();
      for (const r of rows) if (r.k && !seen.has(r.k)) seen.set(r.k, now);
      floor = rows[0]!.x;
      await sleep(20);
    }
  })();
  return { seen, stop: () => (stopped = true) };
}

interface Row {
  phase: string;
  items: string;
  seconds: number;
  rate: string;
  p50: number;
  p99: number;
  latency: string;
  rss: string;
  heap: string;
  cpu: string;
}
const rows: Row[] = [];

async function detect(): Promise<void> {
  const e = await env();
  try {
    for (const p of policies(nss, clusters)) await e.gen.create(p);
    const templates = Array.from({ length: sc.templates }, (_, i) => deployment(`app-${i}`, nss[i % nss.length]!, i));
    const w0 = performance.now();
    await pool(templates.length, 16, (i) => e.gen.create(templates[i]!));
    console.log(`detect: wrote ${sc.templates} Deployments and ${1 + 2 * sc.namespaces} policies in ${((performance.now() - w0) / 1000).toFixed(1)} s (service stopped)`);
    await drainOutbox(e);

    // burst: everything waits in the stream; start the detector and the policy controller and drain
    const mem = memorySampler();
    const t0 = performance.now();
    const app = await e.app({ detector: true, policy: true });
    const t1 = await waitCount(e, RB, sc.templates, 600_000);
    const peak = mem.stop();
    const secs = (t1 - t0) / 1000;
    const pc = app.detector.snapshot().metrics.percentiles([0.5, 0.99]);
    rows.push({ phase: "detect burst", items: `${sc.templates} bindings`, seconds: secs, rate: `${fmt(sc.templates / secs)} bindings/s`, p50: pc.p50!, p99: pc.p99!, latency: "reconcile", rss: mib(peak.rss), heap: mib(peak.heap), cpu: cpuCol(peak) });
    // sanity: precedence held (app=web → PP "web", others → PP "deployments", none to the CPP)
    const sample = (await e.store.list(RB, { namespace: "ns-0" })).items.slice(0, 200);
    const wrong = sample.filter((b) => {
      const name = b.metadata.annotations?.["propagationpolicy.karmada.io/name"];
      const app = (b.spec?.resource?.name ?? "").replace("app-", "");
      return name !== (Number(app) % 2 === 0 ? "web" : "deployments");
    });
    if (wrong.length) throw new Error(`${wrong.length} bindings claimed by the wrong policy`);

    // steady state before the paced phase: the relay has published the burst's own writes, and the
    // policies' start-up fan-outs (every policy re-checks the templates it selects) are over
    const d0 = performance.now();
    await drainOutbox(e);
    const d1 = performance.now();
    const busy = (c: App["policy"]) => c.snapshot().queueDepth + c.snapshot().inFlight > 0;
    while (busy(app.policy) || busy(app.detector)) await sleep(50);
    console.log(
      `detect: after the last binding, the relay caught up in ${((d1 - d0) / 1000).toFixed(1)} s and the policy fan-outs ended ${((performance.now() - d0) / 1000).toFixed(1)} s after it ` +
        `(${app.policy.snapshot().metrics.reconciles.done + app.policy.snapshot().metrics.reconciles.after} policy reconciles, ${app.detector.snapshot().metrics.reconciles.done} detector reconciles in all)`,
    );
    // paced: the service running, templates arriving at a fixed rate; latency = template written → binding seen.
    // Unless given, the rate is half the burst throughput (capped by the scenario's), so the latency is not queueing.
    const rate = sc.pacedFixed ? sc.pacedRate : Math.max(10, Math.min(sc.pacedRate, Math.floor(sc.templates / secs / 2)));
    const watch = firstSeen(e, RB);
    const written = new Map<string, number>();
    const r0 = { ...app.detector.snapshot().metrics.reconciles };
    const q0 = { ...app.policy.snapshot().metrics.reconciles };
    const mem2 = memorySampler();
    const p0 = performance.now();
    const paced = Array.from({ length: sc.pacedCount }, (_, i) => deployment(`paced-${i}`, nss[i % nss.length]!, i));
    await pool(paced.length, 64, async (i) => {
      const t = paced[i]!;
      const due = p0 + (i * 1000) / rate;
      if (due > performance.now()) await sleep(due - performance.now());
      await e.gen.create(t);
      written.set(`${t.metadata.namespace}/${t.metadata.name}-deployment`, performance.now());
    });
    await waitCount(e, RB, sc.templates + sc.pacedCount, 600_000);
    await sleep(200);
    watch.stop();
    const seen = watch.seen;
    const r1 = app.detector.snapshot().metrics.reconciles;
    const q1 = app.policy.snapshot().metrics.reconciles;
    console.log(`detect paced: ${r1.done + r1.after + r1.error - r0.done - r0.after - r0.error} detector reconciles (${r1.error - r0.error} failed), ${q1.done + q1.after + q1.error - q0.done - q0.after - q0.error} policy reconciles (${q1.after - q0.after} timed out waiting)`);
    const peak2 = mem2.stop();
    const lat = distribution([...written].map(([k, t]) => (seen.get(k) ?? NaN) - t).filter((x) => !Number.isNaN(x)));
    rows.push({ phase: `detect paced @${rate}/s`, items: `${sc.pacedCount} bindings`, seconds: (performance.now() - p0) / 1000, rate: `${rate}/s offered`, p50: lat.p50, p99: lat.p99, latency: "template → binding", rss: mib(peak2.rss), heap: mib(peak2.heap), cpu: cpuCol(peak2) });
  } finally {
    await e.close();
  }
}

function binding(t: KubeObject, clusters: string[], i: number): KubeObject {
  const replicas = (t.spec as { replicas: number }).replicas;
  const split = clusters.map((name, j) => ({ name, replicas: Math.floor(replicas / clusters.length) + (j < replicas % clusters.length ? 1 : 0) })).filter((c) => c.replicas > 0);
  return {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: "ResourceBinding",
    metadata: {
      name: `${t.metadata.name}-deployment`,
      namespace: t.metadata.namespace,
      labels: { "resourcebinding.karmada.io/permanent-id": randomUUID() },
      finalizers: ["karmada.io/binding-controller"],
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: t.metadata.name, uid: t.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: t.metadata.namespace, name: t.metadata.name, uid: t.metadata.uid, resourceVersion: t.metadata.resourceVersion },
      replicas,
      placement: { clusterAffinity: { clusterNames: clusters }, replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } },
      clusters: i >= 0 ? clusters.map((name) => split.find((c) => c.name === name) ?? { name, replicas: 0 }) : [],
    },
  };
}

/** A scheduled binding, as the detector and the scheduler leave it. */
async function writeBinding(store: ObjectStore, t: KubeObject, clusters: string[], i: number): Promise<void> {
  const tt = await store.create(t);
  const b = await store.create(binding(tt, clusters, i));
  await store.updateStatus({ ...b, status: { schedulerObservedGeneration: 1, lastScheduledTime: rfc3339(new Date()) } });
}

async function works(): Promise<void> {
  const e = await env();
  try {
    const n = Math.ceil(sc.templates / sc.clusters);
    const templates = Array.from({ length: n }, (_, i) => deployment(`app-${i}`, nss[i % nss.length]!, i * 5 + 4)); // replicas 5: every cluster gets some
    const w0 = performance.now();
    await pool(templates.length, 16, (i) => writeBinding(e.gen, templates[i]!, clusters, i));
    console.log(`works: wrote ${n} Deployments and ${n} scheduled ResourceBindings (${sc.clusters} clusters each) in ${((performance.now() - w0) / 1000).toFixed(1)} s (service stopped)`);
    await drainOutbox(e);

    const total = n * sc.clusters;
    const mem = memorySampler();
    const t0 = performance.now();
    const app = await e.app({ binding: true });
    const t1 = await waitCount(e, WORK, total, 600_000);
    const peak = mem.stop();
    const secs = (t1 - t0) / 1000;
    const pc = app.binding.snapshot().metrics.percentiles([0.5, 0.99]);
    rows.push({ phase: "works burst", items: `${total} Works (${n} bindings)`, seconds: secs, rate: `${fmt(total / secs)} Works/s`, p50: pc.p50!, p99: pc.p99!, latency: "reconcile", rss: mib(peak.rss), heap: mib(peak.heap), cpu: cpuCol(peak) });

    const d0 = performance.now();
    await drainOutbox(e);
    console.log(`works: the relay caught up with the burst's writes ${((performance.now() - d0) / 1000).toFixed(1)} s after the last Work`);
    // paced: scheduled bindings arriving at a fixed rate (Works/s; half the burst throughput unless given);
    // latency = binding scheduled → its last Work seen
    const rate = sc.pacedFixed ? sc.pacedRate : Math.max(10, Math.min(sc.pacedRate, Math.floor(total / secs / 2)));
    const watch = firstSeen(e, WORK);
    const mem2 = memorySampler();
    const written = new Map<string, number>();
    const m = Math.ceil(sc.pacedCount / sc.clusters);
    const paced = Array.from({ length: m }, (_, i) => deployment(`paced-${i}`, nss[i % nss.length]!, i * 5 + 4));
    const p0 = performance.now();
    await pool(paced.length, 64, async (i) => {
      const t = paced[i]!;
      const due = p0 + (i * 1000 * sc.clusters) / rate;
      if (due > performance.now()) await sleep(due - performance.now());
      await writeBinding(e.gen, t, clusters, i);
      written.set(t.metadata.name ?? "", performance.now());
    });
    await waitCount(e, WORK, total + m * sc.clusters, 600_000);
    await sleep(200);
    watch.stop();
    const seen = watch.seen;
    const peak2 = mem2.stop();
    const lat = distribution(
      paced
        .map((t) => {
          const name = workName(t.metadata.namespace!, t.metadata.name!, "Deployment");
          const last = Math.max(...clusters.map((c) => seen.get(`karmada-es-${c}/${name}`) ?? NaN));
          return last - written.get(t.metadata.name!)!;
        })
        .filter((x) => !Number.isNaN(x)),
    );
    rows.push({ phase: `works paced @${rate}/s`, items: `${m * sc.clusters} Works (${m} bindings)`, seconds: (performance.now() - p0) / 1000, rate: `${rate} Works/s offered`, p50: lat.p50, p99: lat.p99, latency: "binding scheduled → all its Works", rss: mib(peak2.rss), heap: mib(peak2.heap), cpu: cpuCol(peak2) });
  } finally {
    await e.close();
  }
}

console.log(`load average at the start: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(
  `binding load test: scenario ${sc.name}: ${sc.templates} templates over ${sc.namespaces} namespaces, ${sc.clusters} clusters per binding, concurrency ${sc.concurrency}, pool ${sc.pool}; ` +
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), Node ${process.version}; Postgres, NATS and this process share the machine`,
);
if (!values.only || values.only === "detect") await detect();
if (!values.only || values.only === "works") await works();
const head = ["phase", "items", "seconds", "throughput", "p50 ms", "p99 ms", "latency measured", "peak RSS MiB", "peak heap MiB", "CPU this process / whole machine (200% = 2 cores)"];
console.log(`\n${markdownTable(head, rows.map((r) => [r.phase, r.items, fmt(r.seconds, 2), r.rate, fmt(r.p50, 1), fmt(r.p99, 1), r.latency, r.rss, r.heap, r.cpu]))}`);
console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
process.exit(0);
