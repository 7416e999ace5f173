import { transaction } from "./driver.js";
import type { Sql } from "./driver.js";

/**
 * The outbox table's queries (schema: migrations 001, 002, 006, 008): the relay reads unpublished
 * rows and marks them published; the active relay prunes published history.
 */

/** The columns of an unpublished outbox row the relay needs (never the object body). */
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

/** Unpublished rows in id order. */
export async function fetchUnpublished(sql: Sql, limit = 1000): Promise<OutboxRow[]> {
  return sql<OutboxRow[]>`
    SELECT id::text, rv::text, gk, namespace, name, uid::text, type, object->>'apiVersion' AS api_version,
           object->'metadata'->>'generation' AS generation, index_keys, trace_context
    FROM outbox WHERE published_at IS NULL ORDER BY outbox.id LIMIT ${limit}`;
}

/** This database's outbox epoch: the prefix that keeps a new database's ids from passing for an old one's. */
export async function readEpoch(sql: Sql): Promise<string> {
  const [r] = await sql<{ epoch: string }[]>`SELECT epoch FROM outbox_watermark`;
  return r?.epoch ?? "";
}

export async function markPublished(sql: Sql, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const res = await sql`UPDATE outbox SET published_at = now() WHERE id = ANY(${ids as string[]}::bigint[]) AND published_at IS NULL`;
  return res.count;
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
    const [{ max }] = await tx<{ max: string | null }[]>`
      SELECT max(rv)::text AS max
      FROM outbox
      WHERE published_at IS NOT NULL
        AND created_at < now() - ${`${Math.max(0, Math.floor(o.retentionMs))} milliseconds`}::interval
        ${keepMin > 0 ? tx`AND id <= (SELECT id FROM outbox ORDER BY id DESC OFFSET ${keepMin} LIMIT 1)` : tx``}
        -- never a row a watch may not have been shown yet (a long transaction anywhere holds them back)
        AND rv < pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;
    if (!max) return 0;
    const res = await tx`DELETE FROM outbox WHERE rv <= ${max}::bigint AND published_at IS NOT NULL`;
    await tx`UPDATE outbox_watermark SET pruned_rv = greatest(pruned_rv, ${max}::bigint)`;
    return res.count;
  })) as number;
}
