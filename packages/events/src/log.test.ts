import { test } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { sleep } from "./log.js";

test("sleep leaves no abort listener behind, however it ends", async () => {
  const ac = new AbortController();
  for (let i = 0; i < 50; i++) await sleep(1, ac.signal);
  assert.equal(getEventListeners(ac.signal, "abort").length, 0, "a loop of sleeps on one signal must not pile up listeners");
  const pending = sleep(60_000, ac.signal);
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  const t0 = Date.now();
  ac.abort();
  await pending;
  assert.ok(Date.now() - t0 < 1000, "an abort ends it at once");
  assert.equal(getEventListeners(ac.signal, "abort").length, 0);
  // already aborted: at once
  await sleep(60_000, ac.signal);
});
