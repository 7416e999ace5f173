import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, freshDatabase } from "@flotilla/testkit";
import { lockKey, startLeaderElection, type LeaderElection } from "./leader.js";

test("lock keys are stable per name and differ between names", () => {
  assert.equal(lockKey("scheduler/default-scheduler/FLOTILLA"), lockKey("scheduler/default-scheduler/FLOTILLA"));
  assert.notEqual(lockKey("scheduler/a"), lockKey("scheduler/b"));
  assert.ok(Number.isInteger(lockKey("x")) && lockKey("x") >= -(2 ** 31) && lockKey("x") < 2 ** 31);
});

test("one of three replicas leads; stopping it or cutting its session hands leadership to exactly one other", async () => {
  const db = await freshDatabase();
  const log: string[] = [];
  const elections: LeaderElection[] = [];
  try {
    for (const id of ["a", "b", "c"]) {
      elections.push(
        startLeaderElection({
          sql: db.sql,
          name: "test/leader",
          retryMs: 100,
          checkMs: 100,
          onStartedLeading: () => void log.push(`${id}+`),
          onStoppedLeading: () => void log.push(`${id}-`),
        }),
      );
    }
    const leaders = () => elections.filter((e) => e.leading);
    await eventually(() => leaders().length === 1, { message: "one leader" });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(leaders().length, 1, "still one leader after standbys retried");
    assert.equal(log.length, 1);

    // a clean stop: the term ends (onStoppedLeading) before another begins
    const first = leaders()[0]!;
    await first.stop();
    assert.equal(first.leading, false);
    await eventually(() => leaders().length === 1, { message: "a standby took over" });
    assert.equal(log.length, 3);
    assert.match(log[1]!, /-$/);

    // the leader's session dies (a network cut, the server restarting it): it steps down, and
    // exactly one leads again
    const second = leaders()[0]!;
    await db.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'flotilla-leader:test/leader' AND pid IN
                   (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)`;
    await eventually(() => !second.leading || leaders().length === 1, { message: "the cut leader noticed" });
    await eventually(() => leaders().length === 1 && log.filter((l) => l.endsWith("+")).length === 3, { timeoutMs: 5000, message: "one leader after the cut" });
    assert.equal(log.filter((l) => l.endsWith("-")).length, 2, `terms: ${log}`);
    // terms never overlap: every start follows the previous term's end
    let open = 0;
    for (const l of log) {
      open += l.endsWith("+") ? 1 : -1;
      assert.ok(open <= 1, `overlapping terms: ${log}`);
    }
  } finally {
    for (const e of elections) await e.stop();
    await db.drop();
  }
});
