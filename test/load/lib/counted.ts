// Counted cost of a load phase, for the per-service runners (eviction, taint-manager, gateway).
//
// A fresh database and stream, and pools opened per phase: the phase's service pool, the outbox
// relay's pool (as runService gives every service a relay of its own) and the runner's own. At the
// end of a phase every pool is closed; a Postgres backend publishes its counts to pg_stat_database
// when it exits, so once no backend of the database is left the counts are exact at once (an idle
// backend would otherwise hold them back up to 10 s). The counts are read over a connection to
// the server's `postgres` database, so reading them counts nothing in the phase's database.
import postgres, { type Sql } from "postgres";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay, type JetStreamClient, type NatsConnection, type Relay } from "@flotilla/events";
import { openDatabase, type Database } from "@flotilla/store";
import { NATS_URL, PG_URL, freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { backendCpu, backendCpuDelta, streamMessages, unpublished } from "./counters.js";
import { isolatedEnv } from "./stack.js";
import { sleep } from "./stats.js";

export interface Counts {
  /** xact_commit + xact_rollback of the database. */
  transactions: number;
  /** tup_inserted + tup_updated + tup_deleted of the database. */
  rowWrites: number;
  /** Messages published to the stream (its last sequence). */
  natsMessages: number;
  /** Statements run in the database (pg_stat_statements' calls), when the server has pg_stat_statements. */
  statements?: number;
}

export const minus = (a: Counts, b: Counts): Counts => ({
  transactions: a.transactions - b.transactions,
  rowWrites: a.rowWrites - b.rowWrites,
  natsMessages: a.natsMessages - b.natsMessages,
  statements: a.statements === undefined || b.statements === undefined ? undefined : a.statements - b.statements,
});

/** "x transactions, y row writes, z NATS messages[, w statements]" of `c` divided by `n`. */
export function describe(c: Counts, n = 1, digits = n === 1 ? 0 : 2): string {
  const f = (v: number) => (v / n).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return [`${f(c.transactions)} transactions`, `${f(c.rowWrites)} row writes`, `${f(c.natsMessages)} NATS messages`, ...(c.statements === undefined ? [] : [`${f(c.statements)} statements`])].join(", ");
}

/** Pools and a relay on the phase's database, all closed by close(). */
export interface Phase {
  /** A pool of `max` connections (the service's, or the runner's own). */
  pool(max: number): Promise<Sql>;
  /** Starts the outbox relay on a pool of two connections of its own (as runService). */
  relay(): Promise<void>;
  /** Until the relay has published every outbox row. */
  drained(): Promise<void>;
  close(): Promise<void>;
}

export interface CountedStack {
  db: TestDatabase;
  nc: NatsConnection;
  js: JetStreamClient;
  stream: string;
  prefix: string;
  /** The server's `postgres` database (statistics views are server-wide). */
  admin: Sql;
  phase(): Phase;
  /** The counts so far, once every connection to the database is closed (throws when one stays open longer than `timeoutMs`). */
  counts(timeoutMs?: number): Promise<Counts>;
  /** CPU ms so far of the database's backends, by pid (for backendCpuDelta). */
  backendCpu(): Promise<Map<number, number>>;
  close(): Promise<void>;
}

export async function countedStack(label: string): Promise<CountedStack> {
  const db = await freshDatabase({ max: 1 });
  // the database's own pool is not used: every connection belongs to a phase
  await db.close();
  const { EVENTS_STREAM: stream, EVENTS_PREFIX: prefix } = isolatedEnv(db, label);
  const nc = await connectNats({ servers: NATS_URL });
  await ensureStream(nc, { stream, prefix, maxAgeMs: 30 * 60_000 });
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  return {
    db,
    nc,
    js: jetstream(nc),
    stream,
    prefix,
    admin,
    phase() {
      const pools: Database[] = [];
      let relay: Relay | undefined;
      let relaySql: Sql | undefined;
      const pool = async (max: number) => {
        const p = await openDatabase({ url: db.url, max, create: false, migrate: false });
        pools.push(p);
        return p.sql;
      };
      return {
        pool,
        async relay() {
          relaySql = await pool(2);
          relay = startRelay({ sql: relaySql, nc, stream, prefix, retentionMs: 0 });
        },
        async drained() {
          if (!relaySql) throw new Error("no relay in this phase");
          while ((await unpublished(relaySql)) > 0) await sleep(20);
        },
        async close() {
          await relay?.stop().catch(() => {});
          for (const p of pools) await p.close().catch(() => {});
        },
      };
    },
    async counts(timeoutMs = 10_000) {
      let deadline = performance.now() + timeoutMs;
      for (let terminated = false; ; ) {
        const open = await admin<{ pid: number; app: string; state: string; query: string }[]>`
          SELECT pid, application_name AS app, coalesce(state, '') AS state, left(query, 80) AS query FROM pg_stat_activity WHERE datname = ${db.name}`;
        if (open.length === 0) break;
        if (performance.now() > deadline) {
          if (terminated) throw new Error(`${open.length} connections to ${db.name} still open: ${open.map((o) => `${o.app} ${o.state}: ${o.query}`).join("; ")}`);
          // a backend ended from outside still publishes its counts as it exits
          console.error(`counts: ${open.length} connections to the database were still open ${timeoutMs} ms after the phase's pools were closed; ended them (${open.map((o) => `${o.app || "?"}, ${o.state}, last ${o.query}`).join("; ")})`);
          for (const o of open) await admin`SELECT pg_terminate_backend(${o.pid})`;
          terminated = true;
          deadline = performance.now() + 5_000;
        }
        await sleep(20);
      }
      const [[r], natsMessages, statements] = await Promise.all([
        admin<{ t: string; w: string }[]>`SELECT (xact_commit + xact_rollback)::text AS t, (tup_inserted + tup_updated + tup_deleted)::text AS w FROM pg_stat_database WHERE datname = ${db.name}`,
        streamMessages(stream),
        // top-level statements, when the server loads pg_stat_statements and the postgres database has the extension
        admin<{ n: string }[]>`SELECT coalesce(sum(s.calls), 0)::text AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ${db.name}`.then(
          ([x]) => Number(x!.n),
          () => undefined,
        ),
      ]);
      return { transactions: Number(r!.t), rowWrites: Number(r!.w), natsMessages, statements };
    },
    backendCpu: () => backendCpu(admin, db.name),
    async close() {
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
      await nc.close().catch(() => {});
      await admin.end({ timeout: 1 }).catch(() => {});
      await db.drop();
    },
  };
}

export { backendCpuDelta };

/** Samples this process's RSS every 50 ms until stopped; returns the peak (bytes). */
export function rssPeak(): { stop(): number } {
  let peak = process.memoryUsage().rss;
  const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  return {
    stop() {
      clearInterval(t);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

/** CPU ms (user + system) this process has used so far. */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Until no controller has a key queued or in flight and the phase's outbox is published: three checks 100 ms apart in a row. */
export async function untilIdle(ph: Pick<Phase, "drained">, controllers: () => readonly { snapshot(): { queueDepth: number; inFlight: number } }[]): Promise<void> {
  for (let quiet = 0; quiet < 3; ) {
    await sleep(100);
    const busy = controllers().some((c) => c.snapshot().queueDepth + c.snapshot().inFlight > 0);
    await ph.drained();
    quiet = busy ? 0 : quiet + 1;
  }
}
