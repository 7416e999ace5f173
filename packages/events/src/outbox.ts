import type { JetStreamClient } from "@nats-io/jetstream";
import type { WakeUp } from "@flotilla/api";
import type { OutboxRow } from "@flotilla/store";
import { apiVersionFor, splitGroupKind, subjectFor } from "./subjects.js";

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
    ...(r.trace_context ? { traceContext: r.trace_context } : {}),
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
  /** Send the first message alone before windowing (after a failure: don't queue a window into a dead connection). */
  probe?: boolean;
  /** Wake-ups carried by one message at most (default 256). */
  maxPerMessage?: number;
  /**
   * Prefix of every message id, unique to the database (outbox_watermark.epoch): a new
   * database's outbox ids start again at 1, and the stream must not take them for duplicates.
   */
  epoch?: string;
}

export interface PublishResult {
  /** Ids of the rows the stream acknowledged (stored now or earlier: duplicates included). */
  published: string[];
  /** Rows in messages the stream already had. */
  duplicates: number;
  /** The first failure; rows after it were not attempted. */
  error?: unknown;
}

const enc = new TextEncoder();

/** One message: rows of one subject, in id order. */
export interface RowGroup {
  subject: string;
  rows: OutboxRow[];
}

/**
 * The messages for a batch of rows: per subject, its rows in id order, at most `max` to a
 * message; messages ordered by their first row. A row whose kind makes no subject is an error.
 */
export function groupRows(rows: readonly OutboxRow[], prefix: string, max: number): RowGroup[] {
  const out: RowGroup[] = [];
  const open = new Map<string, RowGroup>();
  for (const r of rows) {
    const subject = subjectFor(r.gk, prefix);
    let g = open.get(subject);
    if (!g || g.rows.length >= max) {
      g = { subject, rows: [] };
      open.set(subject, g);
      out.push(g);
    }
    g.rows.push(r);
  }
  return out;
}

/** What a message carries: `{"wakeUps": [...]}` (events.v1.WakeUps). */
export function wakeUpsPayload(rows: readonly OutboxRow[]): Uint8Array {
  return enc.encode(JSON.stringify({ wakeUps: rows.map(toWakeUp) }));
}

/**
 * Publishes rows as messages of up to `maxPerMessage` wake-ups of one subject each (see
 * groupRows), with a message id made of the epoch and the rows it carries, in windows of
 * in-flight publishes on one connection (so the stream keeps each subject's order). Stops at the
 * first window with a failure. A message republished after a crash carries the same id, and is
 * dropped by the stream, when it holds the same rows; when the batch was cut differently, its
 * wake-ups arrive again (a repeated wake-up costs one reconcile that changes nothing).
 */
export async function publishRows(js: JetStreamClient, rows: readonly OutboxRow[], o: PublishOptions): Promise<PublishResult> {
  const window = Math.max(1, o.window ?? 1000);
  const timeout = o.timeoutMs ?? 5000;
  const out: PublishResult = { published: [], duplicates: 0 };
  let groups: RowGroup[];
  try {
    groups = groupRows(rows, o.prefix, Math.max(1, o.maxPerMessage ?? 256));
  } catch (e) {
    return { ...out, error: e };
  }
  let i = 0;
  while (i < groups.length) {
    const size = o.probe && i === 0 ? 1 : window;
    const chunk = groups.slice(i, i + size);
    i += chunk.length;
    const settled = await Promise.allSettled(
      chunk.map((g) =>
        js.publish(g.subject, wakeUpsPayload(g.rows), {
          msgID: `${o.epoch ?? ""}:${g.rows[0]!.id}-${g.rows[g.rows.length - 1]!.id}:${g.rows.length}`,
          timeout,
          expect: { streamName: o.stream },
        }),
      ),
    );
    settled.forEach((s, k) => {
      if (s.status === "fulfilled") {
        for (const r of chunk[k]!.rows) out.published.push(r.id);
        if (s.value.duplicate) out.duplicates += chunk[k]!.rows.length;
      } else if (out.error === undefined) {
        out.error = s.reason;
      }
    });
    if (out.error !== undefined) break;
  }
  return out;
}
