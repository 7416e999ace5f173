import type { LimitHolder } from "@flotilla/api";
import { transaction, type Sql } from "./driver.js";

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
   * holder's) carrying `label=true`. One transaction: the limit's advisory lock, then one
   * statement (which also deletes the limit's expired rows). `held`: the other holders counted.
   */
  async claim(o: { limit: string; holder: string; max: number; graceMs: number; label?: string }): Promise<{ granted: boolean; held: number }> {
    const label = o.label ?? null;
    return transaction(this.sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${"flotilla-limit:" + o.limit}, 0))`;
      const [r] = await tx<{ held: number; granted: boolean }[]>`
        WITH live AS (
          SELECT holder FROM limit_leases WHERE limit_name = ${o.limit} AND expires_at > now()
        ), held AS (
          SELECT holder FROM live WHERE holder <> ${o.holder}
          UNION
          SELECT o.uid::text FROM objects o
          WHERE ${label}::text IS NOT NULL AND o.labels @> jsonb_build_object(${label}::text, 'true') AND NOT o.deleting AND o.uid::text <> ${o.holder}
        ), mine AS (
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
