import type { LimitHolder } from "@flotilla/api";
import { transaction, type Sql, type TransactionSql } from "./driver.js";

/**
 * Fleet-wide limits on one table (`limit_leases`, migration 013): a row is a holder's lease on
 * a named limit, live until `expires_at` (database clock). Two ways to use it:
 *
 * - `LimitLeases.claim`: a semaphore. A holder claims a slot of a limit of `max` under the
 *   limit's advisory lock, so two claimers never both take the last slot. Its row is the claim's
 *   grace (`graceMs`): the holder has that long to make its claim visible by putting `label=true`
 *   on its object (whose uid is the holder); from then on the object holds the slot, row or not,
 *   for as long as it carries the label and is not being deleted. A claim never written expires
 *   with its grace, so a holder that crashed between claim and write frees its slot by itself.
 * - `LimitLeases.renew` (driven by `FleetShares`): shares. Each replica renews one row per limit
 *   it uses with its demand, and divides the limit with the other live rows
 *   (`rateShare`/`countShare` in @flotilla/api).
 */
export class LimitLeases {
  constructor(private readonly sql: Sql) {}

  /**
   * Claims (or keeps, renewing its grace) a slot of `limit` for `holder` when fewer than `max`
   * other holders have one: the live rows of other holders, and the objects (other than the
   * holder's) carrying `label=true`. A refusal that is plain costs one statement (the count, no
   * lock); otherwise one transaction: the limit's advisory lock, then one statement that counts
   * again, takes the slot when there is one, and deletes the limit's expired rows. `held`: the
   * other holders counted.
   */
  async claim(o: { limit: string; holder: string; max: number; graceMs: number; label?: string }): Promise<{ granted: boolean; held: number }> {
    const label = o.label ?? null;
    // the other holders and whether `holder` has a live row, as `q` (the pool or the transaction) sees them
    const counted = (q: Sql | TransactionSql) => q`
      live AS (
        SELECT holder FROM limit_leases WHERE limit_name = ${o.limit} AND expires_at > now()
      ), held AS (
        SELECT holder FROM live WHERE holder <> ${o.holder}
        UNION
        SELECT o.uid::text FROM objects o
        WHERE ${label}::text IS NOT NULL AND o.labels @> jsonb_build_object(${label}::text, 'true') AND NOT o.deleting AND o.uid::text <> ${o.holder}
      )`;
    const [pre] = await this.sql<{ held: number; mine: boolean }[]>`
      WITH ${counted(this.sql)} SELECT (SELECT count(*) FROM held)::int AS held, EXISTS (SELECT 1 FROM live WHERE holder = ${o.holder}) AS mine`;
    if (!pre!.mine && pre!.held >= o.max) return { granted: false, held: pre!.held };
    return transaction(this.sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${"flotilla-limit:" + o.limit}, 0))`;
      const [r] = await tx<{ held: number; granted: boolean }[]>`
        WITH ${counted(tx)}, mine AS (
          INSERT INTO limit_leases AS l (limit_name, holder, expires_at)
          SELECT ${o.limit}, ${o.holder}, now() + make_interval(secs => ${Math.max(1, Math.round(o.graceMs))}::float8 / 1000.0)
          WHERE EXISTS (SELECT 1 FROM live WHERE holder = ${o.holder}) OR (SELECT count(*) FROM held) < ${o.max}
          ON CONFLICT (limit_name, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at, acquired_at = CASE WHEN l.expires_at > now() THEN l.acquired_at ELSE now() END
          RETURNING 1
        ), swept AS (
          DELETE FROM limit_leases WHERE limit_name = ${o.limit} AND holder <> ${o.holder} AND expires_at <= now()
        )
        SELECT (SELECT count(*) FROM held)::int AS held, EXISTS (SELECT 1 FROM mine) AS granted`;
      return { granted: r!.granted, held: r!.held };
    });
  }

  /** Gives back the holders' rows of `limit` (a slot held by a label goes when the label does). */
  async release(limit: string, holders: readonly string[]): Promise<void> {
    if (!holders.length) return;
    await this.sql`DELETE FROM limit_leases WHERE limit_name = ${limit} AND holder = ANY(${[...new Set(holders)]}::text[])`;
  }

  /**
   * Renews `holder`'s rows of the limits (their demand and what it holds open) for `ttlMs`,
   * gives back its rows of `drop`, deletes rows expired for a minute (any holder's), and returns
   * the live rows of the renewed limits. One statement.
   */
  async renew(o: { holder: string; ttlMs: number; leases: readonly { limit: string; demand: number; used: number }[]; drop?: readonly string[] }): Promise<Map<string, LimitHolder[]>> {
    const names = o.leases.map((l) => l.limit);
    const rows = await this.sql<{ limit_name: string; holder: string; demand: number; used: number }[]>`
      WITH mine AS (
        INSERT INTO limit_leases AS l (limit_name, holder, expires_at, demand, used)
        SELECT n, ${o.holder}, now() + make_interval(secs => ${Math.max(1, Math.round(o.ttlMs))}::float8 / 1000.0), d, u
        FROM unnest(${names}::text[], ${o.leases.map((l) => l.demand)}::float8[], ${o.leases.map((l) => l.used)}::float8[]) AS t(n, d, u)
        ON CONFLICT (limit_name, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at, demand = EXCLUDED.demand, used = EXCLUDED.used,
          acquired_at = CASE WHEN l.expires_at > now() THEN l.acquired_at ELSE now() END
        RETURNING limit_name, holder, demand, used
      ), dropped AS (
        DELETE FROM limit_leases WHERE holder = ${o.holder} AND limit_name = ANY(${[...(o.drop ?? [])]}::text[])
      ), swept AS (
        DELETE FROM limit_leases WHERE expires_at < now() - interval '1 minute'
      )
      SELECT limit_name, holder, demand, used FROM limit_leases
      WHERE limit_name = ANY(${names}::text[]) AND holder <> ${o.holder} AND expires_at > now()
      UNION ALL SELECT limit_name, holder, demand, used FROM mine`;
    const out = new Map<string, LimitHolder[]>(names.map((n) => [n, []]));
    for (const r of rows) out.get(r.limit_name)?.push({ holder: r.holder, demand: r.demand, used: r.used });
    return out;
  }
}

export interface FleetSharesOptions {
  sql: Sql;
  /** This replica's name, unique among the live replicas of the service. */
  holder: string;
  /** Time between two renewals (default 2 s). */
  renewMs?: number;
  /** A row not renewed for this long is dead (default three renewals). */
  ttlMs?: number;
  /** A limit not used for this long is given back (default 30 s). */
  idleMs?: number;
  /** A renewal failed (the shares of the last one stay in force). */
  onError?: (err: unknown) => void;
  /** Monotonic milliseconds (tests may pass their own). */
  clock?: () => number;
}

interface Tracked {
  /** Asks since the last renewal. */
  asked: number;
  lastUsed: number;
  /** The other holders' rows as of the last renewal that included this limit (undefined: none yet). */
  others?: LimitHolder[];
  /** What this replica reported at that renewal. */
  mine?: LimitHolder;
  ready?: Promise<void>;
  resolve?: () => void;
}

/**
 * This replica's shares of fleet-wide limits (eviction rates, per-user request rates and watch
 * caps), by lease: every `renewMs` one statement (`LimitLeases.renew`) renews this replica's row
 * of every limit it used lately, with its demand (asks per second over the period, plus what
 * waits or is held open now), and reads the other live rows; the caller divides the limit with
 * `rateShare`/`countShare` (@flotilla/api) from that snapshot, so a grant costs no statement.
 * A limit first used here is renewed at once (its first grants wait for that), and a limit not
 * used for `idleMs` is given back. A renewal that fails leaves the last shares in force; a
 * replica that dies leaves its rows to expire after `ttlMs`, its share unused until then.
 */
export class FleetShares {
  private readonly leases: LimitLeases;
  private readonly tracked = new Map<string, Tracked>();
  private readonly dropped = new Set<string>();
  private readonly readers = new Map<string, () => { waiting?: number; held?: number }>();
  private readonly renewMs: number;
  private readonly ttlMs: number;
  private readonly idleMs: number;
  private readonly clock: () => number;
  private timer?: NodeJS.Timeout;
  private soon?: NodeJS.Timeout;
  private again?: NodeJS.Timeout;
  private running?: Promise<void>;
  private lastRound: number;
  private stopped = false;
  readonly stats = { rounds: 0, failedRounds: 0 };

  constructor(private readonly o: FleetSharesOptions) {
    this.leases = new LimitLeases(o.sql);
    this.renewMs = o.renewMs ?? 2000;
    this.ttlMs = o.ttlMs ?? 3 * this.renewMs;
    this.idleMs = o.idleMs ?? 30_000;
    this.clock = o.clock ?? (() => performance.now());
    this.lastRound = this.clock();
  }

  get holder(): string {
    return this.o.holder;
  }

  /** Renews every `renewMs` from now on (limits used before start are renewed at once). */
  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => void this.round(), this.renewMs);
    this.timer.unref();
    if (this.tracked.size) this.nudge();
  }

  /** Stops renewing and gives this replica's rows back. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.soon);
    clearTimeout(this.again);
    await this.running?.catch(() => undefined);
    const mine = [...this.tracked.keys()];
    this.tracked.clear();
    if (mine.length) await this.leases.renew({ holder: this.o.holder, ttlMs: this.ttlMs, leases: [], drop: mine }).catch(() => undefined);
  }

  private track(limit: string): Tracked {
    let t = this.tracked.get(limit);
    if (!t) {
      t = { asked: 0, lastUsed: this.clock() };
      t.ready = new Promise<void>((resolve) => (t!.resolve = resolve));
      this.tracked.set(limit, t);
      this.dropped.delete(limit);
      this.nudge();
    }
    t.lastUsed = this.clock();
    return t;
  }

  /** Counts `n` asks of `limit` here (requests, evictions; granted or refused). */
  ask(limit: string, n = 1): void {
    this.track(limit).asked += n;
  }

  /** What waits for `limit` or is held open under it here now, read at each renewal (registering it does not use the limit). */
  levels(limit: string, read: () => { waiting?: number; held?: number }): void {
    this.readers.set(limit, read);
  }

  /**
   * Resolves once `limit` was renewed here (at once when it was already), or after `timeoutMs`
   * (default 1 s: Postgres slow or away) with what there is, so a caller is never held up longer.
   */
  ready(limit: string, timeoutMs = 1000): Promise<void> {
    const t = this.track(limit);
    if (t.others !== undefined) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([t.ready!, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]).finally(() => clearTimeout(timer));
  }

  /** Whether `limit` has a snapshot of the fleet yet. */
  known(limit: string): boolean {
    return this.tracked.get(limit)?.others !== undefined;
  }

  /**
   * The fleet's other holders of `limit` and this replica's own numbers, as of the last renewal
   * (none yet: alone), for rateShare/countShare.
   */
  snapshot(limit: string): { me: LimitHolder; others: LimitHolder[] } {
    const t = this.track(limit);
    return { me: t.mine ?? { holder: this.o.holder, demand: 0, used: 0 }, others: t.others ?? [] };
  }

  /** Asks for a renewal within a few milliseconds (a limit newly used here). */
  nudge(): void {
    if (this.stopped || this.soon || !this.timer) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.round();
    }, 5);
  }

  /** One renewal of every limit used lately (and the give-back of those idle). */
  async round(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.renew().finally(() => (this.running = undefined));
    return this.running;
  }

  private async renew(): Promise<void> {
    const now = this.clock();
    // per second over the period, counted as at least one renewal long (an early renewal does not inflate it)
    const seconds = Math.max(this.renewMs, now - this.lastRound) / 1000;
    const rows: { limit: string; demand: number; used: number }[] = [];
    const asked = new Map<string, number>();
    for (const [limit, t] of this.tracked) {
      const l = this.readers.get(limit)?.() ?? {};
      if (now - t.lastUsed > this.idleMs && !(l.held ?? 0) && !(l.waiting ?? 0)) {
        this.tracked.delete(limit);
        this.readers.delete(limit);
        this.dropped.add(limit);
        continue;
      }
      asked.set(limit, t.asked);
      rows.push({ limit, demand: t.asked / seconds + (l.waiting ?? 0) + (l.held ?? 0), used: l.held ?? 0 });
    }
    const drop = [...this.dropped];
    if (!rows.length && !drop.length) return;
    this.stats.rounds++;
    try {
      const got = await this.leases.renew({ holder: this.o.holder, ttlMs: this.ttlMs, leases: rows, drop });
      this.lastRound = now;
      for (const l of drop) this.dropped.delete(l);
      let first = false;
      for (const r of rows) {
        const t = this.tracked.get(r.limit);
        if (!t) continue;
        first ||= t.others === undefined;
        t.asked -= asked.get(r.limit) ?? 0;
        const all = got.get(r.limit) ?? [];
        t.others = all.filter((h) => h.holder !== this.o.holder);
        t.mine = { holder: this.o.holder, demand: r.demand, used: r.used };
        t.resolve?.();
        t.resolve = undefined;
      }
      // replicas that start on a limit together each saw only those before them: look again soon
      if (first && !this.stopped) {
        clearTimeout(this.again);
        this.again = setTimeout(() => void this.round(), Math.max(5, Math.round(this.renewMs / 8)));
        this.again.unref();
      }
    } catch (e) {
      this.stats.failedRounds++;
      this.o.onError?.(e);
      // those waiting for a first snapshot go ahead on what they have (alone)
      for (const r of rows) {
        const t = this.tracked.get(r.limit);
        t?.resolve?.();
        if (t) t.resolve = undefined;
      }
    }
  }
}
