import { test } from "node:test";
import assert from "node:assert/strict";
import postgres from "postgres";
import type { JsMsg } from "@nats-io/jetstream";
import type { WakeUp } from "@flotilla/api";
import { PG_URL, eventually, sleep } from "@flotilla/testkit";
import { openDatabase, type Database } from "@flotilla/store";
import { env, insertRows, unpublished, streamCount, FlakyProxy, type Env } from "./int.test-support.js";
import { startRelay, type RelayOptions } from "./relay.js";
import { consume } from "./consumer.js";
import { fetchUnpublished, readEpoch } from "@flotilla/store";
import { publishRows } from "./outbox.js";
import { connectNats } from "./stream.js";
import { subjectFor } from "./subjects.js";

/** DEBUG_RELAY=1 prints the relays' logs. */
const dbg = (name: string) =>
  process.env.DEBUG_RELAY
    ? Object.fromEntries(["debug", "info", "warn", "error"].map((l) => [l, (o: object, m?: string) => console.log(Date.now() % 100000, name, l, m, JSON.stringify(o))]))
    : undefined;

/** Resolves when `p` does, or fails after `ms`. */
const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`${what}: not within ${ms} ms`)))]);

async function dropDatabase(name: string): Promise<void> {
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end({ timeout: 1 });
  }
}

const fast = { pollMs: 50, standbyRetryMs: 200, lockCheckMs: 200, backoff: { baseMs: 50, maxMs: 500 }, retentionMs: 0 } satisfies Partial<RelayOptions>;

/** Collects every delivery of one kind's wake-ups. */
function collector(e: Env, gk = "apps/Deployment") {
  const got: { w: WakeUp; seq: number; deliveryCount: number }[] = [];
  const c = consume({
    js: e.js,
    stream: e.stream,
    durable: "collector",
    subject: subjectFor(gk, e.prefix),
    handler: async (w: WakeUp, m: JsMsg) => {
      got.push({ w, seq: m.seq, deliveryCount: m.info.deliveryCount });
    },
  });
  return { got, c, unique: () => new Set(got.map((g) => g.w.id)).size };
}

test("relay publishes every outbox row once, in id order per object", async () => {
  const e = await env();
  const col = collector(e);
  const relay = startRelay({ sql: e.sql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast });
  try {
    await insertRows(e.sql, 500, { objects: 7 });
    await eventually(async () => (await unpublished(e.sql)) === 0 && col.got.length >= 500, { timeoutMs: 15_000 });
    await sleep(200);
    assert.equal(col.got.length, 500);
    assert.equal(col.unique(), 500);
    assert.equal(await streamCount(e.jsm, e.stream), 500);
    // In the stream, each object's events appear in outbox id order.
    const byObject = new Map<string, bigint[]>();
    for (const g of [...col.got].sort((a, b) => a.seq - b.seq)) {
      const ids = byObject.get(g.w.name!) ?? [];
      ids.push(BigInt(g.w.id!));
      byObject.set(g.w.name!, ids);
    }
    assert.equal(byObject.size, 7);
    for (const ids of byObject.values()) assert.deepEqual(ids, [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const first = col.got.find((g) => g.w.type === "ADDED")!.w;
    assert.equal(first.apiVersion, "apps/v1");
    assert.equal(first.kind, "Deployment");
    assert.equal(first.namespace, "default");
    assert.match(first.uid!, /^[0-9a-f-]{36}$/);
    assert.match(first.resourceVersion!, /^\d+$/);
    assert.equal(relay.stats.duplicates, 0);
  } finally {
    await col.c.stop();
    await relay.stop();
    await e.close();
  }
});

test("a relay that died after publishing and before marking is replaced without duplicate deliveries", async () => {
  const e = await env();
  const col = collector(e);
  try {
    await insertRows(e.sql, 300);
    // The crashed relay: fetched and published every row (as two messages), never marked them.
    const rows = await fetchUnpublished(e.sql, 1000);
    const res = await publishRows(e.js, rows, { prefix: e.prefix, stream: e.stream, epoch: await readEpoch(e.sql) });
    assert.equal(res.published.length, 300);
    assert.equal(await unpublished(e.sql), 300);
    const relay = startRelay({ sql: e.sql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast });
    try {
      await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 10_000 });
      // the same rows make the same messages: the stream drops them as duplicates
      assert.equal(relay.stats.duplicates, 300);
      assert.equal(await streamCount(e.jsm, e.stream), 300);
      await eventually(() => col.got.length >= 300, { timeoutMs: 10_000 });
      await sleep(300);
      assert.equal(col.got.length, 300, "every event arrives exactly once");
      assert.equal(col.unique(), 300);
    } finally {
      await relay.stop();
    }
  } finally {
    await col.c.stop();
    await e.close();
  }
});

test("a relay that died half-way through publishing is replaced; only what it published may arrive twice", async () => {
  const e = await env();
  const col = collector(e);
  try {
    await insertRows(e.sql, 300);
    // The crashed relay published the first 200 rows as one message and died.
    const rows = await fetchUnpublished(e.sql, 1000);
    await publishRows(e.js, rows.slice(0, 200), { prefix: e.prefix, stream: e.stream, epoch: await readEpoch(e.sql) });
    const relay = startRelay({ sql: e.sql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast });
    try {
      await eventually(async () => (await unpublished(e.sql)) === 0 && col.unique() === 300, { timeoutMs: 10_000 });
      await sleep(300);
      const first = new Set(rows.slice(0, 200).map((r) => r.id));
      const twice = [...new Set(col.got.map((g) => g.w.id!).filter((id, i, all) => all.indexOf(id) !== i))];
      assert.ok(twice.every((id) => first.has(id)), "only rows the crashed relay published came again");
      assert.ok(col.got.length <= 500);
    } finally {
      await relay.stop();
    }
  } finally {
    await col.c.stop();
    await e.close();
  }
});

test("a new database's outbox ids are not taken for the old one's by a stream that outlived it", async () => {
  const e = await env();
  const col = collector(e);
  try {
    await insertRows(e.sql, 50);
    const rows = await fetchUnpublished(e.sql, 1000);
    await publishRows(e.js, rows, { prefix: e.prefix, stream: e.stream, epoch: "old-database" });
    // same ids, another epoch: delivered, not dropped
    const res = await publishRows(e.js, rows, { prefix: e.prefix, stream: e.stream, epoch: "new-database" });
    assert.equal(res.duplicates, 0);
    await eventually(() => col.got.length >= 100, { timeoutMs: 10_000 });
  } finally {
    await col.c.stop();
    await e.close();
  }
});

test("a database dropped and recreated under a running relay, the stream kept: the new database's wake-ups are delivered", async () => {
  const e = await env();
  const col = collector(e);
  // the relay reads the outbox through a pool of its own, which reconnects to whatever database has the name
  const relaySql = postgres(e.db.url, { max: 2, onnotice: () => {} });
  const relay = startRelay({ sql: relaySql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast, dbTimeoutMs: 2000, log: dbg("r") as never });
  let db2: Database | undefined;
  try {
    const oldEpoch = await readEpoch(e.sql);
    await insertRows(e.sql, 50);
    await eventually(async () => (await unpublished(e.sql)) === 0 && col.got.length >= 50, { timeoutMs: 10_000 });
    // the same database after a restart keeps its epoch (and so its exactly-once dedupe)
    const again = await openDatabase({ url: e.db.url });
    assert.equal(await readEpoch(again.sql), oldEpoch);
    await again.close();

    await e.db.close();
    await dropDatabase(e.db.name);
    db2 = await openDatabase({ url: e.db.url });
    assert.notEqual(await readEpoch(db2.sql), oldEpoch, "a new database draws a new epoch");
    // the new database's outbox starts again at id 1: the same rows, the same batches as before
    await insertRows(db2.sql, 50);
    await eventually(async () => (await unpublished(db2!.sql)) === 0, { timeoutMs: 20_000 });
    await eventually(() => col.got.length >= 100, { timeoutMs: 10_000, message: `delivered ${col.got.length} of 100` });
    assert.equal(await streamCount(e.jsm, e.stream), 100);
    assert.equal(relay.stats.duplicates, 0, "nothing of the new database taken for a duplicate");
  } finally {
    await col.c.stop();
    await within(relay.stop(), 15_000, "stop");
    await relaySql.end({ timeout: 1 });
    await db2?.close();
    await e.close();
  }
});

test("relay loses nothing while NATS is unreachable for a while", async () => {
  const e = await env();
  const proxy = new FlakyProxy();
  await proxy.up();
  const col = collector(e);
  const relay = startRelay({
    sql: e.sql,
    connect: () => connectNats({ servers: proxy.url, reconnectTimeWait: 100 }),
    stream: e.stream,
    prefix: e.prefix,
    ...fast,
    publishTimeoutMs: 500,
    log: dbg("r") as never,
  });
  try {
    await insertRows(e.sql, 100);
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 10_000 });
    const mark = (m: string) => process.env.DEBUG_RELAY && console.log(Date.now() % 100000, "test", m);
    mark("down");
    await proxy.down();
    mark("is down");
    await insertRows(e.sql, 200);
    await sleep(1500);
    assert.equal(await unpublished(e.sql), 200, "nothing is marked while NATS is away");
    await proxy.up();
    mark("up");
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 15_000 });
    mark("all published");
    assert.equal(await streamCount(e.jsm, e.stream), 300);
    await eventually(() => col.unique() >= 300, { timeoutMs: 10_000 });
    assert.equal(col.unique(), 300);
    mark("all consumed");
    assert.ok(relay.stats.errors > 0, "the outage was noticed");
  } finally {
    await col.c.stop();
    await relay.stop();
    await proxy.down();
    await e.close();
  }
});

test("relay recovers when its Postgres connections are cut", async () => {
  const e = await env();
  // The relay gets a pool of its own so that the test's checks are not cut too.
  const relaySql = postgres(e.db.url, { max: 4, onnotice: () => {}, connection: { application_name: "relay-under-test" } });
  const relay = startRelay({ sql: relaySql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast, dbTimeoutMs: 2000, log: dbg("r") as never });
  try {
    await within(relay.whenActive(), 5000, "active");
    await insertRows(e.sql, 50);
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 10_000 });
    const [{ n }] = await e.sql<{ n: number }[]>`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name IN ('relay-under-test', 'flotilla-relay-lock')`;
    assert.ok(n >= 2, `cut the relay's lock session and pool (${n} connections)`);
    await insertRows(e.sql, 50);
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 15_000 });
    assert.equal(await streamCount(e.jsm, e.stream), 100);
    await eventually(() => relay.active, { timeoutMs: 5000 });
    assert.ok(relay.stats.activations >= 2, `re-took the lock (activations ${relay.stats.activations})`);
  } finally {
    await within(relay.stop(), 15_000, "stop");
    await relaySql.end({ timeout: 1 });
    await e.close();
  }
});

test("two relays: one is active, the other takes over when it stops or its session dies", async () => {
  const e = await env();
  const sql2 = postgres(e.db.url, { max: 4, onnotice: () => {} });
  const sql3 = postgres(e.db.url, { max: 4, onnotice: () => {} });
  const base = { nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast };
  const r1 = startRelay({ sql: e.sql, ...base, log: dbg("r1") as never });
  await within(r1.whenActive(), 5000, "r1 active");
  const r2 = startRelay({ sql: sql2, ...base, log: dbg("r2") as never });
  let r3: ReturnType<typeof startRelay> | undefined;
  try {
    await sleep(600);
    assert.equal(r1.active, true);
    assert.equal(r2.active, false);
    await insertRows(e.sql, 100);
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 10_000 });
    assert.equal(r2.stats.published, 0);

    const t0 = Date.now();
    await within(r1.stop(), 5000, "r1 stop");
    await within(r2.whenActive(), 5000, "r2 takes over");
    const takeoverMs = Date.now() - t0;
    assert.ok(takeoverMs < 2000, `took over in ${takeoverMs} ms`);
    await insertRows(e.sql, 100);
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 10_000 });
    assert.equal(r2.stats.published, 100);

    // The active relay's lock session dies (its process hung or the network cut it).
    r3 = startRelay({ sql: sql3, ...base, log: dbg("r3") as never });
    await sleep(400);
    assert.equal(r3.active, false);
    await e.sql`
      SELECT pg_terminate_backend(l.pid) FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.classid = ${0x464c4f54}::bigint::oid AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
    await eventually(() => r2.active !== r3!.active, { timeoutMs: 5000 });
    await sleep(500);
    assert.equal([r2, r3].filter((r) => r.active).length, 1);
    await insertRows(e.sql, 100);
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 10_000 });
    assert.equal(await streamCount(e.jsm, e.stream), 300);
  } finally {
    await within(Promise.all([r1.stop(), r2.stop(), r3?.stop()]), 10_000, "stop relays");
    await sql2.end({ timeout: 1 });
    await sql3.end({ timeout: 1 });
    await e.close();
  }
});

test("a write that commits after a later one is published too: the cursor never passes a transaction still open", async () => {
  const e = await env();
  const col = collector(e);
  const relay = startRelay({ sql: e.sql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast });
  // the earlier transaction takes its resourceVersion (its id) first and commits last
  const url = new URL(PG_URL);
  url.pathname = `/${e.db.name}`;
  const early = postgres(url.toString(), { max: 1, onnotice: () => {} });
  let commit!: () => void;
  const held = new Promise<void>((r) => (commit = r));
  let begun!: () => void;
  const started = new Promise<void>((r) => (begun = r));
  try {
    const tx = early.begin(async (t) => {
      await t`SELECT pg_current_xact_id()`;
      begun();
      await held;
      await t`INSERT INTO outbox (rv, gk, namespace, name, uid, type, object)
              VALUES (pg_current_xact_id()::text::bigint, 'apps/Deployment', 'default', 'early', gen_random_uuid(), 'ADDED', '{"apiVersion":"apps/v1","kind":"Deployment"}')`;
    });
    await started;
    await insertRows(e.sql, 20, { eachOwnTransaction: true });
    // the later writes wait for the open transaction: publishing them would move the cursor past it
    await sleep(500);
    assert.equal(col.got.length, 0, "nothing is published past a transaction still open");
    commit();
    await tx;
    await eventually(() => col.unique() === 21, { timeoutMs: 10_000, message: "every write, the early one too, published" });
    assert.ok(col.got.some((g) => g.w.name === "early"));
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 5_000, message: "the cursor past every row" });
    // one row write per pass of the relay, not one per row
    const [{ n }] = await e.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox`;
    assert.equal(n, 21);
  } finally {
    commit();
    await early.end({ timeout: 1 });
    await col.c.stop();
    await relay.stop();
    await e.close();
  }
});

test("relay prunes published rows past the retention, keeping the newest", async () => {
  const e = await env();
  const relay = startRelay({ sql: e.sql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast, retentionMs: 1, keepMin: 10, pruneEveryMs: 100 });
  try {
    await insertRows(e.sql, 60, { eachOwnTransaction: true });
    await eventually(async () => {
      const [{ n }] = await e.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox`;
      return n === 10;
    }, { timeoutMs: 10_000 });
    const [{ pruned, min }] = await e.sql<{ pruned: string; min: string }[]>`
      SELECT (SELECT pruned_rv::text FROM outbox_watermark) AS pruned, (SELECT min(rv)::text FROM outbox) AS min`;
    assert.ok(BigInt(pruned) < BigInt(min) && BigInt(pruned) > 0n, `watermark ${pruned} below the oldest kept rv ${min}`);
    assert.equal(relay.stats.pruned, 50);
  } finally {
    await relay.stop();
    await e.close();
  }
});

// A smoke run by default; RELAY_BENCH_N=20000 makes it the throughput measurement in the README.
test("end to end: outbox rows to acked wake-ups (throughput)", async (t) => {
  const e = await env();
  const N = Number(process.env.RELAY_BENCH_N ?? 2_000);
  let acked = 0;
  let allAcked!: () => void;
  const done = new Promise<void>((r) => (allAcked = r));
  const c = consume({
    js: e.js,
    stream: e.stream,
    durable: "bench",
    subject: subjectFor("apps/Deployment", e.prefix),
    concurrency: 256,
    handler: async () => {
      if (++acked === N) allAcked();
    },
  });
  await c.ready;
  await insertRows(e.sql, N, { objects: 1000 });
  const t0 = performance.now();
  const relay = startRelay({ sql: e.sql, nc: e.nc, stream: e.stream, prefix: e.prefix, ...fast });
  try {
    await eventually(async () => (await unpublished(e.sql)) === 0, { timeoutMs: 60_000, intervalMs: 50 });
    const published = performance.now() - t0;
    await Promise.race([done, sleep(60_000)]);
    const total = performance.now() - t0;
    assert.equal(acked, N);
    t.diagnostic(`relay published and marked ${N} rows in ${published.toFixed(0)} ms (${Math.round((N / published) * 1000)}/s)`);
    t.diagnostic(`consumer handled ${N} wake-ups ${total.toFixed(0)} ms after relay start (${Math.round((N / total) * 1000)} events/s end to end)`);
  } finally {
    await c.stop();
    await relay.stop();
    await e.close();
  }
});
