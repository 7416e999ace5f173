import { test } from "node:test";
import assert from "node:assert/strict";
import { backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
import { after, done, isTerminal, terminal, TerminalError } from "./result.js";

test("backoffDelay", async (t) => {
  const o = { baseMs: 100, maxMs: 10_000 };
  const cases: [string, number, number][] = [
    ["no failures means no delay", 0, 0],
    ["a negative count means no delay", -3, 0],
    ["the first failure waits the base delay", 1, 100],
    ["the second failure doubles it", 2, 200],
    ["the fifth failure waits 16 times the base", 5, 1600],
    ["the delay stops growing at the cap", 8, 10_000],
    ["a huge failure count stays at the cap", 1_000_000, 10_000],
  ];
  for (const [name, failures, want] of cases) await t.test(name, () => assert.equal(backoffDelay(failures, o), want));

  await t.test("the default is controller-runtime's 5 ms doubling up to 1000 s", () => {
    assert.deepEqual(DEFAULT_BACKOFF, { baseMs: 5, maxMs: 1_000_000 });
    assert.equal(backoffDelay(1), 5);
    assert.equal(backoffDelay(10), 2560);
    assert.equal(backoffDelay(30), 1_000_000);
  });
  await t.test("a cap below the base is raised to the base", () => assert.equal(backoffDelay(3, { baseMs: 50, maxMs: 10 }), 50));
});

test("results", async (t) => {
  const cases: [string, ReturnType<typeof done>, ReturnType<typeof done>][] = [
    ["done is done", done(), { kind: "done" }],
    ["after a positive time is a timer", after(1500), { kind: "after", ms: 1500 }],
    ["after a fraction rounds up", after(0.2), { kind: "after", ms: 1 }],
    ["after zero is done", after(0), { kind: "done" }],
    ["after a negative time is done", after(-5), { kind: "done" }],
    ["after NaN is done", after(Number.NaN), { kind: "done" }],
    ["after infinity is done", after(Number.POSITIVE_INFINITY), { kind: "done" }],
  ];
  for (const [name, got, want] of cases) await t.test(name, () => assert.deepEqual(got, want));

  await t.test("terminal throws a TerminalError carrying the cause", () => {
    const cause = new Error("spec.replicas is negative");
    try {
      terminal(cause);
      assert.fail("terminal returned");
    } catch (e) {
      assert.ok(e instanceof TerminalError);
      assert.ok(isTerminal(e));
      assert.equal((e as Error).cause, cause);
      assert.equal((e as Error).message, "spec.replicas is negative");
    }
  });
  await t.test("an ordinary error is not terminal", () => assert.equal(isTerminal(new Error("x")), false));
});
