import { Batcher, TimerRows, claimDueTimers, type Sql } from "@flotilla/store";

interface ClaimAsk {
  controller: string;
  leaseMs: number;
  limit: number;
}
type Claimed = { keys: string[]; nextMs: number | null };

/**
 * The claims of every controller on one pool that poll at the same moment go out in one statement
 * (controller.ts aligns the pollers' waits to the same instants). A controller named twice in one
 * batch (replicas simulated in one process) claims in a statement of its own, as alone.
 */
const claimers = new WeakMap<Sql, Batcher<ClaimAsk, Claimed>>();
function claimerFor(sql: Sql): Batcher<ClaimAsk, Claimed> {
  let b = claimers.get(sql);
  if (!b) {
    b = new Batcher<ClaimAsk, Claimed>(
      async (asks) => {
        const out: Claimed[] = new Array<Claimed>(asks.length);
        let rest = asks.map((a, i) => ({ a, i }));
        while (rest.length > 0) {
          const names = new Set<string>();
          const now: typeof rest = [];
          const later: typeof rest = [];
          for (const x of rest) {
            if (names.has(x.a.controller)) later.push(x);
            else {
              names.add(x.a.controller);
              now.push(x);
            }
          }
          rest = later;
          const limit = Math.max(...now.map(({ a }) => a.limit));
          const got = await claimDueTimers(sql, now.map(({ a }) => a), limit);
          now.forEach(({ i }, j) => (out[i] = got[j]!));
        }
        return out;
      },
      { maxBatch: 200, maxInFlight: 1 },
    );
    claimers.set(sql, b);
  }
  return b;
}

/**
 * Durable "come back after" timers of one controller: rows in `timers` (see `TimerRows`), so
 * they survive restarts and are shared by replicas. Due rows are claimed by moving their due time
 * a lease ahead (a replica never claims a row another is claiming), so a replica that dies before
 * reconciling the key leaves a timer that fires again. The reconcile's outcome then replaces it
 * (after) or deletes it (done).
 */
export class DurableTimers {
  /**
   * Keys this instance set a timer for or claimed one of: only these can have a row to delete
   * when their reconcile is done. A row it does not know of (set by another replica, or before a
   * restart) fires once more and its reconcile, finding nothing to do, deletes it.
   */
  private readonly armed = new Set<string>();
  private readonly rows: TimerRows;
  private readonly setter: Batcher<{ key: string; ms: number }, void>;
  private readonly clearer: Batcher<string, void>;

  constructor(
    private readonly sql: Sql,
    readonly controller: string,
    private readonly leaseMs: number,
  ) {
    this.rows = new TimerRows(sql, controller);
    // sets and deletes of many keys at about the same time share a statement
    this.setter = new Batcher(
      async (items) => {
        // one row per key in a statement (the last one wins)
        await this.rows.set(new Map(items.map((t) => [t.key, t.ms])));
        return items.map(() => undefined);
      },
      { maxBatch: 1000, maxInFlight: 1 },
    );
    this.clearer = new Batcher(
      async (keys) => {
        await this.rows.delete(keys);
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

  /** Sets the key's timer for its next retry in a row (see `TimerRows.retry`); returns the wait chosen. */
  async retry(key: string, baseMs: number, maxMs: number): Promise<number> {
    this.armed.add(key);
    return (await this.rows.retry(key, baseMs, maxMs)).ms;
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
    const due = await claimerFor(this.sql).submit({ controller: this.controller, leaseMs: this.leaseMs, limit });
    for (const k of due.keys) this.armed.add(k);
    return due;
  }

  /** Milliseconds until the key's timer is due (negative when overdue), or null when it has none. */
  dueInMs(key: string): Promise<number | null> {
    return this.rows.dueInMs(key);
  }
}
