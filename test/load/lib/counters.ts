// Counters read before and after a load phase: Postgres transactions of one database,
// JetStream deliveries per consumer, the CPU of that database's backends, and the outbox.
import type { Sql } from "postgres";
import { unpublishedCount } from "@flotilla/store";
import { connectNats, jetstreamManager } from "@flotilla/events";
import { NATS_URL } from "@flotilla/testkit";
import { cpuMs } from "./proc.js";

/**
 * xact_commit + xact_rollback of the database from pg_stat_database: transactions, not statements
 * (every store write is one statement in its own transaction, but a read in a transaction counts
 * once). Backends publish their counts at most once a second while busy and within 10 s once idle,
 * so read it after the work has been idle that long.
 */
export async function dbTransactions(sql: Sql, database: string): Promise<number> {
  const [r] = await sql<{ n: string }[]>`SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = ${database}`;
  return Number(r?.n ?? NaN);
}

/** CPU ms so far of every backend connected to the database, by pid (backends opened later count from 0). */
export async function backendCpu(sql: Sql, database: string, o: { servicesOnly?: boolean } = {}): Promise<Map<number, number>> {
  // the services name their connections flotilla-<service>[-<part>]; a runner's own are "flotilla" or the driver's default
  const rows = await sql<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity WHERE datname = ${database} AND pid <> pg_backend_pid()
    ${o.servicesOnly ? sql`AND application_name LIKE 'flotilla-%'` : sql``}`;
  return new Map(rows.map((r) => [r.pid, cpuMs(r.pid)]));
}

/** CPU ms the database's backends used between two backendCpu() readings (backends that exited in between are missed). */
export function backendCpuDelta(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) if (Number.isFinite(ms)) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Outbox rows the relay has not published yet. */
export const unpublished = unpublishedCount;

/** Object writes so far: the outbox's id sequence (every write adds one row; pruning does not lower it). */
export async function outboxWrites(sql: Sql): Promise<number> {
  const [{ n }] = await sql<{ n: string }[]>`SELECT CASE WHEN is_called THEN last_value ELSE 0 END::text AS n FROM outbox_id_seq`;
  return Number(n);
}

export interface ConsumerCount {
  /** Messages delivered (consumer sequence), redeliveries included. */
  delivered: number;
  redelivered: number;
  pending: number;
  ackPending: number;
}

/** Delivery counts of every consumer of the stream, by consumer name. */
export async function consumerDeliveries(stream: string): Promise<Map<string, ConsumerCount>> {
  const nc = await connectNats({ servers: NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    const out = new Map<string, ConsumerCount>();
    for await (const ci of jsm.consumers.list(stream)) {
      out.set(ci.name, { delivered: ci.delivered.consumer_seq, redelivered: ci.num_redelivered, pending: ci.num_pending, ackPending: ci.num_ack_pending });
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Published messages in the stream so far (its last sequence). */
export async function streamMessages(stream: string): Promise<number> {
  const nc = await connectNats({ servers: NATS_URL });
  try {
    return (await (await jetstreamManager(nc)).streams.info(stream)).state.last_seq;
  } finally {
    await nc.close();
  }
}
