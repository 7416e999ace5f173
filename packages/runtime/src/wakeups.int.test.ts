import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { pino } from "pino";
import type { WakeUp } from "@flotilla/api";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay, subjectFor, type JetStreamManager } from "@flotilla/events";
import { freshDatabase, eventually, sleep, uniqueName, NATS_URL } from "@flotilla/testkit";
import { createController, type Controller } from "./controller.js";
import { done, type Reconciler, type Result } from "./result.js";
import { METRICS, Metrics } from "./metrics.js";
import { byObjectKey, objectKey, wireWakeUps } from "./wakeups.js";

const log = pino({ level: process.env.LOG_LEVEL ?? "silent" });
const enc = new TextEncoder();

async function setup() {
  const db = await freshDatabase();
  const nc = await connectNats({ servers: NATS_URL });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const stream = uniqueName("RT").toUpperCase();
  const prefix = uniqueName("rt");
  await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
  const controllers: Controller[] = [];
  const stops: (() => Promise<unknown>)[] = [];
  return {
    db,
    js,
    jsm,
    stream,
    prefix,
    controller(reconciler: Reconciler) {
      const c = createController({ reconciler, sql: db.sql, log, timerPollMs: 50, backoff: { baseMs: 50, maxMs: 200 }, stopTimeoutMs: 500, abortGraceMs: 100 });
      controllers.push(c);
      c.start();
      return c;
    },
    onClose(f: () => Promise<unknown>) {
      stops.push(f);
    },
    async publish(w: Partial<WakeUp> & { name: string }, gk = "apps/Deployment") {
      const id = w.id ?? randomUUID();
      const msg: WakeUp = { id, apiVersion: "apps/v1", kind: gk.split("/")[1], namespace: "default", uid: randomUUID(), resourceVersion: "1", type: "MODIFIED", ...w };
      await js.publish(subjectFor(gk, prefix), enc.encode(JSON.stringify(msg)), { msgID: id });
    },
    async close() {
      for (const f of stops.reverse()) await f().catch(() => {});
      await Promise.all(controllers.map((c) => c.stop()));
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close();
      await db.drop();
    },
  };
}

async function ackPending(jsm: JetStreamManager, stream: string, durable: string): Promise<number> {
  return (await jsm.consumers.info(stream, durable)).num_ack_pending;
}

test("outbox rows reach the controller through the relay and the consumer, and are acked after the reconcile", async () => {
  const s = await setup();
  try {
    const seen: string[] = [];
    const c = s.controller({ name: "e2e", reconcile: async (key) => (seen.push(key), done()) });
    const metrics = new Metrics({ process: false });
    metrics.controllers([c]);
    const consumer = wireWakeUps({ js: s.js, stream: s.stream, durable: "e2e", subject: subjectFor("apps/Deployment", s.prefix), controller: c, map: byObjectKey });
    s.onClose(() => consumer.stop());
    const nc2 = await connectNats({ servers: NATS_URL });
    const relay = startRelay({ sql: s.db.sql, nc: nc2, stream: s.stream, prefix: s.prefix, pollMs: 50 });
    s.onClose(async () => (await relay.stop(), await nc2.close()));
    await s.db.sql`
      INSERT INTO outbox (rv, gk, namespace, name, uid, type, object)
      SELECT g, 'apps/Deployment', 'web', 'd' || (g % 3), gen_random_uuid(), 'MODIFIED', '{"apiVersion":"apps/v1","kind":"Deployment"}'
      FROM generate_series(1, 30) g`;
    await s.db.sql`SELECT pg_notify('flotilla_outbox', '')`;
    // 30 wake-ups in as many messages as the relay packed them into
    await eventually(() => consumer.stats.wakeUps === 30 && consumer.stats.acked === consumer.stats.received, { timeoutMs: 10_000 });
    assert.deepEqual([...new Set(seen)].sort(), ["web/d0", "web/d1", "web/d2"]);
    assert.ok(seen.length <= 30, "wake-ups for one key collapse while queued");
    // every wake-up carried the stream's timestamp: each counts once in the lag, on its first reconcile
    const lag = (await metrics.text()).match(new RegExp(`^${METRICS.wakeUpLag}_count\\{controller="e2e"\\} (\\d+)$`, "m"));
    assert.equal(Number(lag?.[1]), 30);
    await eventually(async () => (await ackPending(s.jsm, s.stream, "e2e")) === 0, { timeoutMs: 5000, message: "the server saw the acks" });
  } finally {
    await s.close();
  }
});

test("a wake-up stays unacked while its key fails, and is acked once a reconcile succeeds", async () => {
  const s = await setup();
  try {
    let failures = 3;
    const c = s.controller({
      name: "flaky",
      reconcile: async (): Promise<Result> => {
        if (failures-- > 0) throw new Error("member unreachable");
        return done();
      },
    });
    const consumer = wireWakeUps({ js: s.js, stream: s.stream, durable: "flaky", subject: subjectFor("apps/Deployment", s.prefix), controller: c, map: byObjectKey });
    s.onClose(() => consumer.stop());
    await consumer.ready;
    await s.publish({ name: "nginx" });
    await eventually(() => c.snapshot().metrics.reconciles.error >= 1);
    assert.equal(await ackPending(s.jsm, s.stream, "flaky"), 1);
    assert.equal(consumer.stats.acked, 0);
    await eventually(() => consumer.stats.acked === 1, { timeoutMs: 5000 });
    assert.equal(c.snapshot().metrics.reconciles.error, 3);
    assert.equal(consumer.stats.naked, 0, "the failures were retried by the controller, not redelivered");
    // the ack reaches the server after the consumer counted it
    await eventually(async () => (await ackPending(s.jsm, s.stream, "flaky")) === 0, { timeoutMs: 5000, message: "the server saw the ack" });
  } finally {
    await s.close();
  }
});

test("a wake-up fanned out to several keys is acked when all of them have been reconciled", async () => {
  const s = await setup();
  try {
    const release = new Map<string, () => void>();
    const c = s.controller({
      name: "fanout",
      reconcile: async (key) => {
        if (key.endsWith("rb-2")) await new Promise<void>((r) => release.set(key, r));
        return done();
      },
    });
    // A Cluster wake-up maps to the bindings scheduled on it.
    const consumer = wireWakeUps({
      js: s.js,
      stream: s.stream,
      durable: "fanout",
      subject: subjectFor("cluster.karmada.io/Cluster", s.prefix),
      controller: c,
      map: async (w) => ["rb-1", "rb-2", "rb-3"].map((n) => `${w.name}/${n}`),
    });
    s.onClose(() => consumer.stop());
    await consumer.ready;
    await s.publish({ name: "member1", namespace: "", apiVersion: "cluster.karmada.io/v1alpha1" }, "cluster.karmada.io/Cluster");
    await eventually(() => release.has("member1/rb-2"));
    await sleep(200);
    assert.equal(consumer.stats.acked, 0);
    assert.equal(c.snapshot().metrics.reconciles.done, 2);
    release.get("member1/rb-2")!();
    await eventually(() => consumer.stats.acked === 1);
    assert.equal(objectKey({ namespace: "", name: "member1" }), "member1");
  } finally {
    await s.close();
  }
});

test("a replica that stops before its reconcile succeeded hands the wake-up to another", async () => {
  const s = await setup();
  try {
    const subject = subjectFor("apps/Deployment", s.prefix);
    const a = s.controller({ name: "handover", reconcile: () => new Promise<Result>(() => {}) }); // stuck
    const ca = wireWakeUps({ js: s.js, stream: s.stream, durable: "handover", subject, controller: a, map: byObjectKey });
    await ca.ready;
    await s.publish({ name: "nginx" });
    await eventually(() => a.snapshot().inFlight === 1);
    const seen: string[] = [];
    const b = s.controller({ name: "handover-b", reconcile: async (key) => (seen.push(key), done()) });
    const cb = wireWakeUps({ js: s.js, stream: s.stream, durable: "handover", subject, controller: b, map: byObjectKey });
    s.onClose(() => cb.stop());
    await ca.stop({ timeoutMs: 100 });
    await eventually(() => cb.stats.acked === 1, { timeoutMs: 5000 });
    assert.deepEqual(seen, ["default/nginx"]);
  } finally {
    await s.close();
  }
});

test("keys that keep failing do not hold up wake-ups for other keys", async () => {
  const s = await setup();
  try {
    const c = s.controller({
      name: "liveness",
      reconcile: async (key) => {
        if (key.startsWith("default/broken")) throw new Error("member unreachable");
        return done();
      },
    });
    const consumer = wireWakeUps({ js: s.js, stream: s.stream, durable: "liveness", subject: subjectFor("apps/Deployment", s.prefix), controller: c, map: byObjectKey });
    s.onClose(() => consumer.stop({ timeoutMs: 100 }));
    await consumer.ready;
    for (let i = 0; i < 100; i++) await s.publish({ name: `broken-${i}` });
    await s.publish({ name: "healthy" });
    await eventually(() => consumer.stats.acked === 1, { timeoutMs: 5000 });
    assert.equal(consumer.stats.inFlight, 100, "the broken keys' wake-ups wait, unacked");
  } finally {
    await s.close();
  }
});

test("a wake-up whose key fails terminally is acked; another wake-up about the version it failed on runs nothing, a newer version runs it", async () => {
  const s = await setup();
  try {
    const stored = new Map<string, string>([["default/poison", "5"]]);
    const runs = new Map<string, number>();
    const c = s.controller({
      name: "poison",
      reconcile: async (key, ctx): Promise<Result> => {
        runs.set(key, (runs.get(key) ?? 0) + 1);
        ctx.observed(stored.get(key) ?? "1");
        if (key === "default/poison" && stored.get(key) === "5") throw new TypeError("q.trim is not a function");
        return done();
      },
    });
    const consumer = wireWakeUps({ js: s.js, stream: s.stream, durable: "poison", subject: subjectFor("apps/Deployment", s.prefix), controller: c, map: byObjectKey });
    s.onClose(() => consumer.stop({ timeoutMs: 100 }));
    await consumer.ready;
    await s.publish({ name: "poison", resourceVersion: "5" });
    for (let i = 0; i < 20; i++) await s.publish({ name: `good-${i}`, resourceVersion: "5" });
    await eventually(() => consumer.stats.acked === 21, { timeoutMs: 5000, message: "every wake-up acked, the poison's too" });
    assert.equal(runs.get("default/poison"), 5, "five identical failures (the default), then terminal");
    assert.equal(consumer.stats.inFlight, 0);

    await s.publish({ name: "poison", resourceVersion: "5" });
    await eventually(() => consumer.stats.acked === 22, { timeoutMs: 5000 });
    assert.equal(runs.get("default/poison"), 5, "the version it failed on again: acked without a reconcile");
    assert.equal(c.snapshot().metrics.terminalSkips, 1);

    stored.set("default/poison", "6");
    await s.publish({ name: "poison", resourceVersion: "6" });
    await eventually(() => consumer.stats.acked === 23, { timeoutMs: 5000 });
    assert.equal(runs.get("default/poison"), 6, "a newer version runs it, and it succeeds");
    assert.equal(c.terminalFailure("default/poison"), undefined);
  } finally {
    await s.close();
  }
});
