import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { WakeUp } from "@flotilla/api";
import { eventually, sleep } from "@flotilla/testkit";
import { AckPolicy, DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { FlakyProxy, env, type Env } from "./int.test-support.js";
import { connectNats } from "./stream.js";
import { consume, consumerNameFor, ensureConsumer } from "./consumer.js";
import { subjectFor } from "./subjects.js";

const enc = new TextEncoder();

/** Publishes n wake-ups of one kind straight to the stream, as the relay would. */
async function publish(e: Env, n: number, gk = "apps/Deployment", from = 1): Promise<void> {
  const [group, kind] = gk.split("/");
  await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const id = String(from + i);
      const w: WakeUp = { id, apiVersion: group ? `${group}/v1` : "v1", kind, namespace: "default", name: `o${i % 10}`, uid: randomUUID(), resourceVersion: id, type: "MODIFIED" };
      return e.js.publish(subjectFor(gk, e.prefix), enc.encode(JSON.stringify(w)), { msgID: `${gk}:${id}` });
    }),
  );
}

async function pending(e: Env, durable: string): Promise<{ ackPending: number; numPending: number }> {
  const ci = await e.jsm.consumers.info(e.stream, durable);
  return { ackPending: ci.num_ack_pending, numPending: ci.num_pending };
}

test("replicas sharing a durable consumer get each message once between them", async () => {
  const e = await env();
  const seen: string[][] = [[], []];
  const subject = subjectFor("apps/Deployment", e.prefix);
  const replicas = [0, 1].map((i) =>
    consume({ js: e.js, stream: e.stream, durable: "svc", subject, concurrency: 8, handler: async (w) => void seen[i].push(w.id!) }),
  );
  try {
    await Promise.all(replicas.map((r) => r.ready));
    await publish(e, 400);
    await eventually(() => seen[0].length + seen[1].length >= 400, { timeoutMs: 10_000 });
    await sleep(300);
    const all = [...seen[0], ...seen[1]];
    assert.equal(all.length, 400);
    assert.equal(new Set(all).size, 400);
    assert.equal((await pending(e, "svc")).ackPending, 0);
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await e.close();
  }
});

test("a message is acked only after its handler resolves", async () => {
  const e = await env();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started = 0;
  const c = consume({
    js: e.js,
    stream: e.stream,
    durable: "slow",
    subject: subjectFor("/ConfigMap", e.prefix),
    handler: async () => {
      started++;
      await gate;
    },
  });
  try {
    await c.ready;
    await publish(e, 3, "/ConfigMap");
    await eventually(() => started === 3);
    await sleep(100);
    assert.equal((await pending(e, "slow")).ackPending, 3);
    release();
    await eventually(async () => (await pending(e, "slow")).ackPending === 0);
    assert.equal(c.stats.acked, 3);
  } finally {
    await c.stop();
    await e.close();
  }
});

test("a failed handler's message is redelivered after the nak delay, then acked", async () => {
  const e = await env();
  const deliveries: number[] = [];
  const c = consume({
    js: e.js,
    stream: e.stream,
    durable: "flaky",
    subject: subjectFor("apps/Deployment", e.prefix),
    nakDelay: { baseMs: 200, maxMs: 1000 },
    handler: async (_w, m) => {
      deliveries.push(m.info.deliveryCount);
      if (m.info.deliveryCount < 3) throw new Error("not yet");
    },
  });
  try {
    await c.ready;
    const t0 = Date.now();
    await publish(e, 1);
    await eventually(() => c.stats.acked === 1, { timeoutMs: 5000 });
    const took = Date.now() - t0;
    assert.deepEqual(deliveries, [1, 2, 3]);
    assert.ok(took >= 500, `waited 200 + 400 ms of nak delays (took ${took} ms)`);
    assert.equal(c.stats.naked, 2);
  } finally {
    await c.stop();
    await e.close();
  }
});

test("several subjects get one consumer each, named per subject", async () => {
  const e = await env();
  const got: string[] = [];
  const subjects = [subjectFor("apps/Deployment", e.prefix), subjectFor("cluster.karmada.io/Cluster", e.prefix)];
  const c = consume({ js: e.js, stream: e.stream, durable: "multi", subjects, handler: async (w) => void got.push(`${w.kind}/${w.id}`) });
  try {
    await c.ready;
    await publish(e, 5, "apps/Deployment");
    await publish(e, 4, "cluster.karmada.io/Cluster");
    await publish(e, 6, "/Secret");
    await eventually(() => got.length >= 9);
    await sleep(200);
    assert.equal(got.length, 9);
    assert.equal(got.filter((g) => g.startsWith("Cluster/")).length, 4);
    const names = (await e.jsm.consumers.list(e.stream).next()).map((ci) => ci.name).sort();
    assert.deepEqual(names, subjects.map((s) => consumerNameFor("multi", s)).sort());
    assert.equal(names[0], `multi-${e.prefix}_obj_apps_Deployment`);
  } finally {
    await c.stop();
    await e.close();
  }
});

test("stop waits for running handlers, and hands back those that do not finish", async () => {
  const e = await env();
  const subject = subjectFor("apps/Deployment", e.prefix);
  let finished = 0;
  const a = consume({
    js: e.js,
    stream: e.stream,
    durable: "drain",
    subject,
    handler: async (w) => {
      if (w.id === "1") await sleep(300);
      else await new Promise(() => {}); // never finishes
      finished++;
    },
  });
  await a.ready;
  await publish(e, 2);
  await eventually(() => a.stats.inFlight === 2);
  const t0 = Date.now();
  await a.stop({ timeoutMs: 800 });
  const took = Date.now() - t0;
  try {
    assert.equal(finished, 1, "the short handler finished before stop returned");
    assert.ok(took >= 700 && took < 3000, `stop waited for the bound (${took} ms)`);
    assert.equal(a.stats.acked, 1);
    assert.equal(a.stats.naked, 1);
    // The unfinished one is redelivered at once to another replica.
    const redelivered: string[] = [];
    const b = consume({ js: e.js, stream: e.stream, durable: "drain", subject, handler: async (w) => void redelivered.push(w.id!) });
    try {
      await eventually(() => redelivered.length === 1, { timeoutMs: 3000 });
      assert.deepEqual(redelivered, ["2"]);
    } finally {
      await b.stop();
    }
  } finally {
    await e.close();
  }
});

test("a handler running past ack_wait is kept in progress, not redelivered", async () => {
  const e = await env();
  const deliveries: number[] = [];
  const c = consume({
    js: e.js,
    stream: e.stream,
    durable: "long",
    subject: subjectFor("apps/Deployment", e.prefix),
    ackWaitMs: 1000,
    handler: async (_w, m) => {
      deliveries.push(m.info.deliveryCount);
      await sleep(2500);
    },
  });
  try {
    await c.ready;
    await publish(e, 1);
    await eventually(() => c.stats.acked === 1, { timeoutMs: 6000 });
    assert.deepEqual(deliveries, [1]);
  } finally {
    await c.stop();
    await e.close();
  }
});

test("a message of many wake-ups hands each to the handler, and is acked once all are handled, redelivered when one fails", async () => {
  const e = await env();
  const subject = subjectFor("apps/Deployment", e.prefix);
  const w = (i: number): WakeUp => ({ id: String(i), apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: `o${i}`, uid: randomUUID(), resourceVersion: String(i), type: "MODIFIED" });
  const handled: string[] = [];
  let failOnce = true;
  const c = consume({
    js: e.js,
    stream: e.stream,
    durable: "batch",
    subject,
    nakDelay: { baseMs: 50, maxMs: 50 },
    handler: async (x) => {
      handled.push(x.name!);
      if (x.name === "o2" && failOnce) {
        failOnce = false;
        throw new Error("member unreachable");
      }
    },
  });
  try {
    await c.ready;
    await e.js.publish(subject, enc.encode(JSON.stringify({ wakeUps: [w(1), w(2), w(3)] })), { msgID: "batch-1" });
    await eventually(() => c.stats.acked === 1, { timeoutMs: 5000 });
    // the first delivery failed on o2: the whole message came again, and all three were handled twice
    assert.deepEqual([...handled].sort(), ["o1", "o1", "o2", "o2", "o3", "o3"]);
    assert.deepEqual([c.stats.received, c.stats.wakeUps, c.stats.naked], [2, 6, 1]);
    assert.equal((await pending(e, "batch")).ackPending, 0);
  } finally {
    await c.stop();
    await e.close();
  }
});

test("a message that is neither a wake-up nor a list of them is dropped, not redelivered", async () => {
  const e = await env();
  const subject = subjectFor("apps/Deployment", e.prefix);
  const c = consume({ js: e.js, stream: e.stream, durable: "bad", subject, handler: async () => {} });
  try {
    await c.ready;
    await e.js.publish(subject, enc.encode(JSON.stringify({ wakeUps: [1, 2] })), { msgID: "bad-1" });
    await eventually(() => c.stats.dropped === 1, { timeoutMs: 5000 });
    await eventually(async () => (await pending(e, "bad")).ackPending === 0, { timeoutMs: 5000 });
  } finally {
    await c.stop();
    await e.close();
  }
});

/**
 * A service's consumer restarted against the same stream: the first life handles part of the
 * backlog and stops (as on SIGTERM), the second picks up the rest. Returns what each life handled.
 */
async function restartOnce(e: Env, o: { durable: string; n: number; stopAfter: number; second?: Partial<Parameters<typeof consume>[0]> }) {
  const subject = subjectFor("apps/Deployment", e.prefix);
  const first = { done: new Set<string>(), started: 0 };
  const second = { done: new Set<string>(), redelivered: [] as { id: string; deliveryCount: number }[] };
  await publish(e, o.n);
  const a = consume({
    js: e.js,
    stream: e.stream,
    durable: o.durable,
    subject,
    concurrency: 16,
    handler: async (w) => {
      first.started++;
      await sleep(2);
      first.done.add(w.id!);
    },
  });
  await eventually(() => first.done.size >= o.stopAfter, { timeoutMs: 10_000 });
  const before = await e.jsm.consumers.info(e.stream, o.durable);
  await a.stop();
  const t0 = Date.now();
  const b = consume({
    js: e.js,
    stream: e.stream,
    durable: o.durable,
    subject,
    concurrency: 16,
    ...o.second,
    handler: async (w, m) => {
      if (m.info.deliveryCount > 1) second.redelivered.push({ id: w.id!, deliveryCount: m.info.deliveryCount });
      second.done.add(w.id!);
    },
  });
  try {
    await eventually(() => first.done.size + second.done.size >= o.n && new Set([...first.done, ...second.done]).size === o.n, {
      timeoutMs: 10_000,
      message: `handled ${new Set([...first.done, ...second.done]).size} of ${o.n}`,
    });
    const tookMs = Date.now() - t0;
    await sleep(300);
    const after = await e.jsm.consumers.info(e.stream, o.durable);
    return { first, second, before, after, tookMs };
  } finally {
    await b.stop();
  }
}

test("a consumer restarted against the same stream resumes after what it acked: nothing handled twice, the rest at once", async (t) => {
  const e = await env();
  try {
    const r = await restartOnce(e, { durable: "restart", n: 2000, stopAfter: 600 });
    t.diagnostic(`first life handled ${r.first.done.size}, second ${r.second.done.size} in ${r.tookMs} ms, ${r.second.redelivered.length} redelivered`);
    const twice = [...r.second.done].filter((id) => r.first.done.has(id));
    assert.deepEqual(twice, [], "no wake-up handled before the restart comes again");
    // only what the first life had pulled but not finished may come again, and it comes at once (nak'ed on stop), not after ack_wait (30 s)
    assert.ok(r.second.redelivered.length <= 32, `redelivered ${r.second.redelivered.length}`);
    assert.ok(r.tookMs < 5000, `the rest handled in ${r.tookMs} ms`);
    assert.equal(r.after.created, r.before.created, "the same consumer, not a new one");
    assert.equal(r.after.num_ack_pending, 0);
    assert.equal(r.after.num_pending, 0);
  } finally {
    await e.close();
  }
});

test("a consumer restarted with other settings (ack wait, max ack pending) keeps its position", async () => {
  const e = await env();
  try {
    const r = await restartOnce(e, { durable: "resettings", n: 1000, stopAfter: 300, second: { ackWaitMs: 10_000, maxAckPending: 200 } });
    const twice = [...r.second.done].filter((id) => r.first.done.has(id));
    assert.deepEqual(twice, []);
    assert.equal(r.after.created, r.before.created, "updated in place, not recreated");
    assert.equal(r.after.config.ack_wait, 10_000 * 1_000_000);
    assert.equal(r.after.config.max_ack_pending, 200);
  } finally {
    await e.close();
  }
});

test("a consumer whose process died (connection cut, acks in flight lost) gets back only what was unacked, after ack_wait", async (t) => {
  const e = await env();
  const proxy = new FlakyProxy();
  await proxy.up();
  const nc = await connectNats({ servers: proxy.url, maxReconnectAttempts: 0 });
  const subject = subjectFor("apps/Deployment", e.prefix);
  const done = new Set<string>();
  const redelivered: string[] = [];
  const n = 2000;
  await publish(e, n);
  // two replicas sharing the consumer; the first runs through a connection that will be cut
  const shared = { stream: e.stream, durable: "crash", subject, concurrency: 16, ackWaitMs: 2000, maxAckPending: 64 };
  const a = consume({
    ...shared,
    js: jetstream(nc),
    handler: async (w) => {
      await sleep(2);
      done.add(w.id!);
    },
  });
  const b = consume({
    ...shared,
    js: e.js,
    handler: async (w, m) => {
      if (m.info.deliveryCount > 1) redelivered.push(w.id!);
      done.add(w.id!);
    },
  });
  try {
    await eventually(() => done.size >= 300, { timeoutMs: 10_000 });
    await proxy.down(); // the first replica is gone mid-work
    // what the dead replica held unacked comes back after ack_wait (2 s here)
    await eventually(
      async () => {
        const ci = await e.jsm.consumers.info(e.stream, "crash");
        return done.size === n && ci.num_ack_pending === 0 && ci.num_pending === 0;
      },
      { timeoutMs: 15_000 },
    );
    await sleep(300);
    t.diagnostic(`${redelivered.length} redelivered after the crash`);
    // what the dead replica held unacked (its running handlers, its pulled batch, acks lost on the
    // way), never more than the consumer's max_ack_pending
    assert.ok(redelivered.length <= 64, `redelivered ${redelivered.length}`);
  } finally {
    await a.stop({ timeoutMs: 100 }).catch(() => {});
    await b.stop();
    await nc.close().catch(() => {});
    await proxy.down();
    await e.close();
  }
});

test("ensureConsumer creates once, then attaches without a write; a name taken by another subject's consumer is refused, not re-created", async () => {
  const e = await env();
  try {
    const want = {
      durable_name: "owner",
      ack_policy: AckPolicy.Explicit,
      ack_wait: 30e9,
      max_deliver: -1,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjectFor("apps/Deployment", e.prefix),
      max_ack_pending: 1000,
    };
    assert.equal(await ensureConsumer(e.jsm, e.stream, want), "created");
    const created = (await e.jsm.consumers.info(e.stream, "owner")).created;
    assert.equal(await ensureConsumer(e.jsm, e.stream, want), "attached");
    assert.equal(await ensureConsumer(e.jsm, e.stream, { ...want, max_ack_pending: 50 }), "updated");
    await assert.rejects(ensureConsumer(e.jsm, e.stream, { ...want, filter_subject: subjectFor("/Secret", e.prefix) }), /exists with filter subject/);
    const after = await e.jsm.consumers.info(e.stream, "owner");
    assert.equal(after.created, created);
    assert.equal(after.config.filter_subject, want.filter_subject);
    assert.equal(after.config.max_ack_pending, 50);
  } finally {
    await e.close();
  }
});
