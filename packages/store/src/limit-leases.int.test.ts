import { test } from "node:test";
import assert from "node:assert/strict";
import { rateShare } from "@flotilla/api";
import { eventually, freshDatabase, sleep } from "@flotilla/testkit";
import { createClient } from "./driver.js";
import { FleetShares } from "./limit-leases.js";

const share = (s: FleetShares, limit: string, total: number) => {
  const { me, others } = s.snapshot(limit);
  return rateShare(total, me, others);
};

test("replicas lease shares of a limit: each sees the others, in proportion to demand; a stopped one gives its row back, a dead one expires", async () => {
  const db = await freshDatabase();
  const a = new FleetShares({ sql: db.sql, holder: "a", renewMs: 200, ttlMs: 600 });
  const b = new FleetShares({ sql: db.sql, holder: "b", renewMs: 200, ttlMs: 600 });
  const c = new FleetShares({ sql: db.sql, holder: "c", renewMs: 200, ttlMs: 600 });
  try {
    for (const s of [a, b, c]) s.start();
    assert.equal(share(a, "x", 30), 30, "before its first renewal a replica is alone");
    await Promise.all([a.ready("x"), b.ready("x"), c.ready("x")]);
    // three times the asks of the others, for a few renewals
    for (let i = 0; i < 8; i++) {
      a.ask("x", 30);
      b.ask("x", 10);
      c.ask("x", 10);
      await sleep(100);
    }
    const [sa, sb, sc] = [share(a, "x", 50), share(b, "x", 50), share(c, "x", 50)];
    assert.ok(sa > 25 && sa < 35, `a: ${sa}`);
    assert.ok(sb > 7 && sb < 13 && sc > 7 && sc < 13, `b: ${sb}, c: ${sc}`);
    assert.ok(Math.abs(sa + sb + sc - 50) < 5, `sum ${sa + sb + sc}`);
    await b.stop();
    // c dies: its rows stay until they expire
    (c as unknown as { stopped: boolean }).stopped = true;
    clearInterval((c as unknown as { timer: NodeJS.Timeout }).timer);
    await sleep(450);
    assert.equal(a.snapshot("x").others.map((h) => h.holder).join(), "c", "b gave its row back at once, c's still lives");
    await sleep(600);
    assert.deepEqual(a.snapshot("x").others, [], "c's row expired");
    assert.equal(share(a, "x", 50), 50);
  } finally {
    await a.stop();
    await db.drop();
  }
});

test("a limit not used for idleMs is given back; renewing costs one statement per renewal for all limits", async () => {
  const db = await freshDatabase();
  const a = new FleetShares({ sql: db.sql, holder: "a", renewMs: 100, ttlMs: 5000, idleMs: 300 });
  try {
    a.start();
    for (const u of ["u1", "u2", "u3"]) a.ask(u);
    await a.ready("u1");
    const rows = async () => (await db.sql<{ limit_name: string }[]>`SELECT limit_name FROM limit_leases WHERE holder = 'a' ORDER BY 1`).map((r) => r.limit_name);
    assert.deepEqual(await rows(), ["u1", "u2", "u3"]);
    const before = a.stats.rounds;
    await sleep(1000);
    assert.deepEqual(await rows(), [], "idle limits given back");
    const rounds = a.stats.rounds - before;
    assert.ok(rounds <= 6, `${rounds} renewals in 1 s at 100 ms (they stop once nothing is used)`);
  } finally {
    await a.stop();
    await db.drop();
  }
});

test("with Postgres away, a limit's first use goes ahead within a second on what there is (alone), and the failed renewal is told", async () => {
  const sql = createClient("postgres://postgres@127.0.0.1:1/flotilla_nowhere", { max: 1 });
  const errors: unknown[] = [];
  const a = new FleetShares({ sql, holder: "a", renewMs: 200, onError: (e) => errors.push(e) });
  try {
    a.start();
    const t0 = performance.now();
    await a.ready("x");
    assert.ok(performance.now() - t0 < 1500, `${performance.now() - t0} ms`);
    assert.equal(share(a, "x", 30), 30);
    await eventually(async () => errors.length > 0, { timeoutMs: 3000 });
  } finally {
    await a.stop();
    await sql.end({ timeout: 1 });
  }
});
