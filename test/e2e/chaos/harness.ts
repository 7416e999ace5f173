// The seed's failover walk-through over a few dozen Deployments, with something broken at random
// moments on the way: the simulator's three seed members in this process, every service as a
// process from its build (test/load/lib/stack.ts), optionally on a Postgres and a nats-server of
// the test's own (the stack's DATABASE_URL / NATS_URL point at them, so the test may stop them).
//
// The walk-through: N Deployments (3 replicas) placed Divided by static weight on member1:1 and
// member2:2; member1 becomes unreachable (the chaos starts at that moment); every binding leaves
// member1 for member2:3 and its eviction task is dropped once member2 runs 3; member1 comes back;
// then every invariant of invariants.ts must hold within the settle time.
import path from "node:path";
import type { TestContext } from "node:test";
import { loadConfigFile, startSimulator, type Simulator } from "@flotilla/member-sim";
import { openDatabase } from "@flotilla/store";
import { freshDatabase, sleep, uniqueName, type NatsServer, type PostgresServer, type TestDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../../load/lib/logs.js";
import { loadDeployment } from "../../load/lib/objects.js";
import { SERVICE_NAMES, bearer, deleteStream, isolatedEnv, joinAndWaitReady, root, startServices, waitReady, type ServiceName, type Services } from "../../load/lib/stack.js";
import { KNOBS } from "../failover/harness.js";
import { ProcessLedger, settled, snapshot, violations, type Expected, type World } from "./invariants.js";

export const MEMBERS = ["member1", "member2"] as const;
export const FAILED = "member1";
const NS = "default";

/** A small deterministic random source (mulberry32), so that a failing order of events can be replayed with CHAOS_SEED. */
/** A node of `pods` pods, with cpu and memory to spare for that many of the walk-through's pods (50m, 64Mi each). */
const sized = <N extends object>(n: N, pods: number): N => ({ ...n, pods, cpu: String(Math.ceil(pods / 10)), memory: `${pods * 128}Mi` });

export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const seedFromEnv = (): number => (process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : Math.floor(Math.random() * 2 ** 31));

export interface ChaosStack {
  sim: Simulator;
  sql: TestDatabase["sql"];
  services: Services;
  ledger: ProcessLedger;
  logs: ProcessLogs;
  env: Record<string, string>;
  rand: () => number;
  /** A whole number in [lo, hi]. */
  between(lo: number, hi: number): number;
  deployments: Expected[];
  world: World;
  /** What happened when (ms since the stack was up): faults, kills, restarts. */
  timeline: string[];
  note(what: string): void;
  /** kill -9 one service, wait `downMs`, start it again and wait until it is ready. */
  crash(name: ServiceName, downMs: number): Promise<void>;
  post(p: string, body: unknown): Promise<void>;
  close(): Promise<void>;
}

export interface ChaosOptions {
  label: string;
  deployments: number;
  seed: number;
  /** A Postgres of the test's own; default a fresh database on the machine's server. */
  pg?: PostgresServer;
  /** A nats-server of the test's own (started); default the machine's. */
  nats?: NatsServer;
  env?: Record<string, string>;
  /** Pods each simulated node holds, with cpu and memory for as many of the walk-through's pods; default the example's nodes (110 pods, room for ~70 Deployments). */
  podsPerNode?: number;
}

export async function startChaosStack(o: ChaosOptions): Promise<ChaosStack> {
  const cfg = await loadConfigFile(path.join(root, "packages/member-sim/clusters.example.yaml"));
  const sim = await startSimulator({ ...cfg, admin: { host: "127.0.0.1", port: 0 }, defaults: { ...cfg.defaults, readyDelayMs: 200 }, clusters: cfg.clusters.map((c) => ({ ...c, port: 0, nodes: o.podsPerNode ? c.nodes?.map((n) => sized(n, o.podsPerNode!)) : c.nodes })) });
  let db: TestDatabase;
  if (o.pg) {
    const own = await openDatabase({ url: o.pg.url(uniqueName("flotilla_chaos")), max: 4 });
    db = { ...own, name: "", drop: () => own.close() };
  } else db = await freshDatabase({ max: 4 });
  const env: Record<string, string> = {
    ...isolatedEnv(db, o.label),
    ...(o.nats ? { NATS_URL: o.nats.url } : {}),
    DATABASE_POOL_SIZE: "4",
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn",
    ...KNOBS,
    ...o.env,
  };
  const logs = new ProcessLogs(process.env.CHAOS_LOG_DIR);
  const ledger = new ProcessLedger();
  const rand = random(o.seed);
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  let services: Services | undefined;
  const close = async () => {
    await services?.stop();
    await sim.close();
    await db.drop();
    if (!o.nats) await deleteStream(env.EVENTS_STREAM).catch(() => {});
  };
  try {
    services = await startServices({ env, logs, readyTimeoutMs: 30_000 });
    for (const [name, p] of services.procs) ledger.track(name, p);
    await joinAndWaitReady({ gatewayUrl: services.gatewayUrl, token: services.token, adminUrl: sim.adminUrl!, sql: db.sql, count: cfg.clusters.length, timeoutMs: 60_000 });
  } catch (e) {
    console.error(logs.tail(20_000));
    await close();
    throw e;
  }
  const svc = services;
  const deployments: Expected[] = Array.from({ length: o.deployments }, (_, i) => ({ namespace: NS, name: `app-${i}`, replicas: 3 }));
  const timeline: string[] = [];
  const up = Date.now();
  const note = (what: string) => void timeline.push(`${((Date.now() - up) / 1000).toFixed(1)}s ${what}`);
  const world: World = { sql: db.sql, sim, members: MEMBERS, failed: FAILED, deployments, ledger, running: () => svc.procs };
  return {
    sim,
    sql: db.sql,
    services: svc,
    ledger,
    logs,
    env,
    rand,
    between,
    deployments,
    world,
    timeline,
    note,
    async crash(name, downMs) {
      note(`kill -9 ${name}`);
      await ledger.kill(svc.procs.get(name)!);
      await sleep(downMs);
      const p = ledger.track(name, svc.relaunch(name));
      await waitReady([p], [svc.ports.get(name)!], 60_000);
      note(`${name} ready again`);
    },
    async post(p, body) {
      const r = await fetch(`${svc.gatewayUrl}${p}`, { method: "POST", headers: { "content-type": "application/json", ...bearer(svc.token) }, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`POST ${p}: ${r.status} ${await r.text()}`);
    },
    close,
  };
}

const policy = {
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "apps", namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }],
    placement: {
      clusterAffinity: { clusterNames: [...MEMBERS] },
      replicaScheduling: {
        replicaSchedulingType: "Divided",
        replicaDivisionPreference: "Weighted",
        weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["member1"] }, weight: 1 }, { targetCluster: { clusterNames: ["member2"] }, weight: 2 }] },
      },
    },
  },
};

const deployment = (d: Expected) => loadDeployment({ namespace: d.namespace, name: d.name, replicas: d.replicas, cpu: "50m" });

/** Polls until `check` is true; errors (a backend down) count as not yet; `fatal` returns a reason to stop waiting. */
async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, fatal: () => string | undefined = () => undefined): Promise<void> {
  const t0 = Date.now();
  let last = "";
  for (;;) {
    try {
      if (await check()) return;
      last = "";
    } catch (e) {
      last = ` (last error: ${(e as Error).message})`;
    }
    const stop = fatal();
    if (stop) throw new Error(`${what}: gave up after ${Date.now() - t0} ms: ${stop}`);
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not after ${timeoutMs} ms${last}`);
    await sleep(200);
  }
}

export interface WalkThroughTimes {
  /** From member1's fault until every binding is off member1 with no eviction task. */
  evictedMs: number;
  /** From member1's return until every invariant holds (the chaos finished first). */
  settledMs: number;
  /** From the end of the chaos (the last service, NATS or Postgres back) until every invariant holds. */
  afterChaosMs: number;
  totalMs: number;
}

/**
 * A chaos test's walk-through: the timeline and the times as test diagnostics; on a failure the
 * seed, timeline, service logs and a snapshot of the world go to stderr before it is rethrown.
 */
export async function runChaos(t: TestContext, s: ChaosStack, seed: number, chaos: (o: { returned: Promise<void> }) => Promise<void>): Promise<WalkThroughTimes> {
  try {
    const times = await failoverWalkThrough(s, chaos);
    for (const line of s.timeline) t.diagnostic(line);
    t.diagnostic(`evicted ${times.evictedMs} ms after the fault, settled ${times.settledMs} ms after member1 returned, ${times.afterChaosMs} ms after the chaos ended`);
    return times;
  } catch (e) {
    console.error(`CHAOS_SEED=${seed}\n${s.timeline.join("\n")}\n${s.logs.tail(30_000)}\n${await snapshot(s.world).catch((x) => String(x))}`);
    throw e;
  }
}

/**
 * Places the Deployments, waits until member1 runs 1 and member2 runs 2 replicas of each, fails
 * member1 and starts `chaos` at that moment, brings member1 back once every binding is off it,
 * waits for `chaos` to finish and then for every invariant (at most `settleMs`).
 */
export async function failoverWalkThrough(s: ChaosStack, chaos: (o: { returned: Promise<void> }) => Promise<void>, o: { settleMs?: number; evictMs?: number } = {}): Promise<WalkThroughTimes> {
  const sim = s.sim;
  await s.post(`/apis/policy.karmada.io/v1alpha1/namespaces/${NS}/propagationpolicies`, policy);
  for (const d of s.deployments) await s.post(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment(d));
  const running = (m: string, name: string, n: number) => {
    const d = sim.cluster(m).get("apps/v1", "Deployment", name, NS) as { spec?: { replicas?: number }; status?: { readyReplicas?: number } } | undefined;
    return d?.spec?.replicas === n && d.status?.readyReplicas === n;
  };
  await until(() => s.deployments.every((d) => running("member1", d.name, 1) && running("member2", d.name, 2)), 60_000, "every Deployment running 1 on member1 and 2 on member2");

  const t0 = Date.now();
  await sim.setFault(FAILED, { mode: "unreachable" });
  s.note(`${FAILED} unreachable`);
  let chaosError: unknown;
  let hasReturned = () => {};
  const returned = new Promise<void>((r) => (hasReturned = r));
  const chaosDone = chaos({ returned }).catch((e) => void (chaosError = e));
  try {
    await until(async () => {
      const [{ left }] = await s.sql<{ left: number }[]>`
        SELECT count(*)::int AS left FROM objects WHERE gk = 'work.karmada.io/ResourceBinding'
          AND (EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(body->'spec'->'clusters', '[]')) c WHERE c->>'name' = ${FAILED})
               OR jsonb_array_length(coalesce(body->'spec'->'gracefulEvictionTasks', '[]')) > 0
               OR jsonb_array_length(coalesce(body->'spec'->'clusters', '[]')) = 0)`;
      return left === 0;
    }, o.evictMs ?? 90_000, `every binding off ${FAILED}, rescheduled, with no eviction task`, () => s.ledger.unexpected().join("; ") || (chaosError ? `the chaos failed: ${(chaosError as Error).message}` : undefined));
  } catch (e) {
    await chaosDone;
    throw e;
  }
  const evictedMs = Date.now() - t0;
  s.note(`every binding off ${FAILED}`);
  await sim.setFault(FAILED, { mode: "healthy" });
  s.note(`${FAILED} healthy`);
  hasReturned();
  const t1 = Date.now();
  await chaosDone;
  if (chaosError) throw chaosError;
  s.note("chaos over");
  const chaosOver = Date.now();
  await settled(s.world, o.settleMs ?? 90_000);
  s.note("settled");
  const settledAt = Date.now();
  // and they stay so
  await sleep(2000);
  const later = await violations(s.world);
  if (later.length > 0) throw new Error(`invariants held, then 2 s later no more:\n  ${later.join("\n  ")}`);
  return { evictedMs, settledMs: settledAt - t1, afterChaosMs: settledAt - chaosOver, totalMs: settledAt - t0 };
}

/** kill -9 every service once, in a random order, at random moments `gapMs` apart, each down for up to `downMs`. */
export function killEveryService(s: ChaosStack, o: { gapMs: [number, number]; downMs: [number, number]; rounds?: number }): () => Promise<void> {
  return async () => {
    // the kills take longer than the eviction: the later ones fall on member1's return
    for (let r = 0; r < (o.rounds ?? 1); r++) {
      const order: ServiceName[] = [...SERVICE_NAMES];
      for (let i = order.length - 1; i > 0; i--) {
        const j = s.between(0, i);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const name of order) {
        await sleep(s.between(...o.gapMs));
        await s.crash(name, s.between(...o.downMs));
      }
    }
  };
}

/**
 * `outages` times, at a random moment `gapMs` after the previous one (the first from the fault;
 * the last `afterReturn` of them after member1 has returned): `stop()` the backend, leave it
 * down for a random `downMs`, `start()` it again.
 */
export function backendOutages(
  s: ChaosStack,
  o: { name: string; outages: number; afterReturn?: number; gapMs: [number, number]; returnGapMs?: [number, number]; downMs: [number, number]; stop: (i: number) => Promise<void>; start: () => Promise<void> },
): (w: { returned: Promise<void> }) => Promise<void> {
  return async ({ returned }) => {
    for (let i = 0; i < o.outages; i++) {
      const late = i >= o.outages - (o.afterReturn ?? 0);
      if (late) await returned;
      // just after the return: while the stale Works are being removed
      await sleep(late ? s.between(...(o.returnGapMs ?? [0, 1000])) : s.between(...o.gapMs));
      s.note(`${o.name} down`);
      await o.stop(i);
      await sleep(s.between(...o.downMs));
      await o.start();
      s.note(`${o.name} up`);
    }
  };
}
