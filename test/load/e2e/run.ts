// End-to-end load runner: the whole stack as processes (every service from its build, the member
// simulator as a child), one ClusterPropagationPolicy (Divided, weighted by available replicas,
// exactly 2 clusters per binding), then a burst of Deployments POSTed through the gateway,
// followed by the objects table through binding → scheduled → Works applied → template ready;
// then (phase 2) the --failover-members clusters with the most bindings made unreachable at once
// and the bindings followed off them, and (phase 3) every service stopped and started again with
// the members kept: gateway answers, a new Deployment ready, CPU settled. Also: flatness (the
// first and the last 10 % of the burst per stage), a light-load latency probe, pgbench on the
// same Postgres, CPU and peak RSS per process, transactions and wake-ups per binding, pending pods
// on the members, and the fleet-scale goals with the measured value and whether each is met.
// See README.md beside this file.
//   npm run build
//   node --conditions=source --import tsx test/load/e2e/run.ts [--clusters 100] [--deployments 2000] [...]
import { readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { milliValue, value, type KubeObject } from "@flotilla/api";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { backendCpu, backendCpuDelta, consumerDeliveries, dbTransactions, outboxWrites, streamMessages, type ConsumerCount } from "../lib/counters.js";
import { ProcessLogs } from "../lib/logs.js";
import { dividedPolicy, loadDeployment } from "../lib/objects.js";
import { clusterPods, setFault, type ClusterPods } from "../lib/members.js";
import { pgbench, type PgbenchResult } from "../lib/pgbench.js";
import { PipelineTracker, STAGES, worksMatch, type Flatness, type TemplateState } from "../lib/pipeline.js";
import { cpuMs, cpuMsByName, pgrep, RssSampler, waitCpuSettled } from "../lib/proc.js";
import { SERVICE_NAMES, deleteStream, gatewayFetch, isolatedEnv, joinAndWaitReady, startServices, startSimulatorProcess, waitIdle, type Exit, type GatewayAccess, type ServiceName, type Services, type SimulatorProcess } from "../lib/stack.js";
import { distribution, fmt, markdownTable, mib, pool, sleep, type Distribution } from "../lib/stats.js";

// ---------------------------------------------------------------------------------------------
// settings

const { values: v } = parseArgs({
  options: {
    clusters: { type: "string", default: "100" },
    deployments: { type: "string", default: "2000" },
    replicas: { type: "string", default: "3" },
    cpu: { type: "string", default: "100m" },
    memory: { type: "string", default: "64Mi" },
    concurrency: { type: "string", default: "32" },
    namespaces: { type: "string", default: "10" },
    timeout: { type: "string", default: "600" },
    stall: { type: "string", default: "60" },
    failover: { type: "boolean" },
    "no-failover": { type: "boolean" },
    "failover-members": { type: "string", default: "25" },
    "cold-start": { type: "boolean" },
    "no-cold-start": { type: "boolean" },
    "settle-cpu": { type: "string", default: "5" },
    "settle-seconds": { type: "string", default: "3" },
    "settle-timeout": { type: "string", default: "120" },
    "ready-delay-ms": { type: "string", default: "200" },
    nodes: { type: "string", default: "3" },
    "node-cpu": { type: "string", default: "8" },
    "node-memory": { type: "string", default: "32Gi" },
    "node-pods": { type: "string", default: "110" },
    probe: { type: "string", default: "20" },
    "probe-during": { type: "string", default: "200" },
    "probe-during-concurrency": { type: "string", default: "4" },
    "probe-after": { type: "string", default: "200" },
    "pgbench-seconds": { type: "string", default: "10" },
    "stats-wait": { type: "string", default: "11" },
    "cpu-prof": { type: "string" },
    env: { type: "string", multiple: true, default: [] },
    json: { type: "string" },
    "log-dir": { type: "string" },
  },
});

function int(name: keyof typeof v, min = 0): number {
  const n = Number(v[name]);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: expected an integer ≥ ${min}, got ${JSON.stringify(v[name])}`);
  return n;
}

const userEnv = Object.fromEntries(
  (v.env as string[]).map((kv) => {
    const i = kv.indexOf("=");
    if (i < 1) throw new Error(`--env: expected KEY=VAL, got ${JSON.stringify(kv)}`);
    return [kv.slice(0, i), kv.slice(i + 1)];
  }),
);

const S = {
  clusters: int("clusters", 2),
  deployments: int("deployments", 1),
  replicas: int("replicas", 1),
  cpu: v.cpu!,
  memory: v.memory!,
  concurrency: int("concurrency", 1),
  namespaces: int("namespaces", 1),
  timeoutS: int("timeout", 1),
  stallS: int("stall", 1),
  failover: !v["no-failover"],
  /** Members failed at once in phase 2: --failover-members, at most a quarter of the clusters (at least 1). */
  failoverMembers: Math.max(1, Math.min(int("failover-members", 1), Math.floor(int("clusters", 2) / 4))),
  failoverMembersAsked: int("failover-members", 1),
  coldStart: !v["no-cold-start"],
  /** Settled: every service process together under this % of one core for `settleSeconds`. */
  settleCpuPercent: Number(v["settle-cpu"]),
  settleSeconds: int("settle-seconds", 1),
  settleTimeoutS: int("settle-timeout", 1),
  readyDelayMs: int("ready-delay-ms"),
  nodes: int("nodes", 1),
  nodeCpu: v["node-cpu"]!,
  nodeMemory: v["node-memory"]!,
  nodePods: int("node-pods", 1),
  probe: int("probe"),
  probeDuring: int("probe-during"),
  probeDuringConcurrency: int("probe-during-concurrency", 1),
  probeAfter: int("probe-after"),
  pgbenchS: int("pgbench-seconds"),
  statsWaitS: int("stats-wait"),
  cpuProf: v["cpu-prof"] ? path.resolve(v["cpu-prof"]) : undefined,
  env: userEnv,
};

if (!(S.settleCpuPercent > 0)) throw new Error(`--settle-cpu: expected a percentage of one core above 0, got ${JSON.stringify(v["settle-cpu"])}`);

/** Failover knobs (phase 2): probes every second, Ready False after 2 s, NoExecute at once; heartbeats never go stale on their own. */
const FAILOVER_KNOBS: Record<string, string> = {
  CLUSTER_STATUS_UPDATE_FREQUENCY: "1s",
  CLUSTER_FAILURE_THRESHOLD: "2s",
  FAILOVER_EVICTION_TIMEOUT: "0s",
  CLUSTER_MONITOR_GRACE_PERIOD: "10m",
};

const PROBE_NS = "load-probe";
const namespaces = Array.from({ length: S.namespaces }, (_, i) => `load-${i}`);
const keyOf = (i: number) => `${namespaces[i % S.namespaces]}/app-${i}`;
const PHASE1 = ["bound", "scheduled", "worksApplied", "ready"] as const;
const PHASE1_LABEL: Record<(typeof PHASE1)[number], string> = {
  bound: "binding created",
  scheduled: "binding scheduled",
  worksApplied: "Works applied",
  ready: "template ready",
};

// ---------------------------------------------------------------------------------------------
// objects

const deployment = (ns: string, name: string, replicas: number) => loadDeployment({ namespace: ns, name, replicas, cpu: S.cpu, memory: S.memory });
const policy = () => dividedPolicy({ name: "load-e2e", namespaces: [...namespaces, PROBE_NS], ...(S.failover ? { noExecuteTolerationSeconds: 0 } : {}) });

/** POST through the gateway as the stack's administrator. */
async function post(gw: GatewayAccess, p: string, body: unknown): Promise<Response> {
  return gatewayFetch(gw, p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

const deploymentsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;

// ---------------------------------------------------------------------------------------------
// counters before and after a window

interface CpuSnapshot {
  t: number;
  /** CPU ms so far per process (services, member-sim, runner, postgres (all processes), nats-server). */
  cpu: Map<string, number>;
  /** CPU ms so far of each backend of the database. */
  backends: Map<number, number>;
  /** The same, of the services' backends only (application_name flotilla-…). */
  serviceBackends: Map<number, number>;
}

interface Counters extends CpuSnapshot {
  xacts: number;
  /** Object writes so far (outbox rows). */
  writes: number;
  /** Messages published to the stream so far (each carries the wake-ups of several writes). */
  published: number;
  consumers: Map<string, ConsumerCount>;
}

interface Window {
  /** Length of the window of the counts (transactions, messages). */
  seconds: number;
  /** Length of the window of the CPU times (it may end earlier). */
  cpuSeconds: number;
  cpuMs: Map<string, number>;
  xacts: number;
  /** Object writes (outbox rows). */
  writes: number;
  /** JetStream messages that carried their wake-ups. */
  published: number;
  delivered: Map<string, number>;
  redelivered: Map<string, number>;
}

async function cpuSnapshot(db: TestDatabase, procs: ReadonlyMap<string, number | undefined>): Promise<CpuSnapshot> {
  const [backends, serviceBackends] = await Promise.all([backendCpu(db.sql, db.name), backendCpu(db.sql, db.name, { servicesOnly: true })]);
  const cpu = new Map([...procs].map(([n, pid]) => [n, cpuMs(pid)]));
  const self = process.cpuUsage();
  cpu.set("runner", (self.user + self.system) / 1000);
  cpu.set("postgres (all processes)", cpuMsByName("postgres"));
  cpu.set("nats-server", cpuMsByName("nats-server"));
  return { t: performance.now(), cpu, backends, serviceBackends };
}

async function counters(db: TestDatabase, stream: string, procs: ReadonlyMap<string, number | undefined>): Promise<Counters> {
  const [xacts, writes, published, consumers] = await Promise.all([dbTransactions(db.sql, db.name), outboxWrites(db.sql), streamMessages(stream), consumerDeliveries(stream)]);
  return { ...(await cpuSnapshot(db, procs)), xacts, writes, published, consumers };
}

/** The counts from a to b, the CPU times from a to cpuEnd (default b). */
function windowOf(a: Counters, b: Counters, cpuEnd: CpuSnapshot = b): Window {
  const cpuMs = new Map([...cpuEnd.cpu].map(([n, ms]) => [n, ms - (a.cpu.get(n) ?? 0)]));
  cpuMs.set("postgres (this database's backends)", backendCpuDelta(a.backends, cpuEnd.backends));
  // without the runner's own (its sampler of the pipeline, the probes' GETs go through the gateway)
  cpuMs.set("postgres (the services' backends)", backendCpuDelta(a.serviceBackends, cpuEnd.serviceBackends));
  const delta = (k: keyof ConsumerCount) => new Map([...b.consumers].map(([n, c]) => [n, c[k] - (a.consumers.get(n)?.[k] ?? 0)]));
  return {
    seconds: (b.t - a.t) / 1000,
    cpuSeconds: (cpuEnd.t - a.t) / 1000,
    cpuMs,
    xacts: b.xacts - a.xacts,
    writes: b.writes - a.writes,
    published: b.published - a.published,
    delivered: delta("delivered"),
    redelivered: delta("redelivered"),
  };
}

// ---------------------------------------------------------------------------------------------
// waiting for stages

interface WaitOutcome {
  complete: boolean;
  /** Why it stopped waiting, when not complete. */
  reason?: string;
}

/**
 * Waits until every stage has `target()` keys (and `done()` holds), printing progress every 2 s;
 * gives up at the deadline or when no count has moved for the stall time. `onChange` runs after
 * the counts moved (at most every 250 ms), so what it records is at most ~350 ms after the last move.
 */
async function waitStages(
  tracker: PipelineTracker,
  names: readonly string[],
  o: { target: () => number; done?: () => boolean; t0: number; label: (n: string) => string; onChange?: () => Promise<void> },
): Promise<WaitOutcome> {
  const deadline = o.t0 + S.timeoutS * 1000;
  let last = "";
  let lastChange = performance.now();
  let lastPrint = 0;
  let dirty = false;
  let lastCall = 0;
  for (;;) {
    const counts = tracker.counts(names);
    const now = performance.now();
    const line = names.map((n, i) => `${o.label(n)} ${counts[i]}`).join(", ");
    if (line !== last) [last, lastChange, dirty] = [line, now, true];
    if (dirty && o.onChange && now - lastCall >= 250) {
      [dirty, lastCall] = [false, now];
      await o.onChange();
    }
    if (now - lastPrint >= 2000) {
      console.log(`  ${fmt((now - o.t0) / 1000, 1).padStart(6)} s  ${line}`);
      lastPrint = now;
    }
    if ((o.done?.() ?? true) && counts.every((c) => c >= o.target())) return { complete: true };
    if (now > deadline) return { complete: false, reason: `timeout after ${S.timeoutS} s` };
    if (now - lastChange > S.stallS * 1000) return { complete: false, reason: `stalled: nothing moved for ${S.stallS} s` };
    await sleep(100);
  }
}

interface StageResult {
  stage: string;
  reached: number;
  of: number;
  /** From the window's start until the last key reached the stage (all of them), ms. */
  allMs?: number;
  perSecond?: number;
  latencyMs: Distribution;
}

function stageResult(stage: string, at: ReadonlyMap<string, number>, of: number, t0: number, from: (k: string) => number | undefined): StageResult {
  const lat: number[] = [];
  let lastAt = -Infinity;
  for (const [k, t] of at) {
    lastAt = Math.max(lastAt, t);
    const f = from(k);
    if (f !== undefined) lat.push(t - f);
  }
  const complete = at.size >= of && of > 0;
  const allMs = complete ? lastAt - t0 : undefined;
  return { stage, reached: at.size, of, ...(allMs !== undefined ? { allMs, perSecond: (of / allMs) * 1000 } : {}), latencyMs: distribution(lat) };
}

// ---------------------------------------------------------------------------------------------
// phases

interface ProbeResult {
  n: number;
  latencyMs: Distribution;
  failures: string[];
}

/**
 * Single Deployments one after another (`concurrency` such loops at once), POST → the template's
 * readyReplicas = replicas (GET every 10 ms), timed from before the POST; `n` in all, or fewer
 * when `until()` says so first.
 */
async function lightProbe(gw: GatewayAccess, o: { n: number; prefix: string; concurrency?: number; until?: () => boolean }): Promise<ProbeResult> {
  const lat: number[] = [];
  const failures: string[] = [];
  let next = 0;
  let started = 0;
  const loop = async () => {
    while (next < o.n && !o.until?.()) {
      const name = `${o.prefix}-${next++}`;
      started++;
      const t = performance.now();
      const r = await post(gw, deploymentsPath(PROBE_NS), deployment(PROBE_NS, name, 3));
      if (r.status !== 201) {
        failures.push(`${name}: POST ${r.status} ${(await r.text()).slice(0, 200)}`);
        continue;
      }
      await r.arrayBuffer();
      for (;;) {
        const d = (await (await gatewayFetch(gw, `${deploymentsPath(PROBE_NS)}/${name}`)).json()) as KubeObject;
        if ((d.status as { readyReplicas?: number } | undefined)?.readyReplicas === 3) {
          lat.push(performance.now() - t);
          break;
        }
        if (performance.now() - t > 30_000) {
          failures.push(`${name}: not ready after 30 s`);
          break;
        }
        await sleep(10);
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 1 }, loop));
  return { n: started, latencyMs: distribution(lat), failures };
}

interface BurstResult {
  posted: number;
  /** POST → ready of single Deployments in another namespace while the burst ran. */
  during?: ProbeResult;
  postFailures: string[];
  wait: WaitOutcome;
  stages: StageResult[];
  /** Per stage: the rate of the first and the last 10 % of the burst's Deployments to reach it. */
  flatness: Partial<Record<(typeof PHASE1)[number], Flatness>>;
  settledAfterMs: number;
  window: Window;
}

interface Probes {
  counters(): Promise<Counters>;
  cpu(): Promise<CpuSnapshot>;
  /** Waits until the services are idle and Postgres has published its counters. */
  settle(): Promise<void>;
}

async function burst(gw: GatewayAccess, tracker: PipelineTracker, probes: Probes): Promise<BurstResult> {
  const keys = Array.from({ length: S.deployments }, (_, i) => keyOf(i));
  for (const s of PHASE1) tracker.track(s, keys, STAGES[s]);
  const c0 = await probes.counters();
  const t0 = performance.now();
  const postedAt = new Map<string, number>();
  const postMs: number[] = [];
  const postFailures: string[] = [];
  let postsDone = false;
  console.log(`\nburst: ${S.deployments} Deployments × ${S.replicas} replicas (cpu ${S.cpu}, memory ${S.memory}) over ${S.namespaces} namespaces, ${S.concurrency} POSTs at once`);
  const posting = pool(S.deployments, S.concurrency, async (i) => {
    const [ns, name] = keyOf(i).split("/") as [string, string];
    const t = performance.now();
    try {
      const r = await post(gw, deploymentsPath(ns), deployment(ns, name, S.replicas));
      if (r.status === 201) {
        await r.arrayBuffer();
        const done = performance.now();
        postedAt.set(keyOf(i), done);
        postMs.push(done - t);
      } else postFailures.push(`${keyOf(i)}: ${r.status} ${(await r.text()).slice(0, 200)}`);
    } catch (e) {
      postFailures.push(`${keyOf(i)}: ${(e as Error).message}`);
    }
  }).finally(() => (postsDone = true));
  let cpuEnd: CpuSnapshot | undefined; // after the last move of the stage counts
  let stagesDone = false;
  const probing = S.probeDuring > 0 ? lightProbe(gw, { n: S.probeDuring, prefix: "during", concurrency: S.probeDuringConcurrency, until: () => stagesDone }) : undefined;
  const wait = await waitStages(tracker, PHASE1, {
    t0,
    target: () => postedAt.size,
    done: () => postsDone,
    label: (n) => PHASE1_LABEL[n as keyof typeof PHASE1_LABEL],
    onChange: async () => void (cpuEnd = await probes.cpu()),
  });
  stagesDone = true;
  await posting;
  const during = await probing;
  if (wait.complete || !cpuEnd) cpuEnd = await probes.cpu();
  const tEnd = performance.now();
  console.log(wait.complete ? `  all stages reached after ${fmt(tEnd - t0)} ms` : `  INCOMPLETE: ${wait.reason}`);
  const lastPost = Math.max(...postedAt.values());
  const postStage: StageResult = {
    stage: "POST done",
    reached: postedAt.size,
    of: S.deployments,
    ...(postedAt.size === S.deployments ? { allMs: lastPost - t0, perSecond: (S.deployments / (lastPost - t0)) * 1000 } : {}),
    latencyMs: distribution(postMs),
  };
  const stages = [postStage, ...PHASE1.map((s) => ({ ...stageResult(s, tracker.reached(s), S.deployments, t0, (k) => postedAt.get(k)), stage: PHASE1_LABEL[s] }))];
  const flatness = Object.fromEntries(PHASE1.map((s) => [s, tracker.flatness(s, S.deployments, 0.1)]).filter(([, f]) => f !== undefined)) as BurstResult["flatness"];
  await probes.settle();
  const c1 = await probes.counters();
  return { posted: postedAt.size, ...(during ? { during } : {}), postFailures, wait, stages, flatness, settledAfterMs: c1.t - t0, window: windowOf(c0, c1, cpuEnd) };
}

interface PodsResult {
  total: number;
  running: number;
  pending: number;
  /** Clusters with ≥ 1 replica of a load Deployment in some binding's spec.clusters. */
  clustersUsed: number;
  /** The clusters in the most load bindings, with their binding and replica counts. */
  topClusters: { cluster: string; bindings: number; replicas: number }[];
  /** Clusters holding any pod at all (the probe Deployments included). */
  clustersWithPods: number;
  /** The cluster asked for the most pods: pods asked (running + pending) vs how many of these pods fit on it. */
  busiest?: { cluster: string; asked: number; pending: number; room: number; roomBy: string };
  overCapacity: number;
}

function podsResult(pods: ClusterPods[], tracker: PipelineTracker): PodsResult {
  const used = new Map<string, { cluster: string; bindings: number; replicas: number }>();
  for (let i = 0; i < S.deployments; i++) {
    for (const c of tracker.templates.get(keyOf(i))?.binding?.clusters ?? []) {
      if (c.replicas <= 0) continue;
      const u = used.get(c.name) ?? { cluster: c.name, bindings: 0, replicas: 0 };
      u.bindings++;
      u.replicas += c.replicas;
      used.set(c.name, u);
    }
  }
  const perPod = { cpu: milliValue(S.cpu), memory: value(S.memory), pods: 1 };
  const room = (p: ClusterPods) => {
    const by = (Object.keys(perPod) as (keyof typeof perPod)[]).map((k) => ({ k, n: perPod[k] > 0 ? Math.floor((p.allocatable[k] ?? 0) / perPod[k]) : Infinity }));
    return by.reduce((a, b) => (b.n < a.n ? b : a));
  };
  const asked = (p: ClusterPods) => p.running + p.pending;
  const busiest = pods.reduce<ClusterPods | undefined>((a, p) => (!a || asked(p) > asked(a) ? p : a), undefined);
  const r = busiest && room(busiest);
  return {
    total: pods.reduce((a, p) => a + asked(p), 0),
    running: pods.reduce((a, p) => a + p.running, 0),
    pending: pods.reduce((a, p) => a + p.pending, 0),
    clustersUsed: used.size,
    topClusters: [...used.values()].sort((a, b) => b.bindings - a.bindings).slice(0, 5),
    clustersWithPods: pods.filter((p) => asked(p) > 0).length,
    ...(busiest && r ? { busiest: { cluster: busiest.name, asked: asked(busiest), pending: busiest.pending, room: r.n, roomBy: r.k } } : {}),
    overCapacity: pods.filter((p) => asked(p) > room(p).n).length,
  };
}

interface FailoverResult {
  /** The failed members: the `--failover-members` clusters in the most load bindings. */
  clusters: string[];
  /** Bindings that listed any of them when they failed. */
  bindings: number;
  /** From the fault to the first NoSchedule taint on any of them, to the first NoExecute taint, and to the last (all of them tainted), ms. */
  faultToNoScheduleMs?: number;
  faultToNoExecuteMs?: number;
  faultToLastNoExecuteMs?: number;
  /** How many of the failed clusters were seen with the NoExecute taint. */
  noExecuteTainted: number;
  wait: WaitOutcome;
  /** From the first NoExecute taint on any failed cluster (latency per binding: from the first NoExecute taint on a cluster it listed). */
  stages: StageResult[];
  /** How many clusters each affected binding lists at the end: {"2": 590, "1": 10}. */
  clusterCounts: Record<string, number>;
  /** The same by how many failed clusters the binding listed: {"1 failed → 2": 80, "2 failed → 1": 10}. */
  clusterCountsByFailed: Record<string, number>;
  window: Window;
  /** Peak RSS of each process from the fault until the wait ended. */
  rssPeak: Map<string, number>;
}

const FAILOVER_STAGES = ["evicted", "rescheduled", "newWorksApplied"] as const;
const FAILOVER_LABEL: Record<(typeof FAILOVER_STAGES)[number], string> = {
  evicted: "evicted (off every failed cluster)",
  rescheduled: "rescheduled (2 other clusters)",
  newWorksApplied: "new Works applied",
};

/** The first time the cluster was seen with a taint of this effect (sample time), if it has it now. */
const taintSeen = (tracker: PipelineTracker, cluster: string, effect: string) => [...(tracker.taints.get(cluster) ?? [])].find(([k]) => k.endsWith(`:${effect}`))?.[1];

async function failover(adminUrl: string, tracker: PipelineTracker, probes: Probes, pids: () => ReadonlyMap<string, number | undefined>): Promise<FailoverResult> {
  const keys = Array.from({ length: S.deployments }, (_, i) => keyOf(i));
  const perCluster = new Map<string, number>();
  for (const k of keys) for (const c of tracker.templates.get(k)?.binding?.clusters ?? []) perCluster.set(c.name, (perCluster.get(c.name) ?? 0) + 1);
  const failed = [...perCluster]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0], "en", { numeric: true }))
    .slice(0, S.failoverMembers)
    .map(([c]) => c);
  const failedSet = new Set(failed);
  const affected = keys.filter((k) => tracker.templates.get(k)?.binding?.clusters.some((c) => failedSet.has(c.name)));
  const off = (s: TemplateState) => !!s.binding && !s.binding.clusters.some((c) => failedSet.has(c.name));
  const rescheduled = (s: TemplateState) => off(s) && s.binding!.clusters.length === 2 && s.binding!.clusters.reduce((a, c) => a + c.replicas, 0) === S.replicas;
  // the failed clusters each affected binding listed, for its latency from the first of their taints
  const listed = new Map(affected.map((k) => [k, tracker.templates.get(k)!.binding!.clusters.map((c) => c.name).filter((c) => failedSet.has(c))]));
  tracker.track("evicted", affected, off);
  tracker.track("rescheduled", affected, rescheduled);
  tracker.track("newWorksApplied", affected, (s) => rescheduled(s) && worksMatch(s));
  console.log(
    `\nfailover: ${failed.length} member(s) made unreachable at once${S.failoverMembers < S.failoverMembersAsked ? ` (--failover-members ${S.failoverMembersAsked}, capped to a quarter of ${S.clusters} clusters)` : ""}: ` +
      `${failed.map((c) => `${c} (${perCluster.get(c)})`).join(", ")}; ${affected.length} bindings on them`,
  );
  const c0 = await probes.counters();
  const rss = new RssSampler(pids);
  const tFault = performance.now();
  await Promise.all(failed.map((c) => setFault(adminUrl, c, "unreachable")));
  let cpuEnd: CpuSnapshot | undefined;
  const wait = await waitStages(tracker, FAILOVER_STAGES, {
    t0: tFault,
    target: () => affected.length,
    label: (n) => FAILOVER_LABEL[n as keyof typeof FAILOVER_LABEL],
    onChange: async () => void (cpuEnd = await probes.cpu()),
  });
  rss.stop();
  const noExecuteAt = new Map(failed.map((c) => [c, taintSeen(tracker, c, "NoExecute")] as const).filter((e): e is [string, number] => e[1] !== undefined));
  const noSchedule = failed.map((c) => taintSeen(tracker, c, "NoSchedule")).filter((t) => t !== undefined);
  const noExecute = noExecuteAt.size ? Math.min(...noExecuteAt.values()) : undefined;
  if (noExecuteAt.size < failed.length) console.log(`  no NoExecute taint was seen on ${failed.filter((c) => !noExecuteAt.has(c)).join(", ")}`);
  const taintOf = (k: string) => {
    const ts = (listed.get(k) ?? []).map((c) => noExecuteAt.get(c)).filter((t) => t !== undefined);
    return ts.length ? Math.min(...ts) : undefined;
  };
  const stages = FAILOVER_STAGES.map((s) => ({ ...stageResult(s, tracker.reached(s), affected.length, noExecute ?? tFault, taintOf), stage: FAILOVER_LABEL[s] }));
  const clusterCounts: Record<string, number> = {};
  const clusterCountsByFailed: Record<string, number> = {};
  for (const k of affected) {
    const n = String(tracker.templates.get(k)?.binding?.clusters.length ?? 0);
    clusterCounts[n] = (clusterCounts[n] ?? 0) + 1;
    const by = `${listed.get(k)?.length ?? 0} failed → ${n}`;
    clusterCountsByFailed[by] = (clusterCountsByFailed[by] ?? 0) + 1;
  }
  const c1 = await probes.counters();
  return {
    clusters: failed,
    clusterCountsByFailed,
    bindings: affected.length,
    ...(noSchedule.length ? { faultToNoScheduleMs: Math.min(...noSchedule) - tFault } : {}),
    ...(noExecute !== undefined ? { faultToNoExecuteMs: noExecute - tFault, faultToLastNoExecuteMs: Math.max(...noExecuteAt.values()) - tFault } : {}),
    noExecuteTainted: noExecuteAt.size,
    wait,
    stages,
    clusterCounts,
    window: windowOf(c0, c1, wait.complete ? c1 : (cpuEnd ?? c1)),
    rssPeak: rss.peak,
  };
}

/** Makes the failed members healthy again and waits until their taints are gone (at most `--timeout`); ms, or undefined when they stayed tainted. */
async function heal(adminUrl: string, tracker: PipelineTracker, clusters: readonly string[]): Promise<number | undefined> {
  const t = performance.now();
  await Promise.all(clusters.map((c) => setFault(adminUrl, c, "healthy")));
  while (performance.now() - t < S.timeoutS * 1000) {
    if (clusters.every((c) => (tracker.taints.get(c)?.size ?? 0) === 0)) return performance.now() - t;
    await sleep(100);
  }
  return undefined;
}

interface ColdStartResult {
  /** SIGTERM to every service → every one exited, ms. */
  stopMs: number;
  exits: Record<string, Exit>;
  /** From starting the services again ("start"): the gateway's first 200 to an authenticated GET of a stored Deployment, ms. */
  gatewayAnswersMs?: number;
  /** Start → every service answers /readyz, ms. */
  allReadyMs?: number;
  /** The new Deployment: start → the POST the gateway accepted (sent at once and again every 20 ms until then), ms. */
  postAcceptedMs?: number;
  /** Start → that Deployment's template ready (readyReplicas 3), ms. */
  readyMs?: number;
  /** Its POST (from before the request that was accepted) → ready, ms. */
  postToReadyMs?: number;
  /** The services' idle background over the 5 s before the stop (everything stored, the services idle), % of one core. */
  idlePercentOfCore: number;
  /** Settled below this % of one core: `--settle-cpu` above the idle background. */
  settleThresholdPercent: number;
  /** Start → the beginning of the first `--settle-seconds` in which the services together stayed under the threshold, ms. */
  settledMs?: number;
  /** The quietest such window when it never settled: share of a core, and its start (ms from start). */
  lowest?: { percentOfCore: number; atMs: number };
  /** CPU ms of each service from start until settled (or until the wait ended). */
  cpuMs: Record<string, number>;
  /** Peak RSS of each service from start until settled. */
  rssPeak: Map<string, number>;
  failures: string[];
}

/**
 * Stops every service (SIGTERM, waiting for each to exit) and starts them again with the same
 * settings, database, stream and members; a new Deployment is POSTed as soon as the gateway takes it.
 * `onRestart` learns each service's new pid.
 */
async function coldStart(services: Services, gw: GatewayAccess, onRestart: (name: ServiceName, pid: number | undefined) => void): Promise<ColdStartResult> {
  // the services' own background (status probes of every member, resyncs) is not the start's work:
  // measured with the same objects and members just before the stop
  const serviceCpu = () => SERVICE_NAMES.reduce((a, s) => a + (cpuMs(services.procs.get(s)!.child.pid) || 0), 0);
  const [i0, c0] = [performance.now(), serviceCpu()];
  await sleep(5000);
  const idlePercentOfCore = ((serviceCpu() - c0) / (performance.now() - i0)) * 100;
  const settleThresholdPercent = idlePercentOfCore + S.settleCpuPercent;
  console.log(`\ncold start: every service stopped and started again (same database, stream and members)`);
  const tStop = performance.now();
  const exits = Object.fromEntries(await Promise.all(SERVICE_NAMES.map(async (s) => [s, await services.procs.get(s)!.stop()] as const)));
  const stopMs = performance.now() - tStop;
  const t0 = performance.now();
  for (const s of SERVICE_NAMES) onRestart(s, services.relaunch(s).child.pid);
  const servicePids = () => SERVICE_NAMES.map((s) => services.procs.get(s)!.child.pid);
  const rss = new RssSampler(() => new Map(SERVICE_NAMES.map((s) => [s, services.procs.get(s)!.child.pid])));
  const failures: string[] = [];
  const deadline = t0 + S.timeoutS * 1000;
  const settling = waitCpuSettled(servicePids, { share: settleThresholdPercent / 100, windowMs: S.settleSeconds * 1000, timeoutMs: S.settleTimeoutS * 1000 });
  const until = async (what: string, ok: () => Promise<boolean>, everyMs = 20): Promise<number | undefined> => {
    while (performance.now() < deadline) {
      if (await ok().catch(() => false)) return performance.now() - t0;
      await sleep(everyMs);
    }
    failures.push(`${what}: not within ${S.timeoutS} s`);
    return undefined;
  };
  const [first] = namespaces;
  const answering = until("gateway answers", async () => (await gatewayFetch(gw, `${deploymentsPath(first!)}/app-0`)).status === 200);
  const allReady = until("every service ready", async () => (await Promise.all([...services.ports.values()].map((p) => fetch(`http://127.0.0.1:${p}/readyz`).then((r) => r.ok)))).every(Boolean), 50);
  const name = "cold-start-0";
  let postSent: number | undefined;
  const postAcceptedMs = await until(
    "the new Deployment's POST",
    async () => {
      const t = performance.now();
      const r = await post(gw, deploymentsPath(PROBE_NS), deployment(PROBE_NS, name, 3));
      await r.arrayBuffer();
      if (r.status === 201) postSent = t;
      return r.status === 201;
    },
  );
  const readyMs =
    postSent === undefined
      ? undefined
      : await until("the new Deployment ready", async () => {
          const d = (await (await gatewayFetch(gw, `${deploymentsPath(PROBE_NS)}/${name}`)).json()) as KubeObject;
          return (d.status as { readyReplicas?: number } | undefined)?.readyReplicas === 3;
        }, 10);
  const [gatewayAnswersMs, allReadyMs] = await Promise.all([answering, allReady]);
  const settled = await settling;
  rss.stop();
  if (settled.settledAt === undefined) failures.push(`CPU not settled within ${S.settleTimeoutS} s`);
  return {
    stopMs,
    exits,
    ...(gatewayAnswersMs !== undefined ? { gatewayAnswersMs } : {}),
    ...(allReadyMs !== undefined ? { allReadyMs } : {}),
    ...(postAcceptedMs !== undefined ? { postAcceptedMs } : {}),
    ...(readyMs !== undefined ? { readyMs, postToReadyMs: readyMs - (postSent! - t0) } : {}),
    idlePercentOfCore,
    settleThresholdPercent,
    ...(settled.settledAt !== undefined ? { settledMs: settled.settledAt - t0 } : {}),
    ...(settled.lowest ? { lowest: { percentOfCore: settled.lowest.share * 100, atMs: settled.lowest.at - t0 } } : {}),
    cpuMs: Object.fromEntries(SERVICE_NAMES.map((s, i) => [s, settled.cpuAt[i] ?? NaN])),
    rssPeak: rss.peak,
    failures,
  };
}

// ---------------------------------------------------------------------------------------------
// the fleet-scale goals

interface Goal {
  measure: string;
  measured: string;
  goal: string;
  /** null when this run did not measure it (null, not undefined, so the JSON keeps it). */
  met: boolean | null;
  /** How the run was smaller than the goal's size, when it was (a "yes" then says less). */
  smaller?: string;
}

/** Whether a stage's rate reaches `min` per second; a stage not every key reached misses it. */
function rateGoal(measure: string, s: StageResult | undefined, min: number, unit: string): Pick<Goal, "measure" | "measured" | "goal" | "met"> {
  const done = s?.perSecond !== undefined && s.allMs !== undefined;
  return {
    measure,
    measured: done ? `${fmt(s.perSecond)} ${unit}/s (${fmt(s.of)} in ${fmt(s.allMs! / 1000, 1)} s)` : `${fmt(s?.reached)}/${fmt(s?.of)} reached`,
    goal: `≥ ${fmt(min)} ${unit}/s`,
    met: done && s.perSecond! >= min,
  };
}

const EVACUATION = { measure: "evacuation after the NoExecute taint (rescheduled and applied)", goal: "10,000 bindings ≤ 10 s (≥ 1,000 bindings/s)" };
const MASS_FAILOVER = { measure: "25 of 100 members fail at once holding ≥ 5,000 bindings: all rescheduled", goal: "≤ 10 s after the taint" };
const FLATNESS = { measure: "flatness: Works applied, last 10 % of the burst ÷ first 10 %", goal: "≥ 80 % (at 20,000 Deployments)" };
const COLD_START = { measure: "cold start, members kept: a new Deployment ready after start / CPU settled", goal: "ready ≤ 5 s after start, settled ≤ 30 s (at 100,000 bindings)" };

function fleetGoals({ b, pods, probe, probeAfter, fo, cold, rssPeak }: Pick<ReportInput, "b" | "pods" | "probe" | "probeAfter" | "fo" | "cold" | "rssPeak">): Goal[] {
  const minUsed = Math.ceil(S.clusters / 2); // 50 of 100
  const stage = (stages: readonly StageResult[], label: string) => stages.find((st) => st.stage === label);
  const evacuated = fo && stage(fo.stages, FAILOVER_LABEL.newWorksApplied);
  const moved = fo && stage(fo.stages, FAILOVER_LABEL.rescheduled);
  const flat = b.flatness.worksApplied;
  const servicePeak = (m: ReadonlyMap<string, number>) => [...m].filter(([p]) => (SERVICE_NAMES as readonly string[]).includes(p)).sort((x, y) => y[1] - x[1])[0] ?? ["-", NaN];
  const [peakProc, peak] = servicePeak(rssPeak);
  const evacPeak = () => {
    const [p, bytes] = servicePeak(fo!.rssPeak);
    return `${mib(bytes)} MiB (${p})`;
  };
  return [
    {
      measure: "Pending pods after the burst (and clusters used)",
      measured: `${fmt(pods.pending)} pending, ${pods.clustersUsed} clusters used`,
      goal: `0 pending, ≥ ${minUsed} clusters used${S.clusters === 100 ? "" : ` (50 of 100 scaled to half of --clusters ${S.clusters})`}`,
      met: pods.pending === 0 && pods.clustersUsed >= minUsed,
    },
    rateGoal("end to end, POST → every Work applied", stage(b.stages, PHASE1_LABEL.worksApplied), 500, "Deployments"),
    rateGoal("scheduled", stage(b.stages, PHASE1_LABEL.scheduled), 1000, "bindings"),
    evacuated
      ? { ...rateGoal(EVACUATION.measure, evacuated, 1000, "bindings"), goal: EVACUATION.goal, ...(evacuated.of < 10_000 ? { smaller: `by rate, ${fmt(evacuated.of)} of 10,000 bindings` } : {}) }
      : { ...EVACUATION, measured: "not run (--no-failover)", met: null },
    fo && moved
      ? {
          ...MASS_FAILOVER,
          measured:
            moved.allMs !== undefined
              ? `${fmt(moved.allMs / 1000, 1)} s from the first NoExecute taint (${fmt(fo.bindings)} bindings on ${fo.clusters.length} of ${S.clusters} members, ${fmt(moved.perSecond)}/s)`
              : `${fmt(moved.reached)}/${fmt(moved.of)} rescheduled (${fo.clusters.length} of ${S.clusters} members)`,
          met: moved.allMs !== undefined && moved.allMs <= 10_000,
          ...(fo.clusters.length < 25 || fo.bindings < 5000 ? { smaller: `${fo.clusters.length} of ${S.clusters} members, ${fmt(fo.bindings)} of 5,000 bindings` } : {}),
        }
      : { ...MASS_FAILOVER, measured: "not run (--no-failover)", met: null },
    flat
      ? {
          ...FLATNESS,
          measured: `${fmt(flat.ratio * 100)} % (first ${fmt(flat.k)}: ${fmt(flat.first.perSecond)}/s, last ${fmt(flat.k)}: ${fmt(flat.last.perSecond)}/s${flat.complete ? "" : ", not every Deployment reached it"})`,
          met: flat.complete && flat.ratio >= 0.8,
          ...(S.deployments < 20_000 ? { smaller: `at ${fmt(S.deployments)} of 20,000` } : {}),
        }
      : { ...FLATNESS, measured: "stage not reached by 10 % of the burst", met: false },
    cold
      ? {
          ...COLD_START,
          measured: `ready ${fmt((cold.readyMs ?? NaN) / 1000, 1)} s after start (POST → ready ${fmt(cold.postToReadyMs)} ms), settled ${cold.settledMs !== undefined ? `${fmt(cold.settledMs / 1000, 1)} s` : `not within ${S.settleTimeoutS} s`}; gateway answered ${fmt(cold.gatewayAnswersMs)} ms`,
          met: cold.readyMs !== undefined && cold.readyMs <= 5000 && cold.settledMs !== undefined && cold.settledMs <= 30_000,
          ...(S.deployments < 100_000 ? { smaller: `at ${fmt(S.deployments)} of 100,000 bindings` } : {}),
        }
      : { ...COLD_START, measured: "not run (--no-cold-start)", met: null },
    ...(
      [
        ["light-load POST → ready p99, before the burst", probe, "--probe"],
        [`light-load POST → ready p99, after the burst (${fmt(S.deployments)} Deployments stored)`, probeAfter, "--probe-after"],
      ] as const
    ).map(([measure, p, flag]) => ({
      measure,
      measured: p ? `${fmt(p.latencyMs.p99)} ms (${p.latencyMs.n} of ${p.n} Deployments)` : `not run (${flag} 0)`,
      goal: `≤ 100 ms (simulator ready delay ${S.readyDelayMs} ms${S.readyDelayMs >= 100 ? ": cannot be met by construction" : ""})`,
      met: p ? p.latencyMs.p99 <= 100 && p.failures.length === 0 : null,
    })),
    {
      measure: "POST → ready p99 of single Deployments while the burst runs",
      measured: b.during ? `${fmt(b.during.latencyMs.p99)} ms (${b.during.latencyMs.n} of ${b.during.n} Deployments, ${S.probeDuringConcurrency} at a time)` : "not run (--probe-during 0)",
      goal: "≤ 1 s",
      met: b.during ? b.during.latencyMs.p99 <= 1000 && b.during.failures.length === 0 && b.during.latencyMs.n >= 200 : null,
      ...(b.during && b.during.latencyMs.n < 200 ? { smaller: `${b.during.latencyMs.n} samples of the 200 asked for` } : {}),
    },
    {
      measure: "peak RSS of any service",
      measured: `${mib(peak)} MiB (${peakProc}), ${fmt(S.deployments)} Deployments${fo ? `; during the evacuation ${evacPeak()}` : ""}`,
      goal: "≤ 300 MB (286 MiB) at 20,000 bindings",
      met: peak <= 300e6,
      ...(S.deployments < 20_000 ? { smaller: `at ${fmt(S.deployments)} of 20,000` } : {}),
    },
  ];
}

function flatnessRows(f: BurstResult["flatness"]): string[][] {
  return PHASE1.map((s) => {
    const x = f[s];
    if (!x) return [PHASE1_LABEL[s], "-", "-", "-", "-", "-", "not reached by 10 %"];
    return [PHASE1_LABEL[s], fmt(x.k), fmt(x.first.ms), fmt(x.first.perSecond), fmt(x.last.ms), fmt(x.last.perSecond), `${fmt(x.ratio, 2)}${x.complete ? "" : " (incomplete)"}`];
  });
}

function goalRows(gs: readonly Goal[]): string[][] {
  return gs.map((g) => [g.measure, g.measured, g.goal, g.met === null ? "not measured" : !g.met ? "**no**" : g.smaller ? `yes (${g.smaller})` : "yes"]);
}

// ---------------------------------------------------------------------------------------------
// output

function stageRows(stages: StageResult[]): string[][] {
  return stages.map((s) => [
    s.stage,
    s.allMs !== undefined ? fmt(s.allMs) : `${fmt(s.reached)}/${fmt(s.of)} reached`,
    fmt(s.perSecond),
    fmt(s.latencyMs.p50),
    fmt(s.latencyMs.p90),
    fmt(s.latencyMs.p99),
    fmt(s.latencyMs.max),
  ]);
}

function perBinding(w: Window, idle: Window | undefined, n: number, peakRss: ReadonlyMap<string, number>): string[][] {
  return [...w.cpuMs].map(([p, ms]) => {
    const idleRate = idle ? (idle.cpuMs.get(p) ?? NaN) / idle.seconds : NaN;
    const usable = idle && p !== "postgres (all processes)"; // pgbench ran in the idle window
    return [p, fmt(ms), fmt(ms / n, 2), usable ? fmt(idleRate, 1) : "-", usable ? fmt(Math.max(0, ms - idleRate * w.cpuSeconds) / n, 2) : "-", mib(peakRss.get(p))];
  });
}

/** Consumers by name, without the stream's prefix ("scheduler-e2e_xxx_obj_work_karmada_io_ResourceBinding" → "scheduler: work_karmada_io_ResourceBinding"). */
function wakeupRows(w: Window, idle: Window | undefined, n: number, prefix: string): string[][] {
  const short = (c: string) => c.replace(`-${prefix}_obj_`, ": ");
  return [...w.delivered].map(([c, d]) => {
    const idleRate = idle ? (idle.delivered.get(c) ?? 0) / idle.seconds : NaN;
    return [short(c), fmt(d), fmt(d / n, 2), fmt(w.redelivered.get(c)), fmt(idleRate, 1), fmt(Math.max(0, d - idleRate * w.seconds) / n, 2)];
  });
}

function listProfiles(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory()) out.set(d.name, readdirSync(path.join(dir, d.name)).filter((f) => f.endsWith(".cpuprofile")));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const startedAt = new Date();
  const loadStart = os.loadavg();
  const runDir = path.resolve(v["log-dir"] ?? path.join(os.tmpdir(), `flotilla-e2e-${startedAt.toISOString().replace(/[:.]/g, "-")}`));
  const logs = new ProcessLogs(runDir);
  const knobs = { LOG_LEVEL: "warn", ...(S.failover ? FAILOVER_KNOBS : {}), ...S.env };
  console.log(`end-to-end load: ${S.clusters} clusters (${S.nodes} nodes × ${S.nodeCpu} CPU × ${S.nodeMemory} × ${S.nodePods} pods, ready delay ${S.readyDelayMs} ms), ${S.deployments} Deployments × ${S.replicas} replicas, failover ${S.failover ? `of ${S.failoverMembers} member(s) at once` : "off"}, cold start ${S.coldStart ? "on" : "off"}`);
  console.log(`machine: ${os.cpus().length} cores, load ${loadStart.map((l) => l.toFixed(2)).join(" ")}; service settings ${JSON.stringify(knobs)}; logs in ${runDir}`);

  const db = await freshDatabase({ max: 4 });
  const env = { ...isolatedEnv(db, "E2E"), ...knobs };
  const stream = env.EVENTS_STREAM;
  let sim: SimulatorProcess | undefined;
  let services: Services | undefined;
  let tracker: PipelineTracker | undefined;
  let rss: RssSampler | undefined;
  const result: Record<string, unknown> = { startedAt: startedAt.toISOString(), cores: os.cpus().length, node: process.version, settings: S, serviceEnv: knobs, logs: runDir };
  let failed = false;
  try {
    sim = await startSimulatorProcess({
      count: S.clusters,
      readyDelayMs: S.readyDelayMs,
      nodes: S.nodes,
      nodeCpu: S.nodeCpu,
      nodeMemory: S.nodeMemory,
      nodePods: S.nodePods,
      logs,
      ...(S.cpuProf ? { cpuProfDir: path.join(S.cpuProf, "member-sim") } : {}),
    });
    services = await startServices({ env, logs, ...(S.cpuProf ? { cpuProfDir: S.cpuProf } : {}) });
    const gw: GatewayAccess = { gatewayUrl: services.gatewayUrl, token: services.token };
    const pids = new Map<string, number | undefined>([...[...services.procs].map(([n, p]) => [n, p.child.pid] as const), ["member-sim", sim.child.pid], ["runner", process.pid], ["nats-server", pgrep("nats-server")[0]]]);
    rss = new RssSampler(() => pids);
    const servicePids = new Map([...pids].filter(([n]) => n !== "runner" && n !== "nats-server"));
    const probes: Probes = {
      counters: () => counters(db, stream, servicePids),
      cpu: () => cpuSnapshot(db, servicePids),
      async settle() {
        await waitIdle(db.sql, services!.ports.values(), { timeoutMs: 120_000, token: services!.token }).catch((e: Error) => console.log(`  ${e.message}`));
        await sleep(S.statsWaitS * 1000); // pg_stat_database: idle backends publish their counts within 10 s
      },
    };

    let t = performance.now();
    await joinAndWaitReady({ ...gw, adminUrl: sim.adminUrl, sql: db.sql, count: S.clusters });
    console.log(`stack up: ${S.clusters} clusters Ready after ${fmt(performance.now() - t)} ms`);

    tracker = new PipelineTracker(db.sql, 250);
    tracker.start();
    const pr = await post(gw, "/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies", policy());
    if (pr.status !== 201) throw new Error(`creating the policy: ${pr.status} ${await pr.text()}`);

    const probe = S.probe ? await lightProbe(gw, { n: S.probe, prefix: "probe" }) : undefined;
    if (probe) console.log(`light load: ${probe.n} sequential Deployments (3 replicas), POST → template ready: p50 ${fmt(probe.latencyMs.p50)} ms, p99 ${fmt(probe.latencyMs.p99)} ms, max ${fmt(probe.latencyMs.max)} ms${probe.failures.length ? `; failures: ${probe.failures.join("; ")}` : ""}`);
    result.probe = probe;

    t = performance.now();
    await waitIdle(db.sql, services.ports.values(), { token: services.token });
    console.log(`idle after ${fmt(performance.now() - t)} ms`);
    let idle: Window | undefined;
    let bench: PgbenchResult | undefined;
    if (S.pgbenchS > 0) {
      const a = await probes.counters();
      bench = await pgbench({ seconds: S.pgbenchS });
      idle = windowOf(a, await probes.counters());
      console.log(`pgbench on an idle stack: ${fmt(bench.tps)} tps (${bench.command})`);
    }
    result.pgbench = bench && { tps: bench.tps, command: bench.command };
    result.idle = idle && jsonWindow(idle);

    const b = await burst(gw, tracker, probes);
    result.burst = { ...b, window: jsonWindow(b.window) };
    if (b.postFailures.length) console.log(`  ${b.postFailures.length} POSTs failed, e.g. ${b.postFailures.slice(0, 3).join("; ")}`);

    if (b.during) console.log(`during the burst: ${b.during.n} single Deployments (${S.probeDuringConcurrency} at a time), POST → template ready: p50 ${fmt(b.during.latencyMs.p50)} ms, p99 ${fmt(b.during.latencyMs.p99)} ms, max ${fmt(b.during.latencyMs.max)} ms${b.during.failures.length ? `; failures: ${b.during.failures.slice(0, 3).join("; ")}` : ""}`);
    const probeAfter = S.probeAfter ? await lightProbe(gw, { n: S.probeAfter, prefix: "after" }) : undefined;
    if (probeAfter) console.log(`after the burst: ${probeAfter.n} sequential Deployments, POST → template ready: p50 ${fmt(probeAfter.latencyMs.p50)} ms, p99 ${fmt(probeAfter.latencyMs.p99)} ms, max ${fmt(probeAfter.latencyMs.max)} ms${probeAfter.failures.length ? `; failures: ${probeAfter.failures.slice(0, 3).join("; ")}` : ""}`);
    result.probeAfter = probeAfter;

    const pods = podsResult(await clusterPods(sim.adminUrl), tracker);
    result.pods = pods;
    const tainted = [...tracker.taints].filter(([, m]) => m.size > 0).map(([c, m]) => `${c} ${[...m.keys()].join(",")}`);
    if (tainted.length) console.log(`  WARNING: clusters tainted before any fault: ${tainted.join("; ")}`);
    result.taintedBeforeFault = tainted;

    const fo = S.failover ? await failover(sim.adminUrl, tracker, probes, () => pids) : undefined;
    if (fo) result.failover = { ...fo, window: jsonWindow(fo.window) };

    let cold: ColdStartResult | undefined;
    if (S.coldStart) {
      if (fo) {
        const healedMs = await heal(sim.adminUrl, tracker, fo.clusters);
        console.log(healedMs !== undefined ? `\nfailed members healthy again, untainted after ${fmt(healedMs)} ms` : `\nWARNING: the failed members were still tainted after ${S.timeoutS} s`);
        result.healedMs = healedMs ?? null;
      }
      await waitIdle(db.sql, services.ports.values(), { timeoutMs: 120_000, token: services.token }).catch((e: Error) => console.log(`  ${e.message}`));
      cold = await coldStart(services, gw, (name, pid) => {
        pids.set(name, pid);
        servicePids.set(name, pid);
      });
      result.coldStart = cold;
      console.log(
        `  gateway answers ${fmt(cold.gatewayAnswersMs)} ms, all ready ${fmt(cold.allReadyMs)} ms, new Deployment ready ${fmt(cold.readyMs)} ms after start (POST → ready ${fmt(cold.postToReadyMs)} ms), CPU settled ${fmt(cold.settledMs)} ms` +
          (cold.failures.length ? `; ${cold.failures.join("; ")}` : ""),
      );
      const badStop = Object.entries(cold.exits).filter(([, e]) => e.code !== 0);
      if (badStop.length) console.log(`  stopping for the cold start: ${badStop.map(([n, e]) => `${n} ${e.signal ?? e.code}`).join(", ")}`);
      if (badStop.length || cold.failures.length) failed = true;
    }

    const loadEnd = os.loadavg();
    result.loadavg = { start: loadStart, end: loadEnd };
    const goals = fleetGoals({ b, pods, probe, probeAfter, fo, cold, rssPeak: rss.peak });
    result.goals = goals;
    const text = report({ startedAt, loadStart, loadEnd, knobs, prefix: env.EVENTS_PREFIX, probe, probeAfter, bench, idle, b, pods, fo, cold, rssPeak: rss.peak, tracker, goals });
    console.log(text);
    result.summary = text;
    if (!b.wait.complete || (fo && !fo.wait.complete)) failed = true;
  } catch (e) {
    failed = true;
    console.error(`\nFAILED: ${(e as Error).stack ?? e}`);
    console.error(logs.tail(10_000));
  } finally {
    await tracker?.stop();
    rss?.stop();
    const exits = new Map<string, Exit>(services ? await services.stop() : []);
    if (sim) exits.set("member-sim", await sim.stop());
    await logs.close();
    await db.drop().catch((e: Error) => console.error(`dropping the database: ${e.message}`));
    await deleteStream(stream).catch((e: Error) => console.error(`deleting the stream: ${e.message}`));
    const bad = [...exits].filter(([, e]) => e.code !== 0);
    console.log(`\nstopped: ${[...exits].map(([n, e]) => `${n} ${e.signal ?? e.code}`).join(", ")}`);
    if (bad.length) failed = true;
    result.exits = Object.fromEntries(exits);
    const findings = logs.findings();
    if (findings.length) console.log(`\nLogged (warn and above) — full logs in ${runDir}:\n${findings.join("\n")}`);
    result.logged = Object.fromEntries([...logs.summary()].map(([p, m]) => [p, m.filter((x) => x.level !== "info").slice(0, 20)]));
    if (S.cpuProf) {
      const profiles = listProfiles(S.cpuProf);
      const missing = [...exits.keys()].filter((p) => !profiles.get(p)?.length);
      console.log(`\nCPU profiles in ${S.cpuProf}: ${[...profiles].map(([p, f]) => `${p}/${f.join(",")}`).join("  ")}${missing.length ? `; MISSING for ${missing.join(", ")}` : ""}`);
      console.log(`open one in Chrome DevTools (Performance → Load profile) or https://www.speedscope.app`);
      if (missing.length) failed = true;
      result.profiles = Object.fromEntries(profiles);
    }
    if (v.json) {
      writeFileSync(v.json, JSON.stringify(result, (_k, x: unknown) => (x instanceof Map ? Object.fromEntries(x) : x), 2));
      console.log(`results written to ${v.json}`);
    }
  }
  return failed ? 1 : 0;
}

interface ReportInput {
  startedAt: Date;
  loadStart: number[];
  loadEnd: number[];
  knobs: Record<string, string>;
  prefix: string;
  probe: ProbeResult | undefined;
  probeAfter: ProbeResult | undefined;
  bench: PgbenchResult | undefined;
  idle: Window | undefined;
  b: BurstResult;
  pods: PodsResult;
  fo: FailoverResult | undefined;
  cold: ColdStartResult | undefined;
  rssPeak: ReadonlyMap<string, number>;
  tracker: PipelineTracker;
  goals: readonly Goal[];
}

/** The summary in the shape of the README's performance tables (markdown). */
function report({ startedAt, loadStart, loadEnd, knobs, prefix, probe, probeAfter, bench, idle, b, pods, fo, cold, rssPeak, tracker, goals }: ReportInput): string {
  // the single Deployments probed while the burst ran share its window's costs
  const n = b.posted + (b.during?.n ?? 0) || 1;
  // the end-to-end rate: the last stage every Deployment reached
  const e2e = [...b.stages].reverse().find((st) => st.perSecond !== undefined);
  const ratio = bench && e2e?.perSecond !== undefined ? e2e.perSecond / bench.tps : undefined;
  const out: string[] = [];
  out.push(
    `\n**End to end** — \`test/load/e2e/run.ts --clusters ${S.clusters} --deployments ${S.deployments} --replicas ${S.replicas} --cpu ${S.cpu} --concurrency ${S.concurrency}${S.failover ? ` --failover-members ${S.failoverMembersAsked}` : " --no-failover"}${S.coldStart ? "" : " --no-cold-start"}\`, ` +
      `${startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC, ${os.cpus().length} cores, load average ${loadStart[0]!.toFixed(2)} → ${loadEnd[0]!.toFixed(2)}. ` +
      `${S.clusters} simulated clusters of ${S.nodes} × ${S.nodeCpu} CPU / ${S.nodeMemory} / ${S.nodePods} pods (ready delay ${S.readyDelayMs} ms); ${S.deployments} Deployments × ${S.replicas} replicas (${S.cpu}, ${S.memory}) in ${S.namespaces} namespaces; ` +
      `one ClusterPropagationPolicy, Divided by available replicas over exactly 2 clusters; ${S.concurrency} POSTs at once; service settings ${Object.entries(knobs).map(([k, x]) => `${k}=${x}`).join(" ")}.`,
  );
  out.push(`\nBurst (times from the first POST; latency per Deployment from its POST's response to the 250 ms sample that first saw it in the stage; POST latency is the request itself):\n`);
  out.push(markdownTable(["stage", `all ${fmt(S.deployments)} reached (ms)`, "per s", "p50 ms", "p90 ms", "p99 ms", "max ms"], stageRows(b.stages)));
  if (!b.wait.complete) out.push(`\nINCOMPLETE: ${b.wait.reason}`);
  out.push(
    `\nFlatness (per stage, the first and the last 10 % of the burst's Deployments by the time each reached it; a group's time runs from the sample before its first was seen to the sample that saw its last):\n`,
  );
  out.push(markdownTable(["stage", "Deployments per group", "first 10 % ms", "first 10 % per s", "last 10 % ms", "last 10 % per s", "last ÷ first"], flatnessRows(b.flatness)));
  out.push(
    `\nLight load (Deployments one at a time in a namespace of their own, POST → template readyReplicas 3, GET every 10 ms, timed from before the POST): ` +
      `before the burst ${probe?.n ?? 0}: p50 ${fmt(probe?.latencyMs.p50)} ms, p99 ${fmt(probe?.latencyMs.p99)} ms, max ${fmt(probe?.latencyMs.max)} ms; ` +
      `while it ran ${b.during?.n ?? 0} (${S.probeDuringConcurrency} at a time): p50 ${fmt(b.during?.latencyMs.p50)} ms, p99 ${fmt(b.during?.latencyMs.p99)} ms, max ${fmt(b.during?.latencyMs.max)} ms; ` +
      `after it ${probeAfter?.n ?? 0}: p50 ${fmt(probeAfter?.latencyMs.p50)} ms, p99 ${fmt(probeAfter?.latencyMs.p99)} ms, max ${fmt(probeAfter?.latencyMs.max)} ms.` +
      (bench ? ` pgbench on the same Postgres, stack idle (\`${bench.command}\`): ${fmt(bench.tps)} tps; end-to-end ${fmt(e2e?.perSecond, 1)} Deployments/s (${e2e?.stage ?? "no stage complete"}) ÷ pgbench tps = ${fmt(ratio, 4)}.` : ""),
  );
  out.push(
    `\nPods on the members after the burst: ${fmt(pods.total)} (${fmt(pods.running)} running, ${fmt(pods.pending)} pending); load bindings use ${pods.clustersUsed} of ${S.clusters} clusters (${pods.clustersWithPods} hold pods); ` +
      (pods.busiest ? `the busiest, ${pods.busiest.cluster}, was asked for ${pods.busiest.asked} pods with room for ${pods.busiest.room} (by ${pods.busiest.roomBy}), ${pods.busiest.pending} pending; ` : "") +
      `${pods.overCapacity} cluster(s) asked for more than fits. Clusters in the most bindings: ${pods.topClusters.map((c) => `${c.cluster} ${c.bindings} bindings/${c.replicas} replicas`).join(", ")}.`,
  );
  const net = (total: number, idleTotal: number | undefined) => (idle && idleTotal !== undefined ? ` (net of idle ${fmt(Math.max(0, total - (idleTotal / idle.seconds) * b.window.seconds) / n, 1)})` : "");
  out.push(
    `\nPer Deployment (the burst and the ${fmt(b.during?.n ?? 0)} probed while it ran), from the first POST until settled (${fmt(b.settledAfterMs)} ms: all stages, the services idle, then ${S.statsWaitS} s for Postgres's counters; ` +
      `"net" subtracts the idle rate measured over the ${fmt(idle?.seconds, 1)} s pgbench window): ` +
      `${fmt(b.window.xacts / n, 1)} transactions in the database${net(b.window.xacts, idle?.xacts)} (pg_stat_database xact_commit + xact_rollback), ` +
      `${fmt(b.window.writes / n, 1)} object writes (outbox rows)${net(b.window.writes, idle?.writes)}, their wake-ups carried by ${fmt(b.window.published / n, 2)} JetStream messages${net(b.window.published, idle?.published)}. ` +
      `CPU per process from the first POST until every stage was reached (or, when the wait gave up, the last time a stage count moved), ${fmt(b.window.cpuSeconds, 1)} s:\n`,
  );
  out.push(markdownTable(["process", "CPU ms", "ms per Deployment", "idle ms/s", "net ms per Deployment", "peak RSS MiB"], perBinding(b.window, idle, n, rssPeak)));
  out.push(`\nWake-up messages (JetStream deliveries per consumer, from the first POST until settled; a message carries up to 256 wake-ups):\n`);
  out.push(markdownTable(["consumer", "messages delivered", "per Deployment", "redelivered", "idle /s", "net per Deployment"], wakeupRows(b.window, idle, n, prefix)));
  if (fo) {
    const left = fo.stages.find((st) => st.stage === FAILOVER_LABEL.evicted);
    out.push(
      `\nFailover: ${fo.clusters.length} of ${S.clusters} members made unreachable at once (${fo.clusters.join(", ")}), ${fmt(fo.bindings)} bindings on them; ` +
        `fault → the first NoSchedule taint ${fmt(fo.faultToNoScheduleMs)} ms, → the first NoExecute taint ${fmt(fo.faultToNoExecuteMs)} ms, → the last ${fmt(fo.faultToLastNoExecuteMs)} ms (${fo.noExecuteTainted} of ${fo.clusters.length} tainted NoExecute). ` +
        `From the first NoExecute taint until every binding had left them: ${left?.allMs !== undefined ? `${fmt(left.allMs)} ms (${fmt(left.perSecond)} bindings/s)` : `${fmt(left?.reached)}/${fmt(left?.of)}`}. ` +
        `Times from the first NoExecute taint (latency per binding from the first NoExecute taint on a failed cluster it listed):\n`,
    );
    out.push(markdownTable(["stage", `all ${fmt(fo.bindings)} reached (ms)`, "bindings/s", "p50 ms", "p90 ms", "p99 ms", "max ms"], stageRows(fo.stages)));
    if (!fo.wait.complete) out.push(`\nINCOMPLETE: ${fo.wait.reason}`);
    out.push(`\nClusters per affected binding at the end: ${JSON.stringify(fo.clusterCounts)}; by how many of its clusters failed (failed → clusters at the end): ${JSON.stringify(fo.clusterCountsByFailed)}. CPU from the fault until all stages (or the last move), ${fmt(fo.window.cpuSeconds, 1)} s, ms per affected binding: ${[...fo.window.cpuMs].map(([p, ms]) => `${p} ${fmt(ms / (fo.bindings || 1), 2)}`).join(", ")}.`);
    out.push(`Peak RSS during the evacuation (MiB, the fault until the wait ended): ${[...fo.rssPeak].map(([p, x]) => `${p} ${mib(x)}`).join(", ")}.`);
  }
  if (cold) {
    out.push(
      `\nCold start (every service stopped — ${fmt(cold.stopMs)} ms for all to exit — and started again on the same database, stream and members; times from the start): ` +
        `gateway answers ${fmt(cold.gatewayAnswersMs)} ms, every service ready ${fmt(cold.allReadyMs)} ms; a new Deployment POSTed at once (again every 20 ms until taken), accepted ${fmt(cold.postAcceptedMs)} ms, ` +
        `ready ${fmt(cold.readyMs)} ms (POST → ready ${fmt(cold.postToReadyMs)} ms); ` +
        `CPU settled (all services together under ${fmt(cold.settleThresholdPercent, 1)} % of a core — ${S.settleCpuPercent} % above their idle background of ${fmt(cold.idlePercentOfCore, 1)} % over the 5 s before the stop — for ${S.settleSeconds} s) ${cold.settledMs !== undefined ? `${fmt(cold.settledMs)} ms` : `not within ${S.settleTimeoutS} s`}` +
        `${cold.lowest ? ` (quietest ${S.settleSeconds} s: ${fmt(cold.lowest.percentOfCore, 1)} % from ${fmt(cold.lowest.atMs)} ms)` : ""}.` +
        ` CPU ms until settled: ${Object.entries(cold.cpuMs).map(([p, ms]) => `${p} ${fmt(ms)}`).join(", ")}; peak RSS MiB: ${[...cold.rssPeak].map(([p, x]) => `${p} ${mib(x)}`).join(", ")}.` +
        (cold.failures.length ? ` FAILURES: ${cold.failures.join("; ")}.` : ""),
    );
  }
  out.push(`\nSampler: ${tracker.samples.count} samples, mean ${fmt(tracker.samples.totalMs / Math.max(1, tracker.samples.count), 1)} ms, max ${fmt(tracker.samples.maxMs)} ms, ${tracker.samples.errors} failed.`);
  out.push(`\nGoals of the fleet-scale issue (the rates from the stage tables above):\n`);
  out.push(markdownTable(["measure", "measured", "goal", "met"], goalRows(goals)));
  return out.join("\n");
}

function jsonWindow(w: Window) {
  return { seconds: w.seconds, cpuSeconds: w.cpuSeconds, xacts: w.xacts, writes: w.writes, published: w.published, cpuMs: Object.fromEntries(w.cpuMs), delivered: Object.fromEntries(w.delivered), redelivered: Object.fromEntries(w.redelivered) };
}

process.exitCode = await main();
