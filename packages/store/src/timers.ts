import type { Sql } from "./driver.js";

/**
 * The `timers` table's queries (schema: migration 001): durable "come back after" timers, one row
 * per (controller, key), due times on the database clock.
 */
export class TimerRows {
  constructor(
    private readonly sql: Sql,
    readonly controller: string,
  ) {}

  /** Sets each key's timer `ms` from now, replacing any earlier one (and ending its run of retries). */
  async set(dueInMs: ReadonlyMap<string, number>): Promise<void> {
    if (dueInMs.size === 0) return;
    const ms = [...dueInMs.values()].map((v) => Math.max(0, Math.ceil(v)));
    await this.sql`
      INSERT INTO timers (controller, key, due_at)
      SELECT ${this.controller}, k, now() + make_interval(secs => ms / 1000.0)
      FROM unnest(${[...dueInMs.keys()]}::text[], ${ms}::float8[]) AS t(k, ms)
      ON CONFLICT (controller, key) DO UPDATE SET due_at = EXCLUDED.due_at, retries = 0`;
  }

  /**
   * Sets the key's timer for its next retry in a row: `baseMs` for the first, doubling with each
   * one after, at most `maxMs`; the count is kept in the row. Returns the wait chosen.
   */
  async retry(key: string, baseMs: number, maxMs: number): Promise<{ ms: number; retries: number }> {
    const base = Math.max(1, Math.ceil(baseMs));
    const max = Math.max(base, Math.ceil(maxMs));
    const [r] = await this.sql<{ ms: number; retries: number }[]>`
      WITH next AS (
        SELECT coalesce((SELECT retries FROM timers WHERE controller = ${this.controller} AND key = ${key}), 0) + 1 AS retries
      ), wait AS (
        SELECT retries, least(${max}::float8, ${base}::float8 * power(2, least(retries - 1, 40))) AS ms FROM next
      )
      INSERT INTO timers AS t (controller, key, due_at, retries)
      SELECT ${this.controller}, ${key}, now() + make_interval(secs => ms / 1000.0), retries FROM wait
      ON CONFLICT (controller, key) DO UPDATE SET due_at = EXCLUDED.due_at, retries = EXCLUDED.retries
      RETURNING retries, (SELECT ms FROM wait) AS ms`;
    return { ms: r!.ms, retries: r!.retries };
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.sql`DELETE FROM timers WHERE controller = ${this.controller} AND key = ANY(${[...new Set(keys)]}::text[])`;
  }

  /**
   * Claims up to `limit` due timers by moving their due time `leaseMs` ahead (FOR UPDATE SKIP
   * LOCKED: never a row another session is claiming), and reports how long until the next one not
   * yet due (null when there is none), in one round trip.
   */
  async claimDue(leaseMs: number, limit: number): Promise<{ keys: string[]; nextMs: number | null }> {
    const rows = await this.sql<{ key: string | null; next_ms: number | null }[]>`
      WITH due AS (
        SELECT key FROM timers
        WHERE controller = ${this.controller} AND due_at <= now()
        ORDER BY due_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE timers t SET due_at = now() + ${`${leaseMs} milliseconds`}::interval
        FROM due WHERE t.controller = ${this.controller} AND t.key = due.key
        RETURNING t.key
      )
      SELECT key, NULL::float8 AS next_ms FROM claimed
      UNION ALL
      SELECT NULL, (EXTRACT(EPOCH FROM min(due_at) - now()) * 1000)::float8
      FROM timers WHERE controller = ${this.controller} AND due_at > now()`;
    const keys: string[] = [];
    let nextMs: number | null = null;
    for (const r of rows) {
      if (r.key !== null) keys.push(r.key);
      else if (r.next_ms !== null) nextMs = r.next_ms;
    }
    return { keys, nextMs };
  }

  /** Milliseconds until the key's timer is due (negative when overdue), or null when it has none. */
  async dueInMs(key: string): Promise<number | null> {
    const [r] = await this.sql<{ ms: number }[]>`
      SELECT (EXTRACT(EPOCH FROM due_at - now()) * 1000)::float8 AS ms FROM timers WHERE controller = ${this.controller} AND key = ${key}`;
    return r ? r.ms : null;
  }
}
