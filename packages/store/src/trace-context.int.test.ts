import { test } from "node:test";
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { freshDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import type { KubeObject } from "@flotilla/api";

const cm = (name: string): KubeObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { a: "1" } });
const TRACE = (n: number) => `00-${String(n).padStart(32, "0")}-${String(n).padStart(16, "0")}-01`;

test("each write's outbox row keeps its own caller's trace context, also when writes share a batch; untraced writes keep none", async () => {
  const db = await freshDatabase();
  try {
    const caller = new AsyncLocalStorage<string>();
    const store = new ObjectStore(db.sql, { traceContext: () => caller.getStore() });
    // written at the same moment: one statement, one transaction (the store batches them)
    await Promise.all([
      caller.run(TRACE(1), () => store.create(cm("a"))),
      store.create(cm("b")),
      caller.run(TRACE(2), () => store.create(cm("c"))),
      store.create(cm("d")),
    ]);
    const rows = await db.sql<{ name: string; trace_context: string | null; rv: string }[]>`SELECT name, trace_context, rv::text FROM outbox ORDER BY name`;
    assert.equal(new Set(rows.map((r) => r.rv)).size, 1, "one batch");
    assert.deepEqual(
      rows.map((r) => [r.name, r.trace_context]),
      [
        ["a", TRACE(1)],
        ["b", null],
        ["c", TRACE(2)],
        ["d", null],
      ],
    );
    // a store without the option writes none
    await new ObjectStore(db.sql).create(cm("e"));
    const [e] = await db.sql<{ trace_context: string | null }[]>`SELECT trace_context FROM outbox WHERE name = 'e'`;
    assert.equal(e!.trace_context, null);
  } finally {
    await db.drop();
  }
});
