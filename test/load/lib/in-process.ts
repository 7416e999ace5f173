// For a service built in the runner's own process (`buildApp`, `buildExecution`), what `runService`
// would give it, isolated from anything else on the machine: a fresh database, a JetStream stream
// and subject prefix of its own, and the outbox relay on a pool of its own.
import type { Sql } from "postgres";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay, type JetStreamClient, type NatsConnection } from "@flotilla/events";
import { openDatabase, type Database } from "@flotilla/store";
import { NATS_URL, freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { isolatedEnv } from "./stack.js";

export interface InProcessStack {
  /** The fresh database; its pool has `max` connections. */
  db: TestDatabase;
  nc: NatsConnection;
  js: JetStreamClient;
  stream: string;
  prefix: string;
  /** Another pool on the database (the service's or the load generator's), closed by close(). */
  pool(max: number): Promise<Sql>;
  /** Stops the relay, closes every pool and NATS, deletes the stream and drops the database. */
  close(): Promise<void>;
}

export async function inProcessStack(o: { label: string; max?: number }): Promise<InProcessStack> {
  const db = await freshDatabase({ max: o.max });
  const { EVENTS_STREAM: stream, EVENTS_PREFIX: prefix } = isolatedEnv(db, o.label);
  const nc = await connectNats({ servers: NATS_URL });
  await ensureStream(nc, { stream, prefix, maxAgeMs: 30 * 60_000 });
  const pools: Database[] = [];
  const pool = async (max: number) => {
    const p = await openDatabase({ url: db.url, max, create: false, migrate: false });
    pools.push(p);
    return p.sql;
  };
  // as runService: the relay reads and marks the outbox on a pool of its own
  const relay = startRelay({ sql: await pool(2), nc, stream, prefix, retentionMs: 0 });
  return {
    db,
    nc,
    js: jetstream(nc),
    stream,
    prefix,
    pool,
    async close() {
      await relay.stop().catch(() => {});
      for (const p of pools) await p.close().catch(() => {});
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
      await nc.close().catch(() => {});
      await db.drop();
    },
  };
}
