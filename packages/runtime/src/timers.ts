import { Batcher, type Sql } from "@flotilla/store";

/**
 * Durable "come back after" timers of one controller: rows in `timers`, so they survive
 * restarts and are shared by replicas. Due rows are claimed by moving their due time a
 * lease ahead (FOR UPDATE SKIP LOCKED: a replica never claims a row another is claiming),
 * so a replica that dies before reconciling the key leaves a timer that fires again.
 * The reconcile's outcome then replaces it (after) or deletes it (done).
 */
export class DurableTimers {
  /**
   * Keys this instance set a timer for or claimed one of: only these can have a row to delete
   * when their reconcile is done. A row it does not know of (set by another replica, or before a
   * restart) fires once more and its reconcile, finding nothing to do, deletes it.
   */
  private readonly armed = new Set<string>();
  private readonly setter: Batcher<{ key: string; ms: number }, void>;
  private readonly clearer: Batcher<string, void>;

  constructor(
    private readonly sql: Sql,
    readonly controller: string,
    private readonly leaseMs: number,
  ) {
    // sets and deletes of many keys at about the same time share a statement
    this.setter = new Batcher(
      async (items) => {
        // one row per key in a statement (the last one wins)
        const byKey = new Map(items.map((t) => [t.key, Math.max(0, Math.ceil(t.ms))]));
        await this.sql`
          INSERT INTO timers (controller, key, due_at)
          SELECT ${this.controller}, k, now() + make_interval(secs => ms / 1000.0)
          FROM unnest(${[...byKey.keys()]}::text[], ${[...byKey.values()]}::float8[]) AS t(k, ms)
          ON CONFLICT (controller, key) DO UPDATE SET due_at = EXCLUDED.due_at`;
        return items.map(() => undefined);
      },
      { maxBatch: 1000, maxInFlight: 1 },
    );
    this.clearer = new Batcher(
      async (keys) => {
        await this.sql`DELETE FROM timers WHERE controller = ${this.controller} AND key = ANY(${[...new Set(keys)]}::text[])`;
        return keys.map(() => undefined);
      },
      { maxBatch: 1000, maxInFlight: 1 },
    );
  }

  /** Sets the key's timer to fire `ms` from now (database clock), replacing any earlier one. */
  async set(key: string, ms: number): Promise<void> {
    this.armed.add(key);
    await this.setter.submit({ key, ms });
  }

  /** Deletes the key's timer, if this instance knows of one (see `armed`); `force` deletes whatever is there. */
  async clear(key: string, o: { force?: boolean } = {}): Promise<void> {
    if (!o.force && !this.armed.has(key)) return;
    await this.clearer.submit(key);
    this.armed.delete(key);
  }

  /**
   * Claims up to `limit` due timers and reports how long until the next one not yet due
   * (null when there is none), in one round trip.
   */
  async claimDue(limit = 1000): Promise<{ keys: string[]; nextMs: number | null }> {
    const rows = await this.sql<{ key: string | null; next_ms: number | null }[]>`
      WITH due AS (
        SELECT key FROM timers
        WHERE controller = ${this.controller} AND due_at <= now()
        ORDER BY due_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE timers t SET due_at = now() + ${`${this.leaseMs} milliseconds`}::interval
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
      if (r.key !== null) {
        keys.push(r.key);
        this.armed.add(r.key);
      }
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
