import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { runFuzz, startFuzzTarget, type FuzzTarget } from "./run.js";

// A short run of the gateway fuzz (test/fuzz/gateway.fuzz.ts runs the long one); FUZZ_SEED replays a run.
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 500);

let target: FuzzTarget;
before(async () => {
  target = await startFuzzTarget();
});
after(async () => {
  await target.stop();
});

test("hundreds of hostile requests get no 5xx, no crash, no polluted prototype, no leaked Secret, a rejected write writes nothing, and none without valid credentials is served", { timeout: 120_000 }, async () => {
  const r = await runFuzz(target, { requests: REQUESTS, seed: SEED });
  const report = r.failures.slice(0, 10).map((f) => `#${f.index} ${f.problem}\n  ${f.case}`).join("\n\n");
  assert.deepEqual(r.failures, [], `seed ${SEED}, ${r.failures.length} failures:\n${report}`);
  assert.ok(r.requests >= REQUESTS * 0.9, `only ${r.requests} of ${REQUESTS} requests were answered`);
  assert.ok(r.rejectedWrites > 0, "some writes were rejected and checked");
  assert.ok(r.unauthenticated > 0, "some requests went without valid credentials and were refused");
  // the rest carried the administrator's token and got past authentication to admission
  assert.ok((r.statuses["401"] ?? 0) < r.requests * 0.3, `most requests were authenticated (401: ${r.statuses["401"]} of ${r.requests})`);
});
