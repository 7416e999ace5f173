import { transaction } from "./driver.js";
import type { Sql } from "./driver.js";

/**
 * The outbox table's queries (schema: migrations 001, 002, 006, 008, 014): the relay reads the
 * rows after its cursor and moves the cursor past what it published; the active relay prunes
 * published history.
 */

/** The columns of an outbox row the relay needs (never the object body). */
export interface OutboxRow {
  id: string;
  rv: string;
  gk: string;
  namespace: string;
  name: string;
  uid: string;
  type: string;
  api_version: string | null;
  generation: string | null;
  index_keys: string[] | null;
  /** W3C traceparent of the write. */
  trace_context?: string | null;
}

/** A place in the outbox's (rv, id) order. */
export interface OutboxPosition {
  rv: string;
  id: string;
}

/**
 * Outbox rows `o` after the relay's cursor. The cursor is read as scalars (init plans), so the
 * range is an index condition on outbox_rv: joined with outbox_watermark, every row below the
 * xmin was scanned and filtered, a cost that grew with the retained outbox.
 */
function afterCursor(sql: Sql) {
  return sql`(o.rv, o.id) > ((SELECT published_rv FROM outbox_watermark), (SELECT published_id FROM outbox_watermark))`;
}

/**
 * The rows after the relay's cursor in (rv, id) order, only those below the snapshot's xmin:
 * every transaction that could still add a row before them has ended, so the cursor never passes
 * a row that commits later.
 */
export async function fetchUnpublished(sql: Sql, limit = 1000): Promise<OutboxRow[]> {
  return sql<OutboxRow[]>`
    SELECT o.id::text, o.rv::text, o.gk, o.namespace, o.name, o.uid::text, o.type, o.object->>'apiVersion' AS api_version,
           o.object->'metadata'->>'generation' AS generation, o.index_keys, o.trace_context
    FROM outbox o
    WHERE ${afterCursor(sql)}
      AND o.rv < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
    ORDER BY o.rv, o.id LIMIT ${limit}`;
}

/** How many rows the relay has still to publish (committed ones, after its cursor). */
export async function unpublishedCount(sql: Sql): Promise<number> {
  const [{ n }] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outbox o WHERE ${afterCursor(sql)}`;
  return n;
}

/** This database's outbox epoch: the prefix that keeps a new database's ids from passing for an old one's. */
export async function readEpoch(sql: Sql): Promise<string> {
  const [r] = await sql<{ epoch: string }[]>`SELECT epoch FROM outbox_watermark`;
  return r?.epoch ?? "";
}

/**
 * The rows of `rows` (in the order fetchUnpublished gave them) up to the first one not in
 * `published`: how far the cursor may move (undefined: not at all).
 */
export function publishedPrefix(rows: readonly OutboxRow[], published: readonly string[]): OutboxPosition | undefined {
  const done = new Set(published);
  let last: OutboxRow | undefined;
  for (const r of rows) {
    if (!done.has(r.id)) break;
    last = r;
  }
  return last && { rv: last.rv, id: last.id };
}

/** Moves the relay's cursor to `upTo` (never back). One row write, however many rows it passes. */
export async function markPublished(sql: Sql, upTo: OutboxPosition | undefined): Promise<void> {
  if (!upTo) return;
  await sql`
    UPDATE outbox_watermark SET published_rv = ${upTo.rv}::bigint, published_id = ${upTo.id}::bigint
    WHERE (published_rv, published_id) < (${upTo.rv}::bigint, ${upTo.id}::bigint)`;
}

export interface PruneOptions {
  /** Published rows written longer ago than this go. */
  retentionMs: number;
  /** The newest rows kept regardless of age (default 0). */
  keepMin?: number;
}

/**
 * Deletes published rows written longer ago than the retention, always keeping the newest
 * `keepMin` rows, and raises `outbox_watermark.pruned_rv`, so that a watch asking to resume from a
 * pruned resourceVersion is told it is gone. Never a row a watch may not have been shown yet, so
 * the watermark stays below every new list's resourceVersion.
 */
export async function pruneOutbox(sql: Sql, o: PruneOptions): Promise<number> {
  const keepMin = Math.max(0, Math.floor(o.keepMin ?? 0));
  return (await transaction(sql, async (tx) => {
    // published: at or before the relay's cursor; whole resourceVersions only (the cursor may
    // stand inside one), so the watermark says exactly which resourceVersions are gone
    const [{ max }] = await tx<{ max: string | null }[]>`
      SELECT max(o.rv)::text AS max
      FROM outbox o
      WHERE o.rv < (SELECT published_rv + CASE WHEN published_id = 9223372036854775807 THEN 1 ELSE 0 END FROM outbox_watermark)
        AND o.created_at < now() - ${`${Math.max(0, Math.floor(o.retentionMs))} milliseconds`}::interval
        ${keepMin > 0 ? tx`AND o.id <= (SELECT id FROM outbox ORDER BY id DESC OFFSET ${keepMin} LIMIT 1)` : tx``}
        -- never a row a watch may not have been shown yet (a long transaction anywhere holds them back)
        AND o.rv < pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;
    if (!max) return 0;
    const res = await tx`DELETE FROM outbox WHERE rv <= ${max}::bigint`;
    await tx`UPDATE outbox_watermark SET pruned_rv = greatest(pruned_rv, ${max}::bigint)`;
    return res.count;
  })) as number;
}
