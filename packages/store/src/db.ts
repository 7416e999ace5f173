import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createClient, sibling, type Sql } from "./driver.js";

export type { Queryable, Sql } from "./driver.js";

export interface Database {
  sql: Sql;
  url: string;
  close(): Promise<void>;
}

export interface OpenOptions {
  url: string;
  /** Pool size (default 8: the measured sweet spot on 2 cores). */
  max?: number;
  /** Create the database when it does not exist (default true). */
  create?: boolean;
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Shown in pg_stat_activity (default "flotilla"). */
  applicationName?: string;
}

const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations/", import.meta.url));

/** Opens the pool, creating the database and applying migrations as needed. */
export async function openDatabase(o: OpenOptions): Promise<Database> {
  if (o.create !== false) await ensureDatabase(o.url);
  const sql = createClient(o.url, { max: o.max ?? 8, ...(o.applicationName ? { applicationName: o.applicationName } : {}) });
  try {
    if (o.migrate !== false) await migrate(sql);
    // the first query read the array types; reconnects need not read them again (see driver.ts)
    await sql`SELECT 1`;
    (sql.options as { fetch_types: boolean }).fetch_types = false;
  } catch (e) {
    await sql.end({ timeout: 1 });
    throw e;
  }
  return { sql, url: o.url, close: () => sql.end({ timeout: 5 }) };
}

/** CREATE DATABASE when missing; a concurrent creator winning the race is fine. */
export async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.replace(/^\//, ""));
  if (!name) return;
  u.pathname = "/postgres";
  const admin = createClient(u.toString(), { max: 1, fetchTypes: false, applicationName: "flotilla-admin" });
  try {
    const rows = await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`;
    if (rows.length === 0) {
      try {
        await admin.unsafe(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      } catch (e) {
        // 42P04 duplicate_database (another process won), 23505 unique_violation (same race, catalog level)
        const code = (e as { code?: string }).code;
        if (code !== "42P04" && code !== "23505") throw e;
      }
    }
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/**
 * Applies migrations/*.sql in lexical order, one transaction each, under an advisory
 * lock so that replicas starting together apply each file exactly once. The lock is held by a
 * session of its own (a one-connection client, not `sql.reserve()`: see driver.ts); should that
 * session end, the lock went with it, so the run stops there.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
  const applied: string[] = [];
  let closed = false;
  let opened = false;
  const conn = sibling(sql, { max: 1, fetchTypes: false, applicationName: "flotilla-migrate", onclose: () => void (closed = opened) });
  const same = () => {
    if (closed) throw new Error("migration stopped: its database session (holding the migration lock) was lost");
  };
  try {
    await conn`SELECT pg_advisory_lock(727274)`;
    opened = true;
    await conn`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    same();
    const done = new Set((await conn`SELECT name FROM schema_migrations`).map((r) => r.name as string));
    for (const f of files) {
      if (done.has(f)) continue;
      const text = await readFile(MIGRATIONS_DIR + f, "utf8");
      same();
      // one simple-protocol message: BEGIN ... COMMIT either all runs or (connection lost) none
      await conn.unsafe(`BEGIN;\n${text}\n;INSERT INTO schema_migrations (name) VALUES ('${f}');\nCOMMIT;`);
      applied.push(f);
    }
  } catch (e) {
    if (!closed) await conn.unsafe("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    await conn.end({ timeout: 1 }).catch(() => {}); // ends the session, and the lock with it
  }
  return applied;
}

/**
 * Readiness of the database as seen through `sql`: true when `SELECT 1` answers within
 * `timeoutMs` (default 2 s). Callers at the same time share one probe; a probe that hangs (a
 * network cut leaves a query waiting for TCP to give up) counts as false after the timeout,
 * and the next call sends a new one.
 */
export function databaseProbe(sql: Sql, timeoutMs = 2000): () => Promise<boolean> {
  let current: Promise<boolean> | undefined;
  return () => {
    current ??= new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      sql`SELECT 1`.then(
        () => resolve(true),
        () => resolve(false),
      ).finally(() => clearTimeout(t));
    }).finally(() => {
      current = undefined;
    });
    return current;
  };
}
