// Counts what a Deployment costs from POST to ready, through the whole stack: every service a
// process (optionally several replicas each) on a Postgres server of the test's own, with
// pg_stat_statements loaded and autovacuum off, so that every count is the stack's alone.
//
// Per phase (a burst of Deployments POSTed 16 at a time, then Deployments one at a time, each
// waited for before the next) it reads, before and after, with the services idle:
// - transactions (xact_commit + xact_rollback) and row writes (tup_inserted + tup_updated +
//   tup_deleted) of the stack's database from pg_stat_database. A backend publishes these at most
//   once a second while busy and within 10 s once idle, so each reading waits `STATS_FLUSH_MS`
//   after the stack went idle; a busy backend may still hold some back (it skips publishing while
//   another holds the database's entry), so these are the loosest of the counts;
// - write transactions: the transaction ids handed out (pg_current_snapshot's xmax; nothing else
//   writes on this server);
// - statements: pg_stat_statements' calls in the stack's database (top-level statements: a
//   statement inside a function counts once, as the one the service sent);
// - NATS messages published to the stack's stream (its last sequence);
// - outbox rows and their bytes (pg_column_size of the object each carries; every write stores the
//   same object in `objects` too), read after the run from the rows' resourceVersions.
// The services keep reading while idle (watches poll the outbox, timers are polled, leases
// renewed): that background is measured over an idle window of its own and taken off each phase
// in proportion to the phase's length.
//
// The test's own reads go to the server's `postgres` database (the statistics views are
// server-wide), so they are not counted; the one read of the stack's database (the outbox bytes and
// whether every Deployment is ready) comes after the last reading.
import postgres from "postgres";
import { openDatabase, type Database } from "@flotilla/store";
import { PostgresServer, uniqueName } from "@flotilla/testkit";
import { ProcessLogs } from "../../load/lib/logs.js";
import { clusterPods } from "../../load/lib/members.js";
import { streamMessages } from "../../load/lib/counters.js";
import { controllersBusy } from "../../load/lib/metrics.js";
import { dividedPolicy, loadDeployment } from "../../load/lib/objects.js";
import { bearer, deleteStream, gatewayFetch, isolatedEnv, joinAndWaitReady, SERVICE_NAMES, startServices, startSimulatorProcess, type Services, type SimulatorProcess } from "../../load/lib/stack.js";
import { pool, sleep } from "../../load/lib/stats.js";

/** How long after the stack went idle Postgres has published every backend's counts (PGSTAT_IDLE_INTERVAL is 10 s). */
export const STATS_FLUSH_MS = 10_500;

export interface CostOptions {
  /** Processes per service. */
  replicas: number;
  clusters: number;
  /** Deployments in the burst. */
  burst: number;
  /** Deployments one at a time after the burst. */
  single: number;
  /** Replicas per Deployment. */
  podReplicas?: number;
  /** The idle window that measures the background (ms). */
  idleWindowMs?: number;
  log?: (line: string) => void;
}

/** What one phase cost, in total (not per Deployment). */
export interface PhaseCost {
  deployments: number;
  /** From the phase's first POST until the stack was idle again (ms). */
  ms: number;
  transactions: number;
  writeTransactions: number;
  rowWrites: number;
  statements: number;
  natsMessages: number;
  outboxRows: number;
  outboxBytes: number;
  /** Row writes by table. */
  tables: Record<string, number>;
  /** Object writes (outbox rows) by kind and type, e.g. "work.karmada.io/Work MODIFIED". */
  writes: Record<string, number>;
  /** The statements called most, with their calls. */
  topStatements: [string, number][];
  /** The statements Postgres spent most time executing, with their milliseconds. */
  topStatementTimes: [string, number][];
}

export type Measure = Exclude<keyof PhaseCost, "deployments" | "ms" | "tables" | "writes" | "topStatements" | "topStatementTimes">;
export const MEASURES: readonly Measure[] = ["transactions", "writeTransactions", "rowWrites", "statements", "natsMessages", "outboxRows", "outboxBytes"];

export interface CostResult {
  /** Counts per Deployment (the background taken off), per phase. */
  perDeployment: { burst: Record<Measure, number>; single: Record<Measure, number> };
  raw: { burst: PhaseCost; single: PhaseCost; idle: PhaseCost };
  /** Deployments whose status did not say every replica ready at the end. */
  notReady: string[];
  /** The object writes of the last Deployment of the one-at-a-time phase, in order, each with what it changed. */
  story: string[];
}

interface Reading {
  at: number;
  /** Row writes by table. */
  tables: Map<string, number>;
  /** Calls by statement text. */
  byStatement: Map<string, number>;
  /** Execution milliseconds by statement text. */
  timeByStatement: Map<string, number>;
  transactions: number;
  rowWrites: number;
  statements: number;
  nextXid: bigint;
  natsMessages: number;
}

const NS = "cost";

const deployment = (name: string, replicas: number) => loadDeployment({ namespace: NS, name, replicas });
/** The e2e runner's policy: Divided, weighted by available replicas, exactly two clusters per binding. */
const POLICY = dividedPolicy({ name: "cost", namespaces: [NS] });

export async function measureCost(o: CostOptions): Promise<CostResult> {
  const log = o.log ?? (() => {});
  const podReplicas = o.podReplicas ?? 3;
  const pg = await PostgresServer.start({
    maxConnections: o.replicas > 1 ? 300 : 100,
    settings: { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "top", "pg_stat_statements.track_utility": "off", autovacuum: "off" },
  });
  const admin = postgres(pg.url("postgres"), { max: 1, onnotice: () => {} });
  const logs = new ProcessLogs();
  let db: Database | undefined;
  let sim: SimulatorProcess | undefined;
  let services: Services | undefined;
  let stream: string | undefined;
  try {
    await admin`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    const name = uniqueName("flotilla_cost");
    db = await openDatabase({ url: pg.url(name), max: 2 });
    const env = { ...isolatedEnv({ ...db, name, drop: async () => {} }, "COST"), DATABASE_POOL_SIZE: "4", LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn" };
    stream = env.EVENTS_STREAM;
    sim = await startSimulatorProcess({ count: o.clusters, readyDelayMs: 50, nodes: 2, nodeCpu: "32", nodeMemory: "128Gi", nodePods: 250, logs });
    services = await startServices({ env, logs, replicas: o.replicas, readyTimeoutMs: 90_000 });
    const s = services;
    await joinAndWaitReady({ gatewayUrl: s.gatewayUrl, token: s.token, adminUrl: sim.adminUrl, sql: db.sql, count: o.clusters, timeoutMs: 90_000 });
    const post = async (path: string, body: unknown) => {
      const r = await gatewayFetch(s, path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    };
    await post("/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies", POLICY);

    const metricsUrls = SERVICE_NAMES.flatMap((n) => s.replicasOf(n).map((r) => `http://127.0.0.1:${r.port}/metrics`));
    const read = async (): Promise<Reading> => {
      const [[d], st, [x], natsMessages] = await Promise.all([
        admin<{ t: string; w: string }[]>`SELECT (xact_commit + xact_rollback)::text AS t, (tup_inserted + tup_updated + tup_deleted)::text AS w FROM pg_stat_database WHERE datname = ${name}`,
        admin<{ q: string; n: string; ms: number }[]>`SELECT s.query AS q, sum(calls)::text AS n, sum(total_exec_time)::float8 AS ms FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ${name} GROUP BY 1`,
        admin<{ x: string }[]>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x`,
        streamMessages(stream!),
      ]);
      // the one statement of the test's own in the stack's database, after the count of statements
      // the tables' own rows and their TOAST rows (a body too large to stay in line is written as
      // chunks of a table of its own), and the system catalogs' together
      const tables = await db!.sql<{ t: string; n: string }[]>`
        SELECT CASE WHEN s.schemaname = 'pg_toast' THEN coalesce(o.relname, '?') || ' (toast)' WHEN s.schemaname = 'public' THEN s.relname ELSE 'catalogs' END AS t,
               sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del)::text AS n
        FROM pg_stat_all_tables s LEFT JOIN pg_class o ON o.reltoastrelid = s.relid GROUP BY 1`;
      const own = st.filter((r) => !r.q.includes("pg_stat_all_tables"));
      const byStatement = new Map(own.map((r) => [r.q, Number(r.n)]));
      const timeByStatement = new Map(own.map((r) => [r.q, r.ms]));
      return {
        at: performance.now(),
        tables: new Map(tables.map((r) => [r.t, Number(r.n)])),
        byStatement,
        timeByStatement,
        transactions: Number(d!.t),
        rowWrites: Number(d!.w),
        statements: [...byStatement.values()].reduce((a, n) => a + n, 0),
        nextXid: BigInt(x!.x),
        natsMessages,
      };
    };
    /** Until every controller of every replica is idle and nothing is being published, three checks in a row. */
    const idle = async (timeoutMs = 120_000) => {
      const deadline = performance.now() + timeoutMs;
      let last = -1;
      for (let quiet = 0; quiet < 3; ) {
        if (performance.now() > deadline) throw new Error("the stack did not go idle");
        await sleep(300);
        const [busy, published] = await Promise.all([Promise.all(metricsUrls.map((u) => controllersBusy(u, bearer(s.token)))), streamMessages(stream!)]);
        quiet = !busy.some(Boolean) && published === last ? quiet + 1 : 0;
        last = published;
      }
    };
    const settled = async () => {
      await idle();
      await sleep(STATS_FLUSH_MS);
      return read();
    };
    const runningPods = async () => (await clusterPods(sim!.adminUrl)).reduce((n, c) => n + c.running, 0);

    // the background: an idle window
    const i0 = await settled();
    await sleep(o.idleWindowMs ?? 5_000);
    const i1 = await read();

    // the burst
    const t0 = performance.now();
    await pool(o.burst, 16, (i) => post(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment(`burst-${i}`, podReplicas)));
    await waitFor(async () => (await runningPods()) >= o.burst * podReplicas, 120_000, `${o.burst * podReplicas} pods running`);
    await idle();
    const burstMs = performance.now() - t0;
    const b1 = await settled();
    log(`burst of ${o.burst}: ${Math.round(burstMs)} ms`);

    // one at a time
    const t1 = performance.now();
    for (let i = 0; i < o.single; i++) {
      const want = (o.burst + i + 1) * podReplicas;
      await post(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment(`single-${i}`, podReplicas));
      await waitFor(async () => (await runningPods()) >= want, 30_000, `${want} pods running`);
      await idle();
    }
    const singleMs = performance.now() - t1;
    const s1 = await settled();
    log(`${o.single} one at a time: ${Math.round(singleMs)} ms`);

    // after the last reading: the outbox rows of each phase (by resourceVersion), and what is ready
    await services.stop();
    services = undefined;
    const outbox = async (from: bigint, to: bigint) => {
      const [r] = await db!.sql<{ n: number; b: string }[]>`SELECT count(*)::int AS n, coalesce(sum(pg_column_size(object)), 0)::text AS b FROM outbox WHERE rv >= ${from.toString()} AND rv < ${to.toString()}`;
      const kinds = await db!.sql<{ k: string; n: number }[]>`SELECT gk || ' ' || type AS k, count(*)::int AS n FROM outbox WHERE rv >= ${from.toString()} AND rv < ${to.toString()} GROUP BY 1 ORDER BY 2 DESC`;
      return { outboxRows: r!.n, outboxBytes: Number(r!.b), writes: Object.fromEntries(kinds.map((k) => [k.k, k.n])) };
    };
    const notReady = (
      await db.sql<{ name: string }[]>`SELECT name FROM objects WHERE gk = 'apps/Deployment' AND namespace = ${NS}
        AND coalesce((body->'status'->>'readyReplicas')::int, 0) <> ${podReplicas}`
    ).map((r) => r.name);

    const diff = (a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>) =>
      [...b].map(([k, n]) => [k, n - (a.get(k) ?? 0)] as [string, number]).filter(([, n]) => n > 0).sort((x, y) => y[1] - x[1]);
    const phase = async (a: Reading, b: Reading, deployments: number, ms: number): Promise<PhaseCost> => ({
      deployments,
      ms,
      // the test's own read of the table statistics at the window's start is one transaction
      transactions: b.transactions - a.transactions - 1,
      writeTransactions: Number(b.nextXid - a.nextXid),
      rowWrites: b.rowWrites - a.rowWrites,
      statements: b.statements - a.statements,
      natsMessages: b.natsMessages - a.natsMessages,
      ...(await outbox(a.nextXid, b.nextXid)),
      tables: Object.fromEntries(diff(a.tables, b.tables)),
      topStatements: diff(a.byStatement, b.byStatement).slice(0, 12).map(([q, n]) => [q.replace(/\s+/g, " ").slice(0, 160), n]),
      topStatementTimes: diff(a.timeByStatement, b.timeByStatement).slice(0, 8).map(([q, ms]) => [q.replace(/\s+/g, " ").slice(0, 160), Math.round(ms)]),
    });
    const idleCost = await phase(i0, i1, 0, i1.at - i0.at);
    const burst = await phase(i1, b1, o.burst, b1.at - i1.at);
    const single = await phase(b1, s1, o.single, s1.at - b1.at);
    const per = (p: PhaseCost) =>
      Object.fromEntries(MEASURES.map((m) => [m, Math.max(0, p[m] - (idleCost[m] * p.ms) / idleCost.ms) / p.deployments])) as Record<Measure, number>;
    const last = `single-${o.single - 1}`;
    const rows = await db.sql<{ key: string; type: string; object: Record<string, unknown> }[]>`
      SELECT gk || ' ' || namespace || '/' || name AS key, type, object FROM outbox
      WHERE name = ${last} OR name LIKE ${`${last}-%`} ORDER BY rv, id`;
    return { perDeployment: { burst: per(burst), single: per(single) }, raw: { burst, single, idle: idleCost }, notReady, story: storyOf(rows) };
  } catch (e) {
    console.error(logs.tail(20_000));
    throw e;
  } finally {
    await services?.stop();
    await sim?.stop();
    await db?.close();
    await admin.end({ timeout: 1 });
    await pg.destroy();
    if (stream) await deleteStream(stream);
  }
}

/** Each write as "<kind> <namespace>/<name> <type>: <the fields it changed>", against the object's write before it. */
export function storyOf(rows: readonly { key: string; type: string; object: Record<string, unknown> }[]): string[] {
  const before = new Map<string, Record<string, unknown>>();
  const IGNORED = new Set(["metadata.resourceVersion", "metadata.managedFields", "metadata.generation"]);
  const fields = (o: Record<string, unknown> | undefined) => {
    const m = new Map<string, string>();
    for (const [k, v] of Object.entries(o ?? {})) {
      if (v && typeof v === "object" && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) m.set(`${k}.${k2}`, JSON.stringify(v2));
      else m.set(k, JSON.stringify(v));
    }
    return m;
  };
  return rows.map((r) => {
    const a = fields(before.get(r.key));
    const b = fields(r.object);
    before.set(r.key, r.object);
    const changed = [...new Set([...a.keys(), ...b.keys()])].filter((k) => !IGNORED.has(k) && a.get(k) !== b.get(k)).sort();
    return `${r.key} ${r.type}${r.type === "MODIFIED" ? `: ${changed.join(", ") || "(nothing)"}` : ""}`;
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
