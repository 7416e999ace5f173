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

  /** Milliseconds until the key's timer is due (negative when overdue), or null when it has none. */
  async dueInMs(key: string): Promise<number | null> {
    const [r] = await this.sql<{ ms: number }[]>`
      SELECT (EXTRACT(EPOCH FROM due_at - now()) * 1000)::float8 AS ms FROM timers WHERE controller = ${this.controller} AND key = ${key}`;
    return r ? r.ms : null;
  }
}

/**
 * Claims, per controller (each at most once in `asks`), up to `limit` due timers by moving their
 * due time its `leaseMs` ahead (FOR UPDATE SKIP LOCKED: never a row another session is claiming),
 * and reports how long until its next timer not yet due (null when there is none): in the order
 * asked, in one round trip for all (the timer pollers of one process poll at the same moments).
 */
export async function claimDueTimers(sql: Sql, asks: readonly { controller: string; leaseMs: number }[], limit: number): Promise<{ keys: string[]; nextMs: number | null }[]> {
  const rows = await sql<{ controller: string; key: string | null; next_ms: number | null }[]>`
    WITH c AS (
      SELECT * FROM unnest(${asks.map((a) => a.controller)}::text[], ${asks.map((a) => Math.max(0, Math.ceil(a.leaseMs)))}::float8[]) AS c(controller, lease_ms)
    ), due AS (
      SELECT d.controller, d.key FROM c CROSS JOIN LATERAL (
        SELECT t.controller, t.key FROM timers t
        WHERE t.controller = c.controller AND t.due_at <= now()
        ORDER BY t.due_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) d
    ), claimed AS (
      UPDATE timers t SET due_at = now() + make_interval(secs => c.lease_ms / 1000.0)
      FROM due JOIN c ON c.controller = due.controller
      WHERE t.controller = due.controller AND t.key = due.key
      RETURNING t.controller, t.key
    )
    SELECT controller, key, NULL::float8 AS next_ms FROM claimed
    UNION ALL
    SELECT c.controller, NULL, (SELECT (EXTRACT(EPOCH FROM min(due_at) - now()) * 1000)::float8 FROM timers WHERE controller = c.controller AND due_at > now())
    FROM c`;
  const out = new Map(asks.map((a) => [a.controller, { keys: [] as string[], nextMs: null as number | null }]));
  for (const r of rows) {
    const o = out.get(r.controller);
    if (!o) continue;
    if (r.key !== null) o.keys.push(r.key);
    else if (r.next_ms !== null) o.nextMs = r.next_ms;
  }
  return asks.map((a) => out.get(a.controller)!);
}
