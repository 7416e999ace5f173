import { test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, eventually, sleep } from "@flotilla/testkit";
import { ObjectStore, recordEvent, type WatchEvent } from "@flotilla/store";
import { silentLogger } from "@flotilla/log";
import { GK, type KubeObject } from "@flotilla/api";
import { collectExpiredEvents, startEventCollector } from "./event-ttl.js";

const HOUR = 3_600_000;
const rb = (name: string) => ({ apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name, namespace: "web", uid: `uid-${name}` } });

/** Collects a watch's events in the background until `stop`. */
async function watchAll(store: ObjectStore, gks: string[]) {
  const ctl = new AbortController();
  const got: WatchEvent[] = [];
  const it = await store.watch(gks, { signal: ctl.signal });
  const running = (async () => {
    for await (const e of it) got.push(e);
  })().catch(() => {});
  return {
    got,
    deleted: () => got.filter((e) => e.type === "DELETED").map((e) => e.object.metadata.name!),
    async stop() {
      ctl.abort();
      await running;
    },
  };
}

test("a pass deletes Events last seen a TTL ago, in batches, each with its DELETED watch event; recent, counted-up and other objects stay", async () => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  try {
    const now = Date.now();
    const old = new Date(now - 2 * HOUR);
    await Promise.all(Array.from({ length: 1200 }, (_, i) => recordEvent(store, { involvedObject: rb(`old-${i}`), reason: "ScheduleBindingSucceed", message: "ok", component: "scheduler", now: old })));
    const fresh = await recordEvent(store, { involvedObject: rb("fresh"), reason: "ScheduleBindingSucceed", message: "ok", component: "scheduler", now: new Date(now - 10 * 60_000) });
    // first seen two hours ago, seen again a minute ago: counted up, lastTimestamp recent
    await recordEvent(store, { involvedObject: rb("again"), reason: "EvictCluster", message: "m", component: "taint-manager", now: old });
    const again = await recordEvent(store, { involvedObject: rb("again"), reason: "EvictCluster", message: "m", component: "taint-manager", now: new Date(now - 60_000) });
    assert.equal(again.count, 2);
    // the newer shape, with only an eventTime
    const modern = await store.create<KubeObject>({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "modern-old", namespace: "web" },
      eventTime: new Date(now - 2 * HOUR).toISOString().replace("Z", "000Z"),
      reason: "Started",
      action: "Start",
      reportingController: "flotilla.io/test",
      reportingInstance: "test",
    } as KubeObject);
    // an Event with a finalizer is only marked: its finalizer's owner finishes it
    const held = await recordEvent(store, { involvedObject: rb("held"), reason: "R", message: "m", component: "c", now: old });
    await store.update({ ...held, metadata: { ...held.metadata, finalizers: ["example.com/keep"] } });
    const cm = await store.create<KubeObject>({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "not-an-event", namespace: "web", creationTimestamp: old.toISOString() } });

    const watch = await watchAll(store, [GK.event, "events.k8s.io/Event"]);
    const r = await collectExpiredEvents(store, { ttlMs: HOUR, batch: 500 });
    assert.equal(r.deleted, 1200 + 1 + 1, "the 1200 old ones, the old events.k8s.io one, the one with a finalizer (marked)");
    assert.equal(r.scanned, 1200 + 4);
    const left = (await store.list(GK.event)).items.map((e) => e.metadata.name!).sort();
    assert.deepEqual(left, [again.metadata.name!, fresh.metadata.name!, held.metadata.name!].sort());
    assert.ok((await store.get({ gk: GK.event, namespace: "web", name: held.metadata.name! }))?.metadata.deletionTimestamp, "marked for deletion");
    assert.equal(await store.get({ gk: "events.k8s.io/Event", namespace: "web", name: modern.metadata.name! }), undefined);
    assert.ok(await store.get({ gk: "/ConfigMap", namespace: "web", name: cm.metadata.name! }));
    await eventually(() => watch.deleted().length === 1201, { timeoutMs: 10_000, message: "a DELETED watch event per deleted Event" });
    await watch.stop();
    assert.ok(watch.deleted().includes("modern-old"));

    // a second pass finds nothing more to do (the marked one is left to its finalizer)
    assert.deepEqual(await collectExpiredEvents(store, { ttlMs: HOUR }), { scanned: 3, deleted: 0, skipped: 0 });
  } finally {
    await db.drop();
  }
});

test("an Event seen again between the read and the delete is kept (the delete carries the version read)", async () => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  try {
    const old = new Date(Date.now() - 2 * HOUR);
    const racy = await recordEvent(store, { involvedObject: rb("racy"), reason: "R", message: "m", component: "c", now: old });
    const gone = await recordEvent(store, { involvedObject: rb("gone"), reason: "R", message: "m", component: "c", now: old });
    // a store whose Event list, once read, sees "racy" counted up before the collector deletes
    const raced = Object.create(store) as ObjectStore;
    raced.listStream = (async (gk: string, o: object) => {
      const list = await store.listStream(gk, o);
      return {
        resourceVersion: list.resourceVersion,
        async *[Symbol.asyncIterator]() {
          yield* list;
          if (gk === GK.event) await recordEvent(store, { involvedObject: rb("racy"), reason: "R", message: "m", component: "c" });
        },
      };
    }) as ObjectStore["listStream"];
    const r = await collectExpiredEvents(raced, { ttlMs: HOUR });
    assert.deepEqual(r, { scanned: 2, deleted: 1, skipped: 1 });
    assert.equal((await store.get<KubeObject & { count: number }>({ gk: GK.event, namespace: "web", name: racy.metadata.name! }))?.count, 2, "kept: it was seen again");
    assert.equal(await store.get({ gk: GK.event, namespace: "web", name: gone.metadata.name! }), undefined);
  } finally {
    await db.drop();
  }
});

test("with a short TTL, two gateway replicas' collectors: one collects, Events go once past the TTL, the other takes over when it stops", async () => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  const store2 = new ObjectStore(db.sql);
  const opts = { ttlMs: 3000, everyMs: 100, log: silentLogger(), election: { retryMs: 100, checkMs: 100 } };
  const a = startEventCollector({ store, sql: db.sql, ...opts });
  await a.whenLeading();
  const b = startEventCollector({ store: store2, sql: db.sql, ...opts });
  try {
    const watch = await watchAll(store, [GK.event]);
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 20 }, (_, i) => recordEvent(store, { involvedObject: rb(`e-${i}`), reason: "R", message: "m", component: "c" })));
    const kept = await recordEvent(store, { involvedObject: rb("kept"), reason: "R", message: "m", component: "c" });
    await sleep(1500);
    await recordEvent(store, { involvedObject: rb("kept"), reason: "R", message: "m", component: "c" }); // seen again
    await eventually(async () => (await store.list(GK.event)).items.length === 1, { timeoutMs: 6000 });
    const tookMs = Date.now() - t0;
    // Event times are whole seconds (as Kubernetes'): an Event goes between TTL - 1 s and TTL after it was recorded
    assert.ok(tookMs >= 2000, `not before the TTL (${tookMs} ms)`);
    assert.ok(tookMs < 4000, `soon after it (${tookMs} ms)`);
    assert.equal((await store.list(GK.event)).items[0]!.metadata.name, kept.metadata.name);
    await eventually(() => a.stats.deleted === 20, { message: "the pass that deleted them is done" });
    assert.equal(b.stats.passes, 0, "the standby replica collected nothing");
    assert.equal([a, b].filter((c) => c.leading).length, 1);

    await a.stop();
    await b.whenLeading();
    await eventually(async () => (await store.list(GK.event)).items.length === 0, { timeoutMs: 5000, message: "the other replica collects the rest" });
    await eventually(() => b.stats.deleted === 1);
    await eventually(() => watch.deleted().length === 21, { timeoutMs: 5000 });
    await watch.stop();
  } finally {
    await a.stop();
    await b.stop();
    await db.drop();
  }
});
