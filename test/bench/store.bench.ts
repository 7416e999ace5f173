// The object store under concurrent callers: N creates, then N updates (each with the
// resourceVersion it read), C at a time, on a fresh database. Prints the rates, this process's
// CPU per write, and the write transactions (the distinct resourceVersions the outbox got:
// writes of one moment share one).
//   node --conditions=source --import tsx test/bench/store.bench.ts [--n 5000] [--concurrency 32] [--pool 8]
import os from "node:os";
import { parseArgs } from "node:util";
import type { KubeObject } from "@flotilla/api";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase } from "@flotilla/testkit";

const { values } = parseArgs({ options: { n: { type: "string", default: "5000" }, concurrency: { type: "string", default: "32" }, pool: { type: "string", default: "8" } } });
const N = Number(values.n);
const C = Number(values.concurrency);

const deployment = (i: number): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: `d${i}`, namespace: "bench", labels: { app: `d${i}` } },
  spec: { replicas: 3, selector: { matchLabels: { app: `d${i}` } }, template: { metadata: { labels: { app: `d${i}` } }, spec: { containers: [{ name: "c", image: "nginx:1.25", resources: { requests: { cpu: "100m", memory: "64Mi" } } }] } } },
});

async function concurrently(n: number, c: number, f: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: c }, async () => {
    while (next < n) await f(next++);
  }));
}

const db = await freshDatabase({ max: Number(values.pool) });
try {
  const store = new ObjectStore(db.sql);
  const lastId = async () => (await db.sql<{ id: string }[]>`SELECT coalesce(max(id), 0)::text AS id FROM outbox`)[0]!.id;
  const transactionsAfter = async (id: string) => (await db.sql<{ n: number }[]>`SELECT count(DISTINCT rv)::int AS n FROM outbox WHERE id > ${id}::bigint`)[0]!.n;
  console.log(`store bench: ${N} writes each, ${C} at a time, pool ${values.pool}; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)}`);
  for (const phase of ["create", "update"] as const) {
    const objs = phase === "update" ? (await store.list("apps/Deployment", { namespace: "bench" })).items : [];
    const from = await lastId();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await concurrently(N, C, (i) => (phase === "create" ? store.create(deployment(i)) : store.update({ ...objs[i]!, spec: { ...objs[i]!.spec, replicas: 4 } })));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    console.log(`  ${phase}: ${Math.round((N / ms) * 1000)}/s, ${((cpu.user + cpu.system) / 1000 / N).toFixed(3)} ms of this process's CPU per write, ${await transactionsAfter(from)} write transactions`);
  }
} finally {
  await db.drop();
}
