import { randomUUID } from "node:crypto";
import type { KubeObject } from "@flotilla/api";
import { buildApp } from "@flotilla/binding";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay } from "@flotilla/events";
import { silentLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { NATS_URL, freshDatabase, uniqueName } from "@flotilla/testkit";
const N = Number(process.env.N ?? 1000);
const db = await freshDatabase({ max: 8 });
const nc = await connectNats({ servers: NATS_URL });
const jsm = await jetstreamManager(nc);
const stream = uniqueName("P").toUpperCase(); const prefix = uniqueName("p");
await ensureStream(jsm, { stream, prefix });
const store = new ObjectStore(db.sql);
const stats: Record<string, { n: number; ms: number }> = {};
for (const m of ["get", "list", "create", "update", "updateStatus", "mutate", "delete"] as const) {
  const orig = (store as any)[m].bind(store);
  (store as any)[m] = async (...a: unknown[]) => { const t = performance.now(); const st = process.env.STACKS ? (new Error().stack ?? "").split("\n").slice(2, 4).map((l) => l.trim().replace(/\(.*\/(src|dist)\//, "(")).join(" < ") : ""; try { return await orig(...a); } finally { const s = (stats[m + " " + st] ??= { n: 0, ms: 0 }); s.n++; s.ms += performance.now() - t; } };
}
const relay = startRelay({ sql: db.sql, nc, stream, prefix, retentionMs: 0 });
let next = 0;
await Promise.all(Array.from({ length: 16 }, async () => { while (next < N) { const i = next++;
  const t = await store.create({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `d${i}`, namespace: "ns" }, spec: { replicas: 3, template: { spec: { containers: [{ name: "c", image: "x" }] } } } } as KubeObject);
  const b = await store.create({ apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: `d${i}-deployment`, namespace: "ns", labels: { "resourcebinding.karmada.io/permanent-id": randomUUID() }, finalizers: ["karmada.io/binding-controller"] }, spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "ns", name: `d${i}`, uid: t.metadata.uid }, replicas: 3, clusters: [{ name: "m1", replicas: 1 }, { name: "m2", replicas: 2 }] } } as KubeObject);
  await store.updateStatus({ ...b, status: { lastScheduledTime: "2024-01-01T00:00:00Z" } });
} }));
for (const k of Object.keys(stats)) delete stats[k];
while ((await db.sql`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`)[0]!.n > 0) await new Promise((r) => setTimeout(r, 50));
const t0 = performance.now();
const app = buildApp({ store, sql: db.sql, js: jetstream(nc), stream, prefix, log: silentLogger(), run: { binding: true }, settings: { resyncMs: 0, bindingConcurrency: Number(process.env.C ?? 32) } });
await app.start();
for (;;) { const n = (await db.sql`SELECT count(*)::int AS n FROM objects WHERE gk = 'work.karmada.io/Work'`)[0]!.n; if (n >= 2 * N) break; await new Promise((r) => setTimeout(r, 20)); }
const secs = (performance.now() - t0) / 1000;
await new Promise((r) => setTimeout(r, 1000));
console.log(`N=${N} bindings ${secs.toFixed(2)}s ${(2 * N / secs).toFixed(0)} works/s`, app.binding.snapshot().metrics.percentiles(), app.binding.snapshot().metrics.reconciles, app.consumer?.stats);
for (const [k, v] of Object.entries(stats).sort((a, b) => b[1].n - a[1].n)) console.log(k, v.n, (v.ms / v.n).toFixed(2), "ms avg");
await app.stop(); await relay.stop(); await nc.close(); await db.drop(); process.exit(0);
