import { test } from "node:test";
import assert from "node:assert/strict";
import { afterWatch, type WatchEnd, type WatchNext } from "./watch.js";

const B = { baseMs: 100, maxMs: 1000 };
const cases: [string, WatchEnd, WatchNext][] = [
  ["a watch the gateway ended normally resumes at once from its last version", { resourceVersion: "42", failures: 0 }, { action: "watch", resourceVersion: "42", delayMs: 0 }],
  ["a watch cut by an unreachable gateway resumes from its last version after a backoff", { resourceVersion: "42", unreachable: true, failures: 1 }, { action: "watch", resourceVersion: "42", delayMs: 100 }],
  ["repeated failures back off exponentially up to the maximum", { resourceVersion: "42", unreachable: true, failures: 9 }, { action: "watch", resourceVersion: "42", delayMs: 1000 }],
  ["410 Gone lists afresh", { resourceVersion: "42", code: 410, failures: 1 }, { action: "relist", delayMs: 100 }],
  ["without a version there is nothing to resume from: list", { resourceVersion: "", failures: 0 }, { action: "relist", delayMs: 0 }],
  ["a refused watch (403) lists again after at least the base delay", { resourceVersion: "42", code: 403, failures: 1 }, { action: "relist", delayMs: 100 }],
  ["a 5xx from the gateway resumes from the last version after a backoff", { resourceVersion: "42", code: 503, failures: 2 }, { action: "watch", resourceVersion: "42", delayMs: 200 }],
  ["429 resumes from the last version after a backoff", { resourceVersion: "42", code: 429, failures: 1 }, { action: "watch", resourceVersion: "42", delayMs: 100 }],
];
for (const [name, end, want] of cases) test(name, () => assert.deepEqual(afterWatch(end, B), want));
