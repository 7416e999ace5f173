import { test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase } from "@flotilla/testkit";
import { TimerRows, claimDueTimers } from "@flotilla/store";

test("one statement claims the due timers of several controllers, each its own, and says when each one's next is due", async () => {
  const db = await freshDatabase();
  try {
    const a = new TimerRows(db.sql, "a");
    const b = new TimerRows(db.sql, "b");
    await a.set(new Map([["a1", 0], ["a2", 0], ["later", 60_000]]));
    await b.set(new Map([["b1", 0]]));
    const [ca, cb, cc] = await claimDueTimers(db.sql, [{ controller: "a", leaseMs: 30_000 }, { controller: "b", leaseMs: 30_000 }, { controller: "c", leaseMs: 30_000 }], 1000);
    assert.deepEqual([...ca!.keys].sort(), ["a1", "a2"]);
    assert.ok(ca!.nextMs !== null && ca!.nextMs > 50_000 && ca!.nextMs <= 60_000, `a's next in ${ca!.nextMs} ms`);
    assert.deepEqual(cb, { keys: ["b1"], nextMs: null });
    assert.deepEqual(cc, { keys: [], nextMs: null });
    // claimed: leased ahead, not claimed again until the lease runs out
    const again = await claimDueTimers(db.sql, [{ controller: "a", leaseMs: 30_000 }, { controller: "b", leaseMs: 30_000 }], 1000);
    assert.deepEqual(again.map((c) => c.keys), [[], []]);
    assert.ok((await a.dueInMs("a1"))! > 25_000);
    // at most `limit` per controller
    await a.set(new Map(Array.from({ length: 5 }, (_, i) => [`x${i}`, 0] as [string, number])));
    await b.set(new Map(Array.from({ length: 5 }, (_, i) => [`y${i}`, 0] as [string, number])));
    const limited = await claimDueTimers(db.sql, [{ controller: "a", leaseMs: 30_000 }, { controller: "b", leaseMs: 30_000 }], 3);
    assert.deepEqual(limited.map((c) => c.keys.length), [3, 3]);
  } finally {
    await db.drop();
  }
});
