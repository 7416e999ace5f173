// The seed's Divided walk-through (001_*) with all three members in Push mode; the steps are in
// divided-walkthrough.ts. Its end state is DIVIDED_END_STATE, which the walk-through with three
// replicas of every service must reach too (three-replicas.int.test.ts).
// Needs the builds: npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { test } from "node:test";
import assert from "node:assert/strict";
import { DIVIDED_END_STATE, dividedEndState, dividedWalkThrough } from "./divided-walkthrough.js";
import { startStack } from "./harness.js";

test("the seed's Divided walk-through: member1 fails, its replica moves to member2 gracefully, and nothing moves back", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    await dividedWalkThrough(s, (m) => t.diagnostic(m));
    assert.deepEqual(await dividedEndState(s), DIVIDED_END_STATE);
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
