import type { Queryable } from "./db.js";

/**
 * One change of a binding's `spec.clusters` as the database recorded it (migrations/010): a
 * trigger writes it in the transaction of the write that changed the placement.
 */
export interface PlacementHistoryRecord {
  /** Ascending with the order of the changes. */
  id: string;
  /** The binding's resourceVersion after the change. */
  resourceVersion: string;
  /** When the change was committed (its transaction's start). */
  time: Date;
  /** Who wrote it (`service:<name>`, `user:<name>`), as the writer's store said; undefined when it did not. */
  actor?: string;
  from: Array<{ name?: string; replicas?: number }>;
  to: Array<{ name?: string; replicas?: number }>;
  /** What the write carried about why (see PlacementCause). */
  cause: PlacementCause;
}

/** A task as the binding holds it (the fields history reads). */
export interface PlacementCauseTask {
  fromCluster?: string;
  reason?: string;
  message?: string;
  producer?: string;
  replicas?: number;
}

/**
 * The facts a placement change's write carried: graceful-eviction tasks it added or removed, and
 * the scheduler's decision (its diagnosis's trigger and result, the Scheduled condition) when the
 * status was written together with the placement.
 */
export interface PlacementCause {
  addedTasks?: PlacementCauseTask[];
  removedTasks?: PlacementCauseTask[];
  diagnosis?: { trigger?: string; result?: string; time?: string };
  scheduled?: { status?: string; reason?: string; message?: string };
}

export interface PlacementHistoryOptions {
  /** At most the newest this many changes (0 or absent: all kept). */
  limit?: number;
  /** Only changes younger than this (0 or absent: all kept). */
  maxAgeMs?: number;
}

/**
 * The binding's uid and its placement changes, oldest first; undefined when there is no such
 * object. One statement, so the binding and its history are one snapshot.
 */
export async function readPlacementHistory(q: Queryable, ref: { gk: string; namespace: string; name: string }, o: PlacementHistoryOptions = {}): Promise<{ uid: string; records: PlacementHistoryRecord[] } | undefined> {
  const rows = await q<{ uid: string; id: string | null; rv: string; at: Date; actor: string | null; old_clusters: PlacementHistoryRecord["from"]; new_clusters: PlacementHistoryRecord["to"]; cause: PlacementCause }[]>`
    SELECT o.uid::text AS uid, h.id::text AS id, h.rv::text AS rv, h.at, h.actor, h.old_clusters, h.new_clusters, h.cause
    FROM objects o
    LEFT JOIN LATERAL (
      SELECT * FROM placement_history h WHERE h.uid = o.uid
        ${o.maxAgeMs ? q`AND h.at > now() - ${o.maxAgeMs + " milliseconds"}::interval` : q``}
      ORDER BY h.id DESC ${o.limit ? q`LIMIT ${o.limit}` : q``}
    ) h ON true
    WHERE o.gk = ${ref.gk} AND o.namespace = ${ref.namespace} AND o.name = ${ref.name}`;
  if (!rows.length) return undefined;
  const records = rows
    .filter((r) => r.id !== null)
    .map((r) => ({ id: r.id!, resourceVersion: r.rv, time: r.at, ...(r.actor ? { actor: r.actor } : {}), from: r.old_clusters, to: r.new_clusters, cause: r.cause }))
    .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  return { uid: rows[0]!.uid, records };
}

export interface PlacementHistoryRetention {
  /** Changes older than this go (0: none by age). */
  maxAgeMs: number;
  /** Per binding, only the newest this many are kept (0: no limit). */
  maxPerBinding: number;
}

/** Deletes the changes older than the retention, and per binding all but the newest `maxPerBinding`; returns how many. */
export async function prunePlacementHistory(q: Queryable, r: PlacementHistoryRetention): Promise<number> {
  let n = 0;
  if (r.maxAgeMs > 0) n += (await q`DELETE FROM placement_history WHERE at < now() - ${r.maxAgeMs + " milliseconds"}::interval`).count;
  if (r.maxPerBinding > 0) {
    n += (
      await q`
        DELETE FROM placement_history h USING (
          SELECT id FROM (
            SELECT id, row_number() OVER (PARTITION BY uid ORDER BY id DESC) AS k
            FROM placement_history WHERE uid IN (SELECT uid FROM placement_history GROUP BY uid HAVING count(*) > ${r.maxPerBinding})
          ) x WHERE x.k > ${r.maxPerBinding}
        ) d WHERE h.id = d.id`
    ).count;
  }
  return n;
}
