// Kill drill at scale: --replicas processes of every service (gateway, execution, binding,
// scheduler, taint-manager, eviction) on a Postgres and a nats-server of the script's own,
// --clusters simulated members (in this process) with room for every Deployment after a
// failover, and --bindings Deployments of 1 replica placed and Ready. Half of the Deployments
// prefer member1 (static weight 2 against 1 for every other member), the other half spread over
// all members (equal weights, ties broken by the scheduler's tie-breaker), so member1 holds half
// of the bindings or more. member1 becomes unreachable (NoExecute failover: the gateway's default
// tolerations of 2 s, as the e2e failover tests run) and, from that moment, --kills rounds at
// random moments: each round kills one replica of every service with SIGKILL (in a random order,
// the scheduler's leader and the execution replica holding a member's lease among them) and
// starts each again after a short pause; a round starts once the previous round's replicas are
// ready again.
//
// Measured from the last kill until converged: every binding off member1, scheduled and observed
// by the scheduler, no graceful-eviction task left, one live Work per binding on a healthy member
// and every one Applied, every member Deployment running what its binding places there and ready,
// the outbox published, every replica of every service up and no controller with a key queued
// or in flight. Then member1 returns and every invariant of test/e2e/chaos/invariants.ts must
// hold ("nothing lost": every binding scheduled once on the placement, one Work per target and no
// other, members run exactly what the Works say, no service exited unless killed) and still hold
// 2 s later. Prints a result table (the goal "converged ≤ 30 s after the last kill": measured,
// met or not met), the load average, and CPU and peak RSS per service. Exits 1 when an invariant
// breaks, printing the seed (--seed replays the order and moments of the kills).
//   npm run build
//   node --conditions=source --import tsx test/load/chaos/kill-drill.ts [--bindings 5000] [--clusters 20] [--replicas 3] [--kills 5] [--seed N] [--timeout 600]
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startSimulator } from "@flotilla/member-sim";
import { openDatabase } from "@flotilla/store";
import { NatsServer, PostgresServer, canRunNatsServer, canRunPostgresServer, uniqueName, type TestDatabase } from "@flotilla/testkit";
import { random } from "../../e2e/chaos/harness.js";
import { ProcessLedger, settled, snapshot, violations, type Expected, type World } from "../../e2e/chaos/invariants.js";
import { KNOBS } from "../../e2e/failover/harness.js";
import { unpublished } from "../lib/counters.js";
import { ProcessLogs } from "../lib/logs.js";
import { controllersBusy, scrape, sum } from "../lib/metrics.js";
import { loadDeployment } from "../lib/objects.js";
import { cpuMs, peakRssBytes } from "../lib/proc.js";
import { SERVICE_NAMES, bearer, isolatedEnv, joinAndWaitReady, launch, root, startServices, waitReady, type Managed, type ServiceName, type Services } from "../lib/stack.js";
import { fmt, markdownTable, mib, pool, sleep } from "../lib/stats.js";

const { values } = parseArgs({
  options: {
    bindings: { type: "string", default: "5000" },
    clusters: { type: "string", default: "20" },
    replicas: { type: "string", default: "3" },
    kills: { type: "string", default: "5" },
    seed: { type: "string" },
    timeout: { type: "string", default: "600" },
  },
});
const N = Number(values.bindings);
const C = Number(values.clusters);
const REPLICAS = Number(values.replicas);
const KILLS = Number(values.kills);
const TIMEOUT_MS = Number(values.timeout) * 1000;
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const GOAL_MS = 30_000;

const NS = "default";
const FAILED = "member1";
const MEMBERS = Array.from({ length: C }, (_, i) => `member${i + 1}`);
const ENV = {
  ...KNOBS,
  MEMBER_SHARDING: "true",
  MEMBER_LEASE_DURATION: "3s",
  MEMBER_LEASE_RENEW_INTERVAL: "500ms",
  DATABASE_POOL_SIZE: "4",
  LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? "warn",
};

const rand = random(seed);
const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

/** One replica process of a service, the current one after restarts. */
interface Slot {
  service: ServiceName;
  index: number;
  label: string;
  port: number;
  env: Record<string, string>;
  proc: Managed;
  down: boolean;
  started: number;
}

/** A policy over every member for the Deployments labelled drill-group=<group>: Divided, static weights. */
const policy = (group: string, weight: (m: string) => number) => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: `drill-${group}`, namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { "drill-group": group } } }],
    placement: {
      clusterAffinity: { clusterNames: MEMBERS },
      replicaScheduling: {
        replicaSchedulingType: "Divided",
        replicaDivisionPreference: "Weighted",
        weightPreference: { staticWeightList: MEMBERS.map((m) => ({ targetCluster: { clusterNames: [m] }, weight: weight(m) })) },
      },
    },
  },
});

const deployment = (d: Expected, i: number) => {
  const o = loadDeployment({ namespace: d.namespace, name: d.name, replicas: d.replicas, cpu: "50m" });
  o.metadata.labels = { ...o.metadata.labels, "drill-group": i % 2 === 0 ? "prefer-member1" : "spread" };
  return o;
};

async function main(): Promise<number> {
  if (!canRunPostgresServer() || !canRunNatsServer()) {
    console.error("needs the PostgreSQL server binaries and nats-server");
    return 2;
  }
  console.log(
    `kill drill: ${REPLICAS} replicas of every service, ${C} members, ${N} Deployments (1 replica), ${KILLS} round(s) of kill -9 of one replica of every service; seed ${seed}; ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`,
  );
  // 6 × REPLICAS processes with a pool of 4 each, plus leader elections, the relay's lock and
  // lease renewals: about 150 connections with three replicas, more than a default server's 100
  const pg = await PostgresServer.start({ maxConnections: Math.max(200, 50 + SERVICE_NAMES.length * REPLICAS * 20) });
  const nats = await NatsServer.create();
  let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
  let db: TestDatabase | undefined;
  let services: Services | undefined;
  const slots: Slot[] = [];
  const logs = new ProcessLogs(process.env.CHAOS_LOG_DIR);
  const timeline: string[] = [];
  let up = Date.now();
  const note = (what: string) => void timeline.push(`${((Date.now() - up) / 1000).toFixed(1)}s ${what}`);
  try {
    await nats.start();
    // every member could hold every Deployment (50m, 64Mi each): whatever the failover does, it fits
    const pods = N + 110;
    sim = await startSimulator({
      admin: { host: "127.0.0.1", port: 0 },
      defaults: { readyDelayMs: 200 },
      clusters: MEMBERS.map((name) => ({ name, port: 0, nodes: [{ name: "node", count: 2, pods: Math.ceil(pods / 2), cpu: String(Math.ceil(pods / 40) + 2), memory: `${Math.ceil(pods / 32) + 4}Gi` }] })),
    });
    const own = await openDatabase({ url: pg.url(uniqueName("flotilla_drill")), max: 4 });
    db = { ...own, name: "", drop: () => own.close() };
    const sql = db.sql;
    const env = { ...isolatedEnv(db, "DRILL"), NATS_URL: nats.url, ...ENV };
    const t0 = Date.now();
    services = await startServices({ env, logs, replicas: REPLICAS, readyTimeoutMs: 180_000 });
    const svc = services;
    const ledger = new ProcessLedger();
    for (const s of SERVICE_NAMES) for (const r of svc.replicasOf(s)) slots.push({ service: s, index: r.index, label: r.label, port: r.port, env: r.env, proc: ledger.track(s, r.proc), down: false, started: 1 });
    await joinAndWaitReady({ gatewayUrl: svc.gatewayUrl, token: svc.token, adminUrl: sim.adminUrl!, sql, count: C, timeoutMs: 180_000 });
    console.log(`${slots.length} service processes up, ${C} members joined and Ready in ${Date.now() - t0} ms`);

    // place the Deployments through the gateway replicas in turn
    const post = async (i: number, p: string, body: unknown) => {
      const url = `${svc.gatewayUrls[i % svc.gatewayUrls.length]}${p}`;
      for (let attempt = 0; ; attempt++) {
        const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...bearer(svc.token) }, body: JSON.stringify(body) }).catch((e: Error) => e);
        if (!(r instanceof Error) && (r.ok || r.status === 409)) return;
        if (attempt >= 20 || (!(r instanceof Error) && r.status < 500 && r.status !== 429)) throw new Error(`POST ${p}: ${r instanceof Error ? r.message : `${r.status} ${await r.text()}`}`);
        await sleep(250 * (attempt + 1));
      }
    };
    await post(0, `/apis/policy.karmada.io/v1alpha1/namespaces/${NS}/propagationpolicies`, policy("prefer-member1", (m) => (m === FAILED ? 2 : 1)));
    await post(1, `/apis/policy.karmada.io/v1alpha1/namespaces/${NS}/propagationpolicies`, policy("spread", () => 1));
    const expected: Expected[] = Array.from({ length: N }, (_, i) => ({ namespace: NS, name: `drill-${i}`, replicas: 1 }));
    const t1 = Date.now();
    await pool(N, 16, (i) => post(i, `/apis/apps/v1/namespaces/${NS}/deployments`, deployment(expected[i]!, i)));
    const posted = Date.now() - t1;
    const simNow = sim;
    /** Deployments running and ready on each member. */
    const readyOn = () => new Map(MEMBERS.map((m) => [m, (simNow.cluster(m).list("apps/v1", "Deployment", NS) as { spec?: { replicas?: number }; status?: { readyReplicas?: number } }[]).filter((d) => d.spec?.replicas === 1 && d.status?.readyReplicas === 1).length]));
    await until(() => [...readyOn().values()].reduce((a, b) => a + b, 0) === N, TIMEOUT_MS, `all ${N} Deployments placed and ready on a member`);
    const onFailed = readyOn().get(FAILED) ?? 0;
    const placedMs = Date.now() - t1;
    console.log(`${N} Deployments posted in ${posted} ms, placed and ready in ${placedMs} ms; ${onFailed} on ${FAILED}`);

    // resources: CPU time and peak RSS of every process the drill ran, sampled every second (and just before a kill)
    const cpu = new Map<number, { service: ServiceName; base: number; last: number; peak: number }>();
    const sample = (s: Slot, base = false) => {
      const pid = s.proc.child.pid;
      if (pid === undefined || s.proc.exit) return;
      const c = cpuMs(pid);
      if (!Number.isFinite(c)) return;
      const e = cpu.get(pid) ?? { service: s.service, base: base ? c : 0, last: c, peak: 0 };
      e.last = c;
      e.peak = Math.max(e.peak, peakRssBytes(pid));
      cpu.set(pid, e);
    };
    for (const s of slots) sample(s, true);
    let maxLoad = os.loadavg()[0]!;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await sleep(1000);
        for (const s of slots) sample(s);
        maxLoad = Math.max(maxLoad, os.loadavg()[0]!);
      }
    })();

    const restart = async (s: Slot) => {
      const p = s.index === 0 ? svc.relaunch(s.service) : launch(s.label, path.join(root, "services", s.service, "dist", "main.js"), [], logs, { env: s.env });
      s.proc = ledger.track(s.service, p);
      s.started++;
      await waitReady([p], [s.port], 120_000);
      s.down = false;
      note(`${s.label} ready again`);
    };
    /** The replica of `name` to kill: the scheduler's leader, the execution replica holding member1's or another member's lease, any other. */
    const victim = async (name: ServiceName): Promise<Slot> => {
      const live = slots.filter((s) => s.service === name && !s.down);
      if (name === "scheduler") {
        const leading = await Promise.all(live.map((s) => scrape(`http://127.0.0.1:${s.port}/metrics`).then((x) => sum(x, "flotilla_scheduler_leading"), () => 0)));
        const leader = live.find((_, i) => leading[i] === 1);
        if (leader) return leader;
      }
      if (name === "execution") {
        const member = rand() < 0.5 ? FAILED : MEMBERS[between(0, C - 1)]!;
        const [row] = await sql<{ holder: string | null }[]>`SELECT holder FROM member_leases WHERE member = ${member}`.catch(() => []);
        const holder = live.find((s) => s.env.REPLICA_NAME === row?.holder);
        if (holder) return holder;
      }
      return live[between(0, live.length - 1)]!;
    };
    let lastKill = 0;
    const chaos = async () => {
      for (let round = 1; round <= KILLS; round++) {
        await sleep(between(round === 1 ? 0 : 500, 3000));
        const order: ServiceName[] = [...SERVICE_NAMES];
        for (let i = order.length - 1; i > 0; i--) {
          const j = between(0, i);
          [order[i], order[j]] = [order[j]!, order[i]!];
        }
        const restarts: Promise<void>[] = [];
        for (const name of order) {
          await sleep(between(0, 400));
          const s = await victim(name);
          sample(s);
          s.down = true;
          await ledger.kill(s.proc, "SIGKILL");
          lastKill = Date.now();
          note(`round ${round}: kill -9 ${s.label}${s.env.REPLICA_NAME ? ` (${s.env.REPLICA_NAME})` : ""}`);
          const pause = between(200, 1500);
          restarts.push(sleep(pause).then(() => restart(s)));
        }
        await Promise.all(restarts);
      }
    };

    /** What keeps the drill from having converged (member1 still down); undefined once it has. */
    const notConverged = async (): Promise<string | undefined> => {
      const down = slots.filter((s) => s.down || s.proc.exit);
      if (down.length > 0) return `${down.map((s) => s.label).join(", ")} not running`;
      const [b] = await sql<{ total: number; on_failed: number; tasks: number; unscheduled: number; unobserved: number }[]>`
        SELECT count(*)::int AS total,
          count(*) FILTER (WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(body->'spec'->'clusters', '[]')) c WHERE c->>'name' = ${FAILED}))::int AS on_failed,
          count(*) FILTER (WHERE jsonb_array_length(coalesce(body->'spec'->'gracefulEvictionTasks', '[]')) > 0)::int AS tasks,
          count(*) FILTER (WHERE jsonb_array_length(coalesce(body->'spec'->'clusters', '[]')) = 0)::int AS unscheduled,
          count(*) FILTER (WHERE coalesce((body->'status'->>'schedulerObservedGeneration')::bigint, -1) < coalesce((body->'metadata'->>'generation')::bigint, 0))::int AS unobserved
        FROM objects WHERE gk = 'work.karmada.io/ResourceBinding'`;
      if (b!.total !== N || b!.on_failed || b!.tasks || b!.unscheduled || b!.unobserved) return `bindings: ${JSON.stringify(b)}`;
      const [w] = await sql<{ live: number; applied: number }[]>`
        SELECT count(*) FILTER (WHERE NOT body->'metadata' ? 'deletionTimestamp')::int AS live,
          count(*) FILTER (WHERE NOT body->'metadata' ? 'deletionTimestamp' AND body->'status'->'conditions' @> '[{"type":"Applied","status":"True"}]')::int AS applied
        FROM objects WHERE gk = 'work.karmada.io/Work' AND body->'metadata'->>'namespace' <> ${`karmada-es-${FAILED}`}`;
      if (w!.live !== N || w!.applied !== N) return `Works on healthy members: ${w!.live} live, ${w!.applied} applied, want ${N}`;
      const targets = await sql<{ name: string; clusters: { name: string; replicas?: number }[] }[]>`
        SELECT body->'metadata'->>'name' AS name, body->'spec'->'clusters' AS clusters FROM objects WHERE gk = 'work.karmada.io/ResourceBinding'`;
      let notReady = 0;
      for (const t of targets) {
        for (const c of t.clusters) {
          const d = simNow.cluster(c.name).get("apps/v1", "Deployment", t.name.replace(/-deployment$/, ""), NS) as { spec?: { replicas?: number }; status?: { readyReplicas?: number } } | undefined;
          if (d?.spec?.replicas !== (c.replicas ?? 0) || d.status?.readyReplicas !== (c.replicas ?? 0)) notReady++;
        }
      }
      if (notReady > 0) return `${notReady} member Deployments not as placed or not ready`;
      const left = await unpublished(sql);
      if (left > 0) return `${left} outbox rows unpublished`;
      const busy = await Promise.all(slots.map((s) => controllersBusy(`http://127.0.0.1:${s.port}/metrics`, bearer(svc.token)).then((x) => (x ? s.label : ""), () => `${s.label} (no metrics)`)));
      if (busy.some(Boolean)) return `controllers busy: ${busy.filter(Boolean).join(", ")}`;
      return undefined;
    };

    const world: World = { sql, sim, members: MEMBERS, failed: FAILED, deployments: expected, ledger, running: () => slots.map((s) => [s.service, s.proc] as [ServiceName, Managed]) };
    const loadBefore = os.loadavg()[0]!;
    up = Date.now();
    const fault = Date.now();
    await sim.setFault(FAILED, { mode: "unreachable" });
    note(`${FAILED} unreachable`);
    let chaosError: Error | undefined;
    let allReady = 0;
    const chaosDone = chaos().then(
      () => void (allReady = Date.now()),
      (e: Error) => void (chaosError = e),
    );
    // every binding off member1 (taint, eviction, rescheduling), while the kills go on
    let offAt = 0;
    const offWatch = until(
      async () => {
        const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM objects WHERE gk = 'work.karmada.io/ResourceBinding'
          AND (EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(body->'spec'->'clusters', '[]')) c WHERE c->>'name' = ${FAILED}) OR jsonb_array_length(coalesce(body->'spec'->'clusters', '[]')) = 0)`;
        if (row?.n !== 0) return false;
        offAt = Date.now();
        return true;
      },
      TIMEOUT_MS,
      `every binding off ${FAILED}`,
    ).catch(() => {});
    await chaosDone;
    note("kills over, every replica ready again");
    if (chaosError) throw chaosError;
    let why: string | undefined = "not checked";
    const deadline = Date.now() + TIMEOUT_MS;
    while (Date.now() < deadline) {
      why = await notConverged().catch((e: Error) => `could not check: ${e.message}`);
      if (!why) break;
      await sleep(500);
    }
    const convergedAt = Date.now();
    const loadConverged = os.loadavg()[0]!;
    await offWatch;
    sampling = false;
    await sampler;
    for (const s of slots) sample(s);
    const afterLastKill = convergedAt - lastKill;
    if (why) note(`not converged after ${TIMEOUT_MS} ms: ${why}`);
    else note("converged");

    // member1 returns; every invariant must hold, and still 2 s later
    await sim.setFault(FAILED, { mode: "healthy" });
    note(`${FAILED} healthy`);
    const returned = Date.now();
    let broken: string | undefined;
    let settledMs = NaN;
    try {
      await settled(world, TIMEOUT_MS);
      settledMs = Date.now() - returned;
      note("every invariant holds");
      await sleep(2000);
      const later = await violations(world);
      if (later.length > 0) broken = `invariants held, then 2 s later no more:\n  ${later.slice(0, 25).join("\n  ")}`;
    } catch (e) {
      broken = (e as Error).message;
    }

    const kills = ledger.kills();
    const rows: string[][] = [
      ["goal: converged ≤ 30 s after the last kill", why ? `not converged after ${fmt(TIMEOUT_MS / 1000)} s (${why})` : `${fmt(afterLastKill / 1000, 1)} s`, !why && afterLastKill <= GOAL_MS ? "met" : "not met"],
      ["nothing lost: every invariant holds after member1's return (and 2 s later)", broken ? "broken" : `held ${fmt(settledMs / 1000, 1)} s after the return`, broken ? "not met" : "met"],
      [`bindings on ${FAILED} when it failed`, `${fmt(onFailed)} of ${fmt(N)}`, ""],
      [`every binding off ${FAILED} (after the fault)`, offAt ? `${fmt((offAt - fault) / 1000, 1)} s` : "-", ""],
      ["kills: rounds × services, last kill after the fault", `${KILLS} × ${SERVICE_NAMES.length} (${Object.values(kills).reduce((a, b) => a + b, 0)} kill -9), ${fmt((lastKill - fault) / 1000, 1)} s`, ""],
      ["converged after the last restarted replica was ready", allReady ? `${fmt((convergedAt - allReady) / 1000, 1)} s` : "-", ""],
      ["converged after the fault", `${fmt((convergedAt - fault) / 1000, 1)} s`, ""],
      ["load average (1 min): before the fault / at convergence / highest", `${loadBefore.toFixed(2)} / ${loadConverged.toFixed(2)} / ${maxLoad.toFixed(2)}`, ""],
    ];
    console.log(`\n${markdownTable(["measure", "value", "goal"], rows)}\n`);
    const wall = (convergedAt - fault) / 1000;
    const perService = SERVICE_NAMES.map((name) => {
      const procs = [...cpu.values()].filter((e) => e.service === name);
      const used = procs.reduce((a, e) => a + (e.last - e.base), 0);
      return [name, String(procs.length), String(kills[name] ?? 0), fmt(used / 1000, 1), `${fmt((used / 1000 / wall) * 100)} %`, mib(Math.max(0, ...procs.map((e) => e.peak)))];
    });
    console.log(`CPU from the fault until converged (${fmt(wall, 1)} s; the restarted processes' start-up included) and peak RSS of any one process:\n`);
    console.log(`${markdownTable(["service", "processes", "kill -9", "CPU s", "of one core", "peak RSS MiB"], perService)}\n`);
    console.log(timeline.join("\n"));
    if (broken) {
      console.error(`\nseed ${seed}: an invariant broke: ${broken}\n${logs.tail(20_000)}\n${(await snapshot(world).catch((x) => String(x))).split("\n").slice(0, 200).join("\n")}`);
      return 1;
    }
    console.log(`\nseed ${seed}: every invariant held`);
    return 0;
  } catch (e) {
    console.error(`seed ${seed}: the drill failed: ${(e as Error).message}\n${timeline.join("\n")}\n${logs.tail(20_000)}`);
    return 1;
  } finally {
    await Promise.all(slots.map((s) => s.proc.stop()));
    await services?.stop();
    await sim?.close();
    await db?.drop();
    await nats.destroy();
    await pg.destroy();
  }
}

/** Polls until `check` is true; errors (a process down) count as not yet. */
async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await sleep(250);
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
