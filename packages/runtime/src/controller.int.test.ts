import { test } from "node:test";
import net from "node:net";
import assert from "node:assert/strict";
import { pino } from "pino";
import { createClient } from "@flotilla/store";
import { freshDatabase, eventually, sleep, type TestDatabase } from "@flotilla/testkit";
import { createController, StoppedError, type Controller, type ControllerOptions } from "./controller.js";
import { after, done, retry, terminal, type Reconciler, type Result, type ReconcileContext } from "./result.js";
import { DurableTimers } from "./timers.js";
import { METRICS, Metrics } from "./metrics.js";

const log = pino({ level: process.env.LOG_LEVEL ?? "silent" });

type Fn = (key: string, ctx: ReconcileContext) => Promise<Result>;

/** A reconciler that records every run and delegates to `fn`. */
function recorder(name: string, fn: Fn) {
  const runs: { key: string; start: number; end?: number; reconcileId: string }[] = [];
  let current = 0;
  let maxConcurrent = 0;
  const perKey = new Map<string, number>();
  let maxPerKey = 0;
  const reconciler: Reconciler = {
    name,
    async reconcile(key, ctx) {
      const run: { key: string; start: number; end?: number; reconcileId: string } = { key, start: Date.now(), reconcileId: ctx.reconcileId };
      runs.push(run);
      current++;
      maxConcurrent = Math.max(maxConcurrent, current);
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
      maxPerKey = Math.max(maxPerKey, perKey.get(key)!);
      try {
        return await fn(key, ctx);
      } finally {
        run.end = Date.now();
        current--;
        perKey.set(key, perKey.get(key)! - 1);
      }
    },
  };
  return {
    reconciler,
    runs,
    count: (key: string) => runs.filter((r) => r.key === key).length,
    get maxConcurrent() {
      return maxConcurrent;
    },
    get maxPerKey() {
      return maxPerKey;
    },
  };
}

async function withDb(fn: (db: TestDatabase, made: Controller[], make: (o: Partial<ControllerOptions> & Pick<ControllerOptions, "reconciler">) => Controller) => Promise<void>) {
  const db = await freshDatabase();
  const made: Controller[] = [];
  const make = (o: Partial<ControllerOptions> & Pick<ControllerOptions, "reconciler">) => {
    const c = createController({ sql: db.sql, log, timerPollMs: 50, backoff: { baseMs: 20, maxMs: 1000 }, ...o });
    made.push(c);
    return c;
  };
  try {
    await fn(db, made, make);
  } finally {
    await Promise.all(made.map((c) => c.stop()));
    await db.drop();
  }
}

function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

const settled = async (p: Promise<unknown>) => {
  let s = false;
  p.then(
    () => (s = true),
    () => (s = true),
  );
  await sleep(0);
  await sleep(0);
  return s;
};

test("a key enqueued 10 times while queued is reconciled once", () =>
  withDb(async (_db, _m, make) => {
    const g = gate();
    const r = recorder("dedupe", async (key) => {
      if (key === "busy") await g.p;
      return done();
    });
    const c = make({ reconciler: r.reconciler, concurrency: 1 });
    c.start();
    const busy = c.enqueue("busy");
    await eventually(() => r.count("busy") === 1);
    const ps = Array.from({ length: 10 }, () => c.enqueue("ns/a"));
    assert.equal(c.snapshot().queueDepth, 1);
    g.open();
    await Promise.all([busy, ...ps]);
    await sleep(50);
    assert.equal(r.count("ns/a"), 1);
  }));

test("never two reconciles of one key at once; a key enqueued during its reconcile runs once more afterwards", () =>
  withDb(async (_db, _m, make) => {
    const r = recorder("one-in-flight", async () => {
      await sleep(60);
      return done();
    });
    const c = make({ reconciler: r.reconciler, concurrency: 8 });
    c.start();
    const first = c.enqueue("k");
    await eventually(() => r.count("k") === 1);
    const during = [c.enqueue("k"), c.enqueue("k"), c.enqueue("k")];
    await first;
    await Promise.all(during);
    await sleep(100);
    assert.equal(r.count("k"), 2, "the three enqueues during the run collapse into one more run");
    assert.equal(r.maxPerKey, 1);
    const [a, b] = r.runs;
    assert.ok(b.start >= a.end!, "the second run started after the first ended");
  }));

test("reconciles run at most `concurrency` at a time", () =>
  withDb(async (_db, _m, make) => {
    const r = recorder("bounded", async () => {
      await sleep(30);
      return done();
    });
    const c = make({ reconciler: r.reconciler, concurrency: 3 });
    c.start();
    await Promise.all(Array.from({ length: 20 }, (_, i) => c.enqueue(`k${i}`)));
    assert.equal(r.runs.length, 20);
    assert.equal(r.maxConcurrent, 3);
  }));

test("a failing key backs off exponentially, and the backoff resets after a success", () =>
  withDb(async (_db, _m, make) => {
    let calls = 0;
    const r = recorder("backoff", async () => {
      calls++;
      if (calls <= 4 || calls === 6) throw new Error(`attempt ${calls} failed`);
      return done();
    });
    const c = make({ reconciler: r.reconciler, backoff: { baseMs: 40, maxMs: 10_000 } });
    c.start();
    await c.enqueue("k"); // attempts 1-4 fail, 5 succeeds
    const gaps = r.runs.slice(1).map((run, i) => run.start - r.runs[i].end!);
    for (const [i, want] of [40, 80, 160, 320].entries()) {
      assert.ok(gaps[i] >= want - 5 && gaps[i] < want + 250, `gap ${i + 1} is ${gaps[i]} ms, want about ${want}`);
    }
    await c.enqueue("k"); // attempt 6 fails, 7 succeeds: back to the base delay
    const gap = r.runs[6].start - r.runs[5].end!;
    assert.ok(gap >= 35 && gap < 250, `after a success the first retry waits the base again (${gap} ms)`);
    const m = c.snapshot().metrics;
    assert.equal(m.reconciles.error, 5);
    assert.equal(m.reconciles.done, 2);
  }));

test("enqueue resolves only after a reconcile that started after it succeeds, and waits across failures", () =>
  withDb(async (_db, _m, make) => {
    const g = gate();
    let fail = 0;
    const r = recorder("enqueue-promise", async () => {
      if (r.runs.length === 1) await g.p;
      if (fail > 0) {
        fail--;
        throw new Error("transient");
      }
      return done();
    });
    const c = make({ reconciler: r.reconciler, backoff: { baseMs: 50, maxMs: 50 } });
    c.start();
    const first = c.enqueue("k");
    await eventually(() => r.runs.length === 1);
    const second = c.enqueue("k"); // arrives while run 1 is in progress
    fail = 2; // run 1 itself fails too
    g.open();
    await eventually(() => r.runs.length >= 2);
    assert.equal(await settled(first), false, "run 1 failed: still pending");
    assert.equal(await settled(second), false, "run 2 failed: still pending");
    await Promise.all([first, second]);
    assert.equal(r.runs.length, 3, "run 3 succeeded and settled both");

    // Enqueued during a run that then succeeds: not settled by that run, only by the next one.
    const g2 = gate();
    const slow = recorder("enqueue-promise-2", async () => {
      if (slow.runs.length === 1) await g2.p;
      return done();
    });
    const c2 = make({ reconciler: slow.reconciler });
    c2.start();
    const a = c2.enqueue("x");
    await eventually(() => slow.runs.length === 1);
    let bResolvedAtRuns = -1;
    const b = c2.enqueue("x").then(() => (bResolvedAtRuns = slow.runs.length));
    g2.open();
    await a;
    await b;
    assert.equal(bResolvedAtRuns, 2, "the enqueue during run 1 was settled by run 2");
  }));

test("a terminal failure settles the enqueue and is not retried; a timeout or a synchronous throw is retried", () =>
  withDb(async (_db, _m, make) => {
    let hung = 0;
    const r = recorder("guards", async (key, ctx) => {
      if (key === "bad") terminal(new Error("cannot fix"));
      if (key === "hangs" && hung++ === 0) {
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
        return done();
      }
      return done();
    });
    let panics = 0;
    const panicky: Reconciler = {
      name: "panics",
      // Not an async function: the first call throws synchronously instead of rejecting.
      reconcile(key: string) {
        if (panics++ === 0) throw new Error(`sync throw for ${key}`);
        return Promise.resolve(done());
      },
    };
    const c = make({ reconciler: r.reconciler, timeoutMs: 100 });
    const p = make({ reconciler: panicky });
    c.start();
    p.start();
    await c.enqueue("bad");
    await sleep(150);
    assert.equal(r.count("bad"), 1, "not retried");
    const t0 = Date.now();
    await c.enqueue("hangs");
    assert.equal(r.count("hangs"), 2);
    assert.ok(Date.now() - t0 >= 100);
    await p.enqueue("k");
    assert.equal(panics, 2);
    const m = c.snapshot().metrics;
    assert.equal(m.errors.terminal, 1);
    assert.equal(m.errors.timeout, 1);
    assert.equal(p.snapshot().metrics.errors.error, 1);
  }));

test("after() leaves a durable timer that fires in a new controller instance after a restart", () =>
  withDb(async (db, _m, make) => {
    const name = "restart";
    const a = recorder(name, async () => after(600));
    const ca = make({ reconciler: a.reconciler });
    ca.start();
    await ca.enqueue("ns/obj");
    await ca.stop();
    const due = await new DurableTimers(db.sql, name, 60_000).dueInMs("ns/obj");
    assert.ok(due !== null && due > 300 && due <= 600, `timer row due in ${due} ms`);

    const b = recorder(name, async () => done());
    const cb = make({ reconciler: b.reconciler });
    const t0 = Date.now();
    cb.start();
    await eventually(() => b.count("ns/obj") === 1, { timeoutMs: 3000 });
    const firedAfter = Date.now() - t0;
    assert.ok(firedAfter >= due - 60 && firedAfter < due + 400, `fired ${firedAfter} ms after restart (due in ${due})`);
    await eventually(async () => (await new DurableTimers(db.sql, name, 60_000).dueInMs("ns/obj")) === null, { message: "done() deleted the timer" });
    assert.equal(cb.snapshot().metrics.timersFired, 1);
  }));

test("a later after() replaces an earlier timer, and done() deletes it", () =>
  withDb(async (db, _m, make) => {
    const results: Result[] = [after(60_000), after(200), done()];
    const r = recorder("replace", async () => results.shift() ?? done());
    const c = make({ reconciler: r.reconciler });
    c.start();
    const timers = new DurableTimers(db.sql, "replace", 60_000);
    await c.enqueue("k");
    assert.ok((await timers.dueInMs("k"))! > 59_000);
    await c.enqueue("k");
    assert.ok((await timers.dueInMs("k"))! <= 200);
    await eventually(() => r.count("k") === 3, { timeoutMs: 2000 });
    await eventually(async () => (await timers.dueInMs("k")) === null);
  }));

test("retry() waits twice as long each time in a row, continues the count in a new instance, and after() ends the run", () =>
  withDb(async (db, _m, make) => {
    const retries = () => db.sql<{ retries: number }[]>`SELECT retries FROM timers WHERE controller = 'retry' AND key = 'k'`.then((r) => r[0]?.retries ?? null);
    const timers = new DurableTimers(db.sql, "retry", 60_000);
    // base 10 s so that no timer fires during the test: each enqueue is one more retry in a row
    const results: Result[] = [retry(10_000, 35_000), retry(10_000, 35_000), retry(10_000, 35_000)];
    const a = make({ reconciler: recorder("retry", async () => results.shift() ?? done()).reconciler });
    a.start();
    await a.enqueue("k");
    await eventually(async () => (await retries()) === 1);
    const first = (await timers.dueInMs("k"))!;
    assert.ok(first > 9_000 && first <= 10_000, `first retry in ${first} ms`);
    await a.enqueue("k");
    await eventually(async () => (await retries()) === 2);
    const second = (await timers.dueInMs("k"))!;
    assert.ok(second > 19_000 && second <= 20_000, `second retry in ${second} ms`);
    await a.stop();
    // a new instance (another replica, or this one restarted) continues the count, up to the cap
    const next: Result[] = [retry(10_000, 35_000), after(60_000), retry(10_000, 35_000)];
    const b = make({ reconciler: recorder("retry", async () => next.shift() ?? done()).reconciler });
    b.start();
    await b.enqueue("k");
    await eventually(async () => (await retries()) === 3);
    const third = (await timers.dueInMs("k"))!;
    assert.ok(third > 34_000 && third <= 35_000, `third retry capped at 35 s, in ${third} ms`);
    await b.enqueue("k");
    await eventually(async () => (await retries()) === 0);
    await b.enqueue("k");
    await eventually(async () => (await retries()) === 1);
    const again = (await timers.dueInMs("k"))!;
    assert.ok(again > 9_000 && again <= 10_000, `after after(), retries start again from the base: ${again} ms`);
  }));

test("replicas of one controller fire each due timer once", () =>
  withDb(async (db, _m, make) => {
    const name = "replicated";
    await db.sql`INSERT INTO timers (controller, key, due_at) SELECT ${name}, 'k' || g, now() + (g % 5) * interval '20 milliseconds' FROM generate_series(1, 200) g`;
    const fired = new Map<string, number>();
    const reconciler: Reconciler = {
      name,
      async reconcile(key) {
        fired.set(key, (fired.get(key) ?? 0) + 1);
        await sleep(2);
        return done();
      },
    };
    const cs = [0, 1, 2].map(() => make({ reconciler, timerPollMs: 20, concurrency: 8 }));
    cs.forEach((c) => c.start());
    await eventually(() => fired.size === 200, { timeoutMs: 5000 });
    await sleep(300);
    assert.deepEqual([...fired.values()].filter((n) => n !== 1), [], "no timer fired twice");
    const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM timers WHERE controller = ${name}`;
    assert.equal(n, 0);
    assert.equal(cs.reduce((s, c) => s + c.snapshot().metrics.timersFired, 0), 200);
  }));

test("a claimed timer whose reconcile never finished fires again after its lease", () =>
  withDb(async (db, _m, make) => {
    const name = "lease";
    await db.sql`INSERT INTO timers (controller, key, due_at) VALUES (${name}, 'k', now())`;
    const hang = recorder(name, async (_k, ctx) => {
      await new Promise((r) => ctx.signal.addEventListener("abort", r));
      throw new Error("aborted");
    });
    const a = make({ reconciler: hang.reconciler, timerLeaseMs: 500, stopTimeoutMs: 50, abortGraceMs: 50 });
    a.start();
    await eventually(() => hang.count("k") === 1);
    await a.stop(); // the replica dies mid-reconcile
    const ok = recorder(name, async () => done());
    const b = make({ reconciler: ok.reconciler, timerLeaseMs: 500 });
    const t0 = Date.now();
    b.start();
    await eventually(() => ok.count("k") === 1, { timeoutMs: 3000 });
    assert.ok(Date.now() - t0 >= 300, "not before the lease ran out");
  }));

test("resync enqueues every listed key periodically", () =>
  withDb(async (_db, _m, make) => {
    const r = recorder("resync", async () => done());
    const c = make({ reconciler: r.reconciler, resyncMs: 100, listKeys: async () => ["a", "b", "c"] });
    c.start();
    await eventually(() => ["a", "b", "c"].every((k) => r.count(k) >= 3), { timeoutMs: 2000 });
    assert.ok(c.snapshot().metrics.resyncs >= 3);
  }));

test("stop waits for running reconciles, starts nothing new, and rejects pending enqueues", () =>
  withDb(async (_db, _m, make) => {
    const r = recorder("graceful", async () => {
      await sleep(200);
      return done();
    });
    const c = make({ reconciler: r.reconciler, concurrency: 1 });
    c.start();
    const running = c.enqueue("a");
    await eventually(() => r.count("a") === 1);
    const queued = c.enqueue("b");
    queued.catch(() => {});
    const t0 = Date.now();
    await c.stop();
    assert.ok(Date.now() - t0 >= 150, "waited for the running reconcile");
    await running;
    await assert.rejects(queued, StoppedError);
    await assert.rejects(c.enqueue("c"), StoppedError);
    assert.equal(r.count("b"), 0);
    assert.equal(r.runs.every((x) => x.end !== undefined), true);
  }));

test("stop does not wait for a timer poll that Postgres does not answer", async () => {
  // a server that accepts connections and never answers: the poll's query hangs
  const sockets: net.Socket[] = [];
  const hole = net.createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => hole.listen(0, "127.0.0.1", r));
  const sql = createClient(`postgres://flotilla@127.0.0.1:${(hole.address() as net.AddressInfo).port}/none`, { max: 1 });
  try {
    const c = createController({ sql, log, timerPollMs: 50, reconciler: recorder("hole", async () => done()).reconciler });
    c.start();
    await eventually(() => sockets.length > 0, { message: "the poll connected" });
    const t0 = Date.now();
    await c.stop();
    assert.ok(Date.now() - t0 < 1000, `stop took ${Date.now() - t0} ms`);
  } finally {
    for (const s of sockets) s.destroy();
    hole.close();
    await sql.end({ timeout: 0 }).catch(() => {});
  }
});

test("metrics reflect the work done", () =>
  withDb(async (_db, _m, make) => {
    const r = recorder("metered", async (key) => {
      if (key === "err") throw new Error("x");
      return key === "later" ? after(60_000) : done();
    });
    const c = make({ reconciler: r.reconciler, backoff: { baseMs: 10_000, maxMs: 10_000 } });
    const metrics = new Metrics({ process: false });
    metrics.controllers([c]);
    c.start();
    await c.enqueue("ok");
    await c.enqueue("later", { since: Date.now() - 1000 });
    c.add("err");
    await eventually(() => c.snapshot().metrics.reconciles.error === 1);
    const text = await metrics.text();
    assert.match(text, new RegExp(`${METRICS.reconcileTotal}\\{controller="metered",result="done"\\} 1`));
    assert.match(text, new RegExp(`${METRICS.reconcileTotal}\\{controller="metered",result="after"\\} 1`));
    assert.match(text, new RegExp(`${METRICS.reconcileTotal}\\{controller="metered",result="error"\\} 1`));
    assert.match(text, new RegExp(`${METRICS.backoffKeys}\\{controller="metered"\\} 1`));
    assert.match(text, new RegExp(`${METRICS.reconcileDuration}_count\\{controller="metered"\\} 3`));
    // one wake-up said when its change was stored: its lag (about 1 s) is counted once
    assert.match(text, new RegExp(`${METRICS.wakeUpLag}_count\\{controller="metered"\\} 1`));
    assert.match(text, new RegExp(`${METRICS.wakeUpLag}_bucket\\{le="0.5",controller="metered"\\} 0`));
    assert.match(text, new RegExp(`${METRICS.wakeUpLag}_bucket\\{le="2.5",controller="metered"\\} 1`));
  }));

test("a key failing the same way on one version is parked as terminal: counted, not retried with backoff or by resync, and other keys proceed", () =>
  withDb(async (_db, _m, make) => {
    const versions = new Map([["poison", "10"]]);
    const r = recorder("poisoned", async (key, ctx) => {
      ctx.observed(versions.get(key) ?? "1");
      if (key === "poison" && versions.get(key) === "10") {
        const q: unknown = true;
        return (q as string).trim() as never; // what reading a cpu request of `true` as a string does
      }
      return done();
    });
    let listed: Array<string | { key: string; resourceVersion?: string }> = [];
    const c = make({ reconciler: r.reconciler, concurrency: 2, terminalAfterRepeats: 3, listKeys: async () => listed });
    c.start();
    const good = Array.from({ length: 50 }, (_, i) => `good-${i}`);
    const t0 = Date.now();
    await Promise.all([c.enqueue("poison"), ...good.map((k) => c.enqueue(k))]);
    assert.ok(Date.now() - t0 < 2000, "every enqueue settled promptly, the poison's too");
    assert.equal(r.count("poison"), 3, "three identical failures, then terminal");
    assert.ok(good.every((k) => r.count(k) === 1));
    const parked = c.terminalFailure("poison");
    assert.equal(parked?.version, "10");
    assert.equal(parked?.repeats, 3);
    assert.match(parked?.error ?? "", /^TypeError: .*trim is not a function/);
    assert.equal(c.snapshot().terminalKeys, 1);
    assert.equal(c.snapshot().metrics.errors.terminal, 1);
    assert.equal(c.snapshot().metrics.errors.error, 2, "the two failures before it were retried");

    await sleep(300);
    assert.equal(r.count("poison"), 3, "no backoff retry");
    await c.enqueue("poison", { resourceVersion: "10" });
    await c.enqueue("poison", { resourceVersion: "9" });
    assert.equal(r.count("poison"), 3, "a wake-up about the version it failed on (or older) runs nothing");
    assert.equal(c.snapshot().metrics.terminalSkips, 2);
    listed = ["poison", { key: "poison", resourceVersion: "10" }, "good-0"];
    await c.resync();
    await eventually(() => r.count("good-0") === 2);
    await sleep(100);
    assert.equal(r.count("poison"), 3, "a resync runs a parked key only for a newer version");
    const metrics = new Metrics({ process: false });
    metrics.controllers([c]);
    const text = await metrics.text();
    assert.match(text, new RegExp(`${METRICS.terminalKeys}\\{controller="poisoned"\\} 1`));
    assert.match(text, new RegExp(`${METRICS.reconcileErrors}\\{controller="poisoned",reason="terminal"\\} 1`));

    // the object is fixed: its wake-up runs the key, which succeeds and is no longer parked
    versions.set("poison", "11");
    await c.enqueue("poison", { resourceVersion: "11" });
    assert.equal(r.count("poison"), 4);
    assert.equal(c.terminalFailure("poison"), undefined);
    assert.equal(c.snapshot().terminalKeys, 0);
  }));

test("a parked key runs again when a related object changes (no version) or a resync lists a newer version; transient failures never park a key", () =>
  withDb(async (_db, _m, make) => {
    let connectFailures = 6;
    let version = "5";
    const r = recorder("related", async (key, ctx) => {
      if (key === "bad") {
        ctx.observed(version);
        terminal(new Error("cannot fix"));
      }
      if (key === "flaky" && connectFailures-- > 0) throw Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) });
      return done();
    });
    const c = make({ reconciler: r.reconciler, terminalAfterRepeats: 3, listKeys: async () => [{ key: "bad", resourceVersion: version }] });
    c.start();
    await c.enqueue("bad");
    assert.equal(r.count("bad"), 1, "terminal at once");
    await c.enqueue("bad");
    assert.equal(r.count("bad"), 2, "an enqueue without a version (a related object changed) runs it");
    c.add("bad");
    await eventually(() => r.count("bad") === 3);
    version = "6";
    await c.resync();
    await eventually(() => r.count("bad") === 4, { message: "a resync listing a newer version runs it" });
    await c.resync();
    await sleep(100);
    assert.equal(r.count("bad"), 4, "but not the same version twice");

    await c.enqueue("flaky");
    assert.equal(r.count("flaky"), 7, "six network failures were retried until it succeeded");
    assert.equal(c.terminalFailure("flaky"), undefined);
    assert.equal(c.snapshot().metrics.errors.error, 6);
  }));
