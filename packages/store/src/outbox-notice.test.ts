import { test } from "node:test";
import assert from "node:assert/strict";
import { parseOutboxNotice } from "./store.js";

const cases: [string, string, ReturnType<typeof parseOutboxNotice>][] = [
  ["a write of two kinds names both", "1234 apps/Deployment,work.karmada.io/Work", { rv: 1234n, kinds: ["apps/Deployment", "work.karmada.io/Work"] }],
  ["a core kind keeps its empty group", "7 /ConfigMap", { rv: 7n, kinds: ["/ConfigMap"] }],
  ["a star is any kind", "99 *", { rv: 99n }],
  ["an empty payload (a NOTIFY sent by hand) is any kind, at no known version", "", {}],
  ["a payload in no known form is any kind", "hello", {}],
  ["a version that is no number is no known form", "x apps/Deployment", {}],
];

for (const [name, payload, want] of cases) test(name, () => assert.deepEqual(parseOutboxNotice(payload), want));
