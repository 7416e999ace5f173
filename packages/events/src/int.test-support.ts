import net from "node:net";
import { randomUUID } from "node:crypto";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { freshDatabase, uniqueName, NATS_URL, type TestDatabase } from "@flotilla/testkit";
import { wakeUpsOf } from "./consumer.js";
import { connectNats } from "./stream.js";
import { ensureStream } from "./stream.js";
import { unpublishedCount, type Sql } from "@flotilla/store";

export interface Env {
  db: TestDatabase;
  sql: Sql;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
  prefix: string;
  close(): Promise<void>;
}

/** A fresh database, a NATS connection and a stream with a unique name and prefix. */
export async function env(): Promise<Env> {
  const db = await freshDatabase();
  const nc = await connectNats({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("EV").toUpperCase();
  const prefix = uniqueName("ev");
  await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
  return {
    db,
    sql: db.sql,
    nc,
    js: jetstream(nc),
    jsm,
    stream,
    prefix,
    async close() {
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close().catch(() => {});
      await db.drop();
    },
  };
}

/** Inserts `n` outbox rows spread over `objects` objects of one kind, as the store would. */
/**
 * Outbox rows as writes leave them: rv is the writing transaction's id, so the rows of one call
 * share it, unless `eachOwnTransaction` writes every row in a transaction of its own.
 */
export async function insertRows(sql: Sql, n: number, o: { gk?: string; objects?: number; ns?: string; eachOwnTransaction?: boolean } = {}): Promise<void> {
  if (o.eachOwnTransaction) {
    for (let i = 0; i < n; i++) await insertRows(sql, 1, { ...o, eachOwnTransaction: false });
    return;
  }
  const gk = o.gk ?? "apps/Deployment";
  const objects = o.objects ?? 10;
  const apiVersion = gk.startsWith("/") ? "v1" : `${gk.split("/")[0]}/v1`;
  const kind = gk.split("/")[1];
  const uids = Array.from({ length: objects }, () => randomUUID());
  await sql`
    INSERT INTO outbox (rv, gk, namespace, name, uid, type, object)
    SELECT txid_current(), ${gk}, ${o.ns ?? "default"}, 'obj-' || (g % ${objects}), (${uids}::uuid[])[(g % ${objects}) + 1],
           CASE WHEN g < ${objects} THEN 'ADDED' ELSE 'MODIFIED' END,
           jsonb_build_object('apiVersion', ${apiVersion}::text, 'kind', ${kind}::text)
    FROM generate_series(0, ${n - 1}) g`;
  await sql`SELECT pg_notify('flotilla_outbox', '')`;
}

export const unpublished = unpublishedCount;

/** The wake-ups the stream holds (a message carries one or many). */
export async function streamCount(jsm: JetStreamManager, stream: string): Promise<number> {
  const js = jsm.jetstream();
  const messages = (await jsm.streams.info(stream)).state.messages;
  if (messages === 0) return 0;
  const c = await js.consumers.get(stream);
  let n = 0;
  let seen = 0;
  const it = await c.fetch({ max_messages: messages, expires: 5000 });
  for await (const m of it) {
    n += wakeUpsOf(m.json<unknown>()).length;
    if (++seen === messages) break;
  }
  return n;
}

/** A TCP forwarder in front of NATS that can be taken down (every connection cut) and brought back. */
export class FlakyProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  constructor(private readonly target = new URL(NATS_URL.replace(/^nats:/, "http:"))) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(this.target.port || 4222), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {});
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}
