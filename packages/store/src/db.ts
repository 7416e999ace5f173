import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import postgres from "postgres";

export type Sql = postgres.Sql;
/** The pool or a transaction: anything that runs a query. */
export type Queryable = postgres.ISql;

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
}

const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations/", import.meta.url));

/** Opens the pool, creating the database and applying migrations as needed. */
export async function openDatabase(o: OpenOptions): Promise<Database> {
  if (o.create !== false) await ensureDatabase(o.url);
  const sql = postgres(o.url, {
    max: o.max ?? 8,
    onnotice: () => {},
    connection: { application_name: "flotilla" },
  });
  try {
    if (o.migrate !== false) await migrate(sql);
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
  const admin = postgres(u.toString(), { max: 1, onnotice: () => {} });
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
 * lock so that replicas starting together apply each file exactly once.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
  const applied: string[] = [];
  await sql.reserve().then(async (conn) => {
    try {
      await conn`SELECT pg_advisory_lock(727274)`;
      await conn`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
      const done = new Set((await conn`SELECT name FROM schema_migrations`).map((r) => r.name as string));
      for (const f of files) {
        if (done.has(f)) continue;
        const text = await readFile(MIGRATIONS_DIR + f, "utf8");
        await conn.unsafe(`BEGIN;\n${text}\n;INSERT INTO schema_migrations (name) VALUES ('${f}');\nCOMMIT;`);
        applied.push(f);
      }
    } catch (e) {
      await conn.unsafe("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      await conn`SELECT pg_advisory_unlock(727274)`.catch(() => {});
      conn.release();
    }
  });
  return applied;
}
