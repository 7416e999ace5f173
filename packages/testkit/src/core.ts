import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { openDatabase, type Database, type Sql } from "@flotilla/store";

export const PG_URL = process.env.DATABASE_URL_ADMIN ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** A short random suffix for per-test databases, streams and subjects. */
export function uniqueName(prefix = "t"): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`;
}

export interface TestDatabase extends Database {
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A new, migrated database of its own, so tests never touch a running stack or each other. */
export async function freshDatabase(opts: { max?: number } = {}): Promise<TestDatabase> {
  const name = uniqueName("flotilla_test");
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  const db = await openDatabase({ url: u.toString(), max: opts.max });
  return {
    ...db,
    name,
    async drop() {
      await db.close();
      const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end({ timeout: 1 });
      }
    },
  };
}

/** Polls `check` until it returns a truthy value (returned) or the time runs out (throws the last error). */
export async function eventually<T>(check: () => T | Promise<T>, opts: { timeoutMs?: number; intervalMs?: number; message?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
      last = new Error(opts.message ?? "condition not met");
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const err = last instanceof Error ? last : new Error(String(last));
      err.message = `eventually timed out after ${opts.timeoutMs ?? 10_000} ms: ${err.message}`;
      throw err;
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Makes every outbox row so far published and an hour old, so that pruning (retention under an
 * hour) takes it: the tests of what a pruned history answers.
 */
export async function ageOutbox(sql: Sql): Promise<void> {
  await sql`UPDATE outbox SET created_at = now() - interval '1 hour'`;
  await sql`UPDATE outbox_watermark SET published_rv = (SELECT coalesce(max(rv), 0) FROM outbox), published_id = 9223372036854775807`;
}
