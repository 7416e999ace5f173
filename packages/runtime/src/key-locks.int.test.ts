import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { freshDatabase, sleep } from "@flotilla/testkit";
import { createController, type Controller } from "./controller.js";
import { keyLocks, type KeyLocks } from "@flotilla/store";
import { done, type Reconciler } from "./result.js";

const log = pino({ level: process.env.LOG_LEVEL ?? "silent" });

test("a key lock is held by one session at a time, per controller and key, and goes with its session", async () => {
  const db = await freshDatabase();
  const a = keyLocks(db.sql, { applicationName: "a" });
  const b = keyLocks(db.sql, { applicationName: "b" });
  try {
    assert.equal(await a.tryLock("c", "k"), true);
    assert.equal(await b.tryLock("c", "k"), false, "held by the other session");
    assert.equal(await b.tryLock("c", "other"), true, "another key");
    assert.equal(await b.tryLock("d", "k"), true, "another controller");
    await a.unlock("c", "k");
    assert.equal(await b.tryLock("c", "k"), true, "given back");
    assert.equal(await a.tryLock("c", "k"), false);
    // a replica that dies: its session ends and its locks with it
    await b.close();
    assert.equal(await a.tryLock("c", "k"), true);
  } finally {
    await a.close();
    await b.close();
    await db.drop();
  }
});

test("many tries and give-backs at once each get their own answer", async () => {
  const db = await freshDatabase();
  const a = keyLocks(db.sql, { applicationName: "a" });
  const b = keyLocks(db.sql, { applicationName: "b" });
  const keys = Array.from({ length: 50 }, (_, i) => `k${i}`);
  try {
    assert.deepEqual(await Promise.all(keys.map((k) => a.tryLock("c", k))), keys.map(() => true));
    // b asks for the even ones held by a and for ones of its own at the same moment
    const mixed = await Promise.all([...keys.filter((_, i) => i % 2 === 0).map((k) => b.tryLock("c", k)), b.tryLock("c", "mine")]);
    assert.deepEqual(mixed, [...keys.filter((_, i) => i % 2 === 0).map(() => false), true]);
    await Promise.all(keys.map((k) => a.unlock("c", k)));
    assert.deepEqual(await Promise.all(keys.map((k) => b.tryLock("c", k))), keys.map(() => true), "all given back");
  } finally {
    await a.close();
    await b.close();
    await db.drop();
  }
});

test("the tries of one moment share one statement, and a lock given back lingers for its own process only", async () => {
  const db = await freshDatabase();
  const a = keyLocks(db.sql, { applicationName: "a", lingerMs: 300 });
  const b = keyLocks(db.sql, { applicationName: "b", lingerMs: 0 });
  const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
  try {
    assert.deepEqual(await Promise.all(keys.map((k) => a.tryLock("c", k))), keys.map(() => true));
    assert.equal(a.statements, 1, "40 tries in one statement");
    const given = keys.map((k) => a.unlock("c", k));
    // lingering: the same process takes them again without a statement, another one is refused
    assert.equal(await a.tryLock("c", "k0"), true);
    assert.equal(a.statements, 1, "taken again while it lingered");
    assert.equal(await b.tryLock("c", "k1"), false, "another session waits while it lingers");
    await Promise.all(given.slice(1));
    assert.equal(a.statements, 2, "the give-backs share one statement");
    assert.equal(await b.tryLock("c", "k1"), true, "given back once it lingered");
    assert.equal(await b.tryLock("c", "k0"), false, "still held by the run that took it again");
    await a.unlock("c", "k0");
    assert.equal(await b.tryLock("c", "k0"), true);
  } finally {
    await a.close();
    await b.close();
    await db.drop();
  }
});

test("at most maxLingering locks linger: past that the oldest are given back at once", async () => {
  const db = await freshDatabase();
  const a = keyLocks(db.sql, { applicationName: "a", lingerMs: 60_000, maxLingering: 2 });
  const b = keyLocks(db.sql, { applicationName: "b" });
  try {
    for (const k of ["k1", "k2", "k3", "k4"]) assert.equal(await a.tryLock("c", k), true);
    const given = ["k1", "k2", "k3", "k4"].map((k) => a.unlock("c", k));
    await Promise.all(given.slice(0, 2));
    assert.deepEqual(await Promise.all(["k1", "k2", "k3", "k4"].map((k) => b.tryLock("c", k))), [true, true, false, false]);
  } finally {
    await a.close();
    await b.close();
    await db.drop();
  }
});

test("replicas whose controllers share keys never reconcile one key at once, and every enqueue still resolves after a reconcile that started after it", async () => {
  const db = await freshDatabase();
  const locks: KeyLocks[] = [];
  const controllers: Controller[] = [];
  try {
    const running = new Map<string, string>();
    const overlaps: string[] = [];
    const runs: { replica: string; key: string }[] = [];
    const replica = (name: string) => {
      const l = keyLocks(db.sql, { applicationName: name });
      locks.push(l);
      const reconciler: Reconciler = {
        name: "shared",
        async reconcile(key) {
          const other = running.get(key);
          if (other) overlaps.push(`${key}: ${name} while ${other}`);
          running.set(key, name);
          runs.push({ replica: name, key });
          await sleep(30);
          running.delete(key);
          return done();
        },
      };
      const c = createController({ reconciler, sql: db.sql, log, keyLocks: l, concurrency: 4, busyRetryMs: 10, timerPollMs: 50 });
      controllers.push(c);
      c.start();
      return c;
    };
    const replicas = [replica("r1"), replica("r2"), replica("r3")];
    const keys = ["a", "b", "c", "d"];
    // every key woken on every replica, several times, as shared wake-ups and resyncs do
    const waits: Promise<void>[] = [];
    for (let round = 0; round < 5; round++) {
      for (const c of replicas) for (const k of keys) waits.push(c.enqueue(k));
      await sleep(7);
    }
    await Promise.all(waits);
    assert.deepEqual(overlaps, []);
    for (const k of keys) assert.ok(new Set(runs.filter((r) => r.key === k).map((r) => r.replica)).size > 1, `key ${k} reconciled by more than one replica, one at a time`);
    const busy = replicas.reduce((n, c) => n + c.snapshot().metrics.keyBusy, 0);
    assert.ok(busy > 0, "some runs were put off for a key another replica held");

    // without the locks the same wake-ups overlap: the check above can fail
    const bare = new Map<string, number>();
    let overlapped = 0;
    const unlocked = [1, 2, 3].map(() => {
      const c = createController({
        reconciler: {
          name: "bare",
          async reconcile(key) {
            if (bare.get(key)) overlapped++;
            bare.set(key, (bare.get(key) ?? 0) + 1);
            await sleep(30);
            bare.set(key, bare.get(key)! - 1);
            return done();
          },
        },
        sql: db.sql,
        log,
        timerPollMs: 50,
      });
      controllers.push(c);
      c.start();
      return c;
    });
    await Promise.all(unlocked.flatMap((c) => keys.map((k) => c.enqueue(k))));
    assert.ok(overlapped > 0);
  } finally {
    await Promise.all(controllers.map((c) => c.stop()));
    await Promise.all(locks.map((l) => l.close()));
    await db.drop();
  }
});
