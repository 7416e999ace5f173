import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
import { ObjectStore, sibling } from "@flotilla/store";
import { eventually, freshDatabase } from "@flotilla/testkit";
import { Informer, type InformerEvent } from "./informer.js";

const GK = "/ConfigMap";
const cm = (name: string, data: Record<string, string> = {}, namespace = "default"): KubeObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });

async function withStore(fn: (store: ObjectStore) => Promise<void>) {
  const db = await freshDatabase();
  try {
    await fn(new ObjectStore(db.sql));
  } finally {
    await db.drop();
  }
}

test("an informer lists first, then follows every change in order, and keeps what transform returns", () =>
  withStore(async (store) => {
    await store.create(cm("a", { v: "1" }));
    await store.create(cm("x", {}, "other"));
    const events: InformerEvent<string | undefined>[] = [];
    const inf = new Informer<string | undefined>({ store, gk: GK, transform: (o) => (o as { data?: Record<string, string> }).data?.v, onEvent: (e) => events.push(e) });
    await inf.start();
    try {
      assert.deepEqual(events.map((e) => [e.type, e.key, e.value, e.initial]), [["ADDED", "default/a", "1", true], ["ADDED", "other/x", undefined, true]]);
      assert.equal(inf.get("default/a"), "1");
      events.length = 0;
      const a = await store.mustGet({ gk: GK, namespace: "default", name: "a" });
      await store.update({ ...a, data: { v: "2" } });
      await store.create(cm("b", { v: "3" }));
      await store.delete({ gk: GK, namespace: "other", name: "x" });
      await store.create({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "ignored", namespace: "default" }, spec: {} });
      await eventually(() => events.length >= 3, { timeoutMs: 5000 });
      assert.deepEqual(events.map((e) => [e.type, e.key, e.value, e.initial]), [["MODIFIED", "default/a", "2", false], ["ADDED", "default/b", "3", false], ["DELETED", "other/x", undefined, false]]);
      assert.equal(inf.size, 2);
      assert.deepEqual([...inf.entries()].sort(), [["default/a", "2"], ["default/b", "3"]]);
    } finally {
      await inf.stop();
    }
  }));

test("after its watch history is pruned away, an informer lists again and delivers the difference", () =>
  withStore(async (store) => {
    await store.create(cm("keep"));
    await store.create(cm("gone"));
    const events: InformerEvent<KubeObject>[] = [];
    // a store whose watch fails once with 410 Gone, as after a long disconnect
    let failOnce = true;
    const flaky = {
      list: store.list.bind(store),
      watch: async (gk: string | undefined, o: Parameters<ObjectStore["watch"]>[1]) => {
        if (failOnce) {
          failOnce = false;
          // changes happen while the watch is down
          await store.delete({ gk: GK, namespace: "default", name: "gone" });
          await store.create(cm("new"));
          throw Object.assign(new Error("too old resource version"), { name: "GoneError" });
        }
        return store.watch(gk, o);
      },
    } as Pick<ObjectStore, "list" | "watch">;
    const inf = new Informer({ store: flaky, gk: GK, backoff: { baseMs: 10, maxMs: 10 }, onEvent: (e) => events.push(e) });
    await inf.start();
    try {
      await eventually(() => inf.get("default/new") && !inf.get("default/gone"), { timeoutMs: 5000 });
      assert.deepEqual(
        events.filter((e) => !e.initial).map((e) => [e.type, e.key]),
        [["ADDED", "default/new"], ["DELETED", "default/gone"]],
      );
      await store.create(cm("later"));
      await eventually(() => inf.get("default/later"), { timeoutMs: 5000 });
    } finally {
      await inf.stop();
    }
  }));

test("one informer follows several kinds in one watch, each object under its own kind", () =>
  withStore(async (store) => {
    const events: InformerEvent<KubeObject>[] = [];
    const inf = new Informer({ store, gk: ["/ConfigMap", "/Secret"], onEvent: (e) => events.push(e) });
    await inf.start();
    try {
      await store.create(cm("same"));
      await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "same", namespace: "default" } });
      await store.create({ apiVersion: "v1", kind: "Service", metadata: { name: "ignored", namespace: "default" } });
      await eventually(() => events.length >= 2, { timeoutMs: 5000 });
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(events.map((e) => [e.type, e.gk, e.key]), [["ADDED", "/ConfigMap", "default/same"], ["ADDED", "/Secret", "default/same"]]);
      assert.equal(inf.get("default/same", "/Secret")?.kind, "Secret");
      assert.equal(inf.get("default/same")?.kind, "ConfigMap");
      assert.equal(inf.size, 2);
    } finally {
      await inf.stop();
    }
  }));

/** A store whose watch holds its events back while `paused` (a watch lagging behind the reads). */
function lagging(store: ObjectStore) {
  const s = { paused: true };
  const wrapped = {
    list: store.list.bind(store),
    watch: async (gk: string | readonly string[] | undefined, o: Parameters<ObjectStore["watch"]>[1]) => {
      const events = await store.watch(gk, o);
      return (async function* () {
        for await (const e of events) {
          while (s.paused && !o?.signal?.aborted) await new Promise((r) => setTimeout(r, 10));
          yield e;
        }
      })();
    },
  } as Pick<ObjectStore, "list" | "watch">;
  return Object.assign(s, { store: wrapped });
}

test("a read outside the watch brings one object up at once; the watch's older news of it changes nothing", () =>
  withStore(async (store) => {
    const lag = lagging(store);
    const events: InformerEvent<string | undefined>[] = [];
    const inf = new Informer<string | undefined>({ store: lag.store, gk: GK, transform: (o) => (o as { data?: Record<string, string> }).data?.v, onEvent: (e) => events.push(e) });
    await inf.start();
    try {
      const ref = { gk: GK, namespace: "default", name: "a" };
      await store.create(cm("a", { v: "1" }));
      const a = await store.mustGet(ref);
      await store.update({ ...a, data: { v: "2" } });
      assert.equal(await inf.refresh("default/a", () => store.get(ref)), "2");
      assert.equal(await inf.refresh("default/a", () => Promise.resolve(a)), "2", "an older read changes nothing");
      lag.paused = false;
      await store.create(cm("b"));
      await eventually(() => inf.size === 2, { timeoutMs: 5000 });
      assert.deepEqual(events.map((e) => [e.type, e.key, e.value]), [["ADDED", "default/a", "2"], ["ADDED", "default/b", undefined]]);
      await store.update({ ...(await store.mustGet(ref)), data: { v: "3" } });
      await eventually(() => inf.get("default/a") === "3", { timeoutMs: 5000 });
    } finally {
      lag.paused = false;
      await inf.stop();
    }
  }));

test("an object a read found gone is dropped at once, and the watch's late news of it does not bring it back", () =>
  withStore(async (store) => {
    const ref = { gk: GK, namespace: "default", name: "a" };
    await store.create(cm("a", { v: "1" }));
    const lag = lagging(store);
    const events: InformerEvent<KubeObject>[] = [];
    const inf = new Informer({ store: lag.store, gk: GK, onEvent: (e) => events.push(e) });
    await inf.start();
    try {
      const a = await store.mustGet(ref);
      await store.update({ ...a, data: { v: "2" } });
      await store.delete(ref);
      assert.equal(await inf.refresh("default/a", () => store.get(ref)), undefined);
      assert.deepEqual(events.filter((e) => !e.initial).map((e) => [e.type, e.key, e.object.metadata.uid]), [["DELETED", "default/a", a.metadata.uid]]);
      lag.paused = false; // the update and the deletion arrive now
      await store.create(cm("a", { v: "new" }));
      await eventually(() => inf.get("default/a"), { timeoutMs: 5000 });
      assert.deepEqual(
        events.filter((e) => !e.initial).map((e) => [e.type, (e.object as { data?: Record<string, string> }).data?.v]),
        [["DELETED", undefined], ["ADDED", "new"]],
        "neither the update nor the deletion of the object already gone is delivered",
      );
    } finally {
      lag.paused = false;
      await inf.stop();
    }
  }));

test("resync lists again while the watch goes on, and delivers the difference", () =>
  withStore(async (store) => {
    await store.create(cm("gone"));
    const lag = lagging(store);
    const events: InformerEvent<KubeObject>[] = [];
    const inf = new Informer({ store: lag.store, gk: GK, onEvent: (e) => events.push(e) });
    await inf.start();
    try {
      await store.create(cm("new"));
      await store.delete({ gk: GK, namespace: "default", name: "gone" });
      await inf.resync();
      assert.deepEqual(events.filter((e) => !e.initial).map((e) => [e.type, e.key]), [["ADDED", "default/new"], ["DELETED", "default/gone"]]);
      lag.paused = false;
      await store.create(cm("later"));
      await eventually(() => inf.get("default/later"), { timeoutMs: 5000 });
      assert.deepEqual(events.filter((e) => !e.initial).map((e) => [e.type, e.key]), [["ADDED", "default/new"], ["DELETED", "default/gone"], ["ADDED", "default/later"]]);
    } finally {
      lag.paused = false;
      await inf.stop();
    }
  }));

test("caughtUp: once a write is committed, the informer holds it when caughtUp says so; a change behind a transaction still open makes it say no until that ends", async () => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  const early = sibling(db.sql, { max: 1 });
  try {
    const inf = new Informer({ store, gk: GK });
    assert.equal(await inf.caughtUp(), false, "not started: no");
    await inf.start();
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let begun!: () => void;
    const started = new Promise<void>((r) => (begun = r));
    try {
      // (a transaction open anywhere on the server, another test's too, can make an answer no for a moment)
      await eventually(() => inf.caughtUp(), { timeoutMs: 5000 });
      // each write, the moment it is committed, without waiting for the watch's notice
      for (let i = 0; i < 20; i++) {
        await store.create(cm(`c${i}`));
        await eventually(() => inf.caughtUp(), { timeoutMs: 5000 });
        assert.ok(inf.get(`default/c${i}`), `c${i} held once caught up`);
      }
      // concurrent callers share one poll: the same answer
      const answers = await Promise.all([inf.caughtUp(), inf.caughtUp(), inf.caughtUp()]);
      assert.ok(answers.every((a) => a === answers[0]), String(answers));
      // an older transaction still open (it took its id first): a later write of the kind is not below the xmin yet
      const tx = early.begin(async (t) => {
        await t`SELECT pg_current_xact_id()`;
        begun();
        await held;
      });
      await started;
      await store.create(cm("late"));
      assert.equal(await inf.caughtUp(), false, "a committed change it cannot deliver yet");
      assert.equal(inf.get("default/late"), undefined);
      commit();
      await tx;
      await eventually(() => inf.caughtUp(), { timeoutMs: 5000 });
      assert.ok(inf.get("default/late"));
    } finally {
      commit();
      await inf.stop();
    }
    assert.equal(await inf.caughtUp(), false, "stopped: no");
  } finally {
    await early.end({ timeout: 1 });
    await db.drop();
  }
});
