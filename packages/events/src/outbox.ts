import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { WakeUp } from "@flotilla/api";
import { apiVersionFor, splitGroupKind, subjectFor } from "./subjects.js";

export type Sql = postgres.Sql;

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
}

/** Unpublished rows in id order. */
export async function fetchUnpublished(sql: Sql, limit = 1000): Promise<OutboxRow[]> {
  return sql<OutboxRow[]>`
    SELECT id::text, rv::text, gk, namespace, name, uid::text, type, object->>'apiVersion' AS api_version,
           object->'metadata'->>'generation' AS generation, index_keys
    FROM outbox WHERE published_at IS NULL ORDER BY outbox.id LIMIT ${limit}`;
}

export async function markPublished(sql: Sql, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const res = await sql`UPDATE outbox SET published_at = now() WHERE id = ANY(${ids as string[]}::bigint[]) AND published_at IS NULL`;
  return res.count;
}

/** The wake-up message of one outbox row. */
export function toWakeUp(r: OutboxRow): WakeUp {
  return {
    id: r.id,
    apiVersion: apiVersionFor(r.gk, r.api_version),
    kind: splitGroupKind(r.gk).kind,
    namespace: r.namespace,
    name: r.name,
    uid: r.uid,
    resourceVersion: r.rv,
    type: r.type,
    ...(r.generation ? { generation: r.generation } : {}),
    ...(r.index_keys ? { indexKeys: r.index_keys } : {}),
  };
}

export interface PublishOptions {
  prefix: string;
  /** The stream the subjects must land in (checked by the server). */
  stream: string;
  /** Publishes in flight at once; each window is awaited before the next (default 1000). */
  window?: number;
  /** PubAck timeout per message (default 5 s). */
  timeoutMs?: number;
  /** Send the first row alone before windowing (after a failure: don't queue a window into a dead connection). */
  probe?: boolean;
}

export interface PublishResult {
  /** Ids the stream acknowledged (stored now or earlier: duplicates included), in id order. */
  published: string[];
  duplicates: number;
  /** The first failure; rows after it were not attempted. */
  error?: unknown;
}

const enc = new TextEncoder();

/**
 * Publishes rows in id order with msgID = row id, in windows of in-flight publishes on one
 * connection (so the stream keeps the order). Stops at the first window with a failure.
 */
export async function publishRows(js: JetStreamClient, rows: readonly OutboxRow[], o: PublishOptions): Promise<PublishResult> {
  const window = Math.max(1, o.window ?? 1000);
  const timeout = o.timeoutMs ?? 5000;
  const out: PublishResult = { published: [], duplicates: 0 };
  let i = 0;
  while (i < rows.length) {
    const size = o.probe && i === 0 ? 1 : window;
    const chunk = rows.slice(i, i + size);
    i += chunk.length;
    const settled = await Promise.allSettled(
      chunk.map((r) => {
        let subject: string;
        try {
          subject = subjectFor(r.gk, o.prefix);
        } catch (e) {
          return Promise.reject(e);
        }
        return js.publish(subject, enc.encode(JSON.stringify(toWakeUp(r))), {
          msgID: r.id,
          timeout,
          expect: { streamName: o.stream },
        });
      }),
    );
    settled.forEach((s, k) => {
      if (s.status === "fulfilled") {
        out.published.push(chunk[k].id);
        if (s.value.duplicate) out.duplicates++;
      } else if (out.error === undefined) {
        out.error = s.reason;
      }
    });
    if (out.error !== undefined) break;
  }
  return out;
}

export interface PruneOptions {
  /** Published rows older than this go (default 15 min). */
  retentionMs: number;
  /** The newest rows kept regardless of age (default 10 000). */
  keepMin: number;
}

/**
 * Deletes published rows older than the retention, always keeping the newest `keepMin`
 * rows, and raises `outbox_watermark.pruned_rv` (when that table exists) so that a watch
 * asking to resume from a pruned resourceVersion is told it is gone.
 */
export async function pruneOutbox(sql: Sql, o: PruneOptions): Promise<number> {
  return (await sql.begin(async (tx) => {
    const [{ max, watermark }] = await tx<{ max: string | null; watermark: boolean }[]>`
      SELECT max(rv)::text AS max, to_regclass('outbox_watermark') IS NOT NULL AS watermark
      FROM outbox
      WHERE published_at IS NOT NULL
        AND published_at < now() - ${`${Math.max(0, Math.floor(o.retentionMs))} milliseconds`}::interval
        AND id <= (SELECT id FROM outbox ORDER BY id DESC OFFSET ${Math.max(0, Math.floor(o.keepMin))} LIMIT 1)
        -- never a row a watch may not have been shown yet (a long transaction anywhere holds them back)
        AND rv < pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;
    if (!max) return 0;
    const res = await tx`DELETE FROM outbox WHERE rv <= ${max}::bigint AND published_at IS NOT NULL`;
    if (watermark) await tx.unsafe(`UPDATE outbox_watermark SET pruned_rv = greatest(pruned_rv, $1::bigint)`, [max]);
    return res.count;
  })) as number;
}
