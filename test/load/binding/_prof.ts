import { randomUUID } from "node:crypto";
import { applyDefaults, type KubeObject } from "@flotilla/api";
import { buildApp } from "@flotilla/binding";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay } from "@flotilla/events";
import { silentLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { NATS_URL, freshDatabase, uniqueName } from "@flotilla/testkit";
const N = Number(process.env.N ?? 2000);
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
const placement = { clusterAffinity: { clusterNames: ["m1"] } };
await store.create(applyDefaults({ apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "p", namespace: "ns" }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], placement } } as KubeObject, { now: new Date(), uuid: randomUUID }));
const mk = (i: number): KubeObject => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `d${i}`, namespace: "ns" }, spec: { replicas: 2, template: { spec: { containers: [{ name: "c", image: "x" }] } } } });
let next = 0;
await Promise.all(Array.from({ length: 16 }, async () => { while (next < N) await store.create(mk(next++)); }));
for (const k of Object.keys(stats)) delete stats[k];
while ((await db.sql`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`)[0]!.n > 0) await new Promise((r) => setTimeout(r, 50));
const t0 = performance.now();
const app = buildApp({ store, sql: db.sql, js: jetstream(nc), stream, prefix, log: silentLogger(), run: { detector: true, policy: process.env.NOPOLICY ? false : true }, settings: { resyncMs: 0, detectorConcurrency: Number(process.env.C ?? 32) } });
await app.start();
for (;;) { const n = (await db.sql`SELECT count(*)::int AS n FROM objects WHERE gk = 'work.karmada.io/ResourceBinding'`)[0]!.n; if (n >= N) break; await new Promise((r) => setTimeout(r, 20)); }
const secs = (performance.now() - t0) / 1000;
console.log(`N=${N} ${secs.toFixed(2)}s ${(N / secs).toFixed(0)}/s`, app.detector.snapshot().metrics.percentiles(), app.detector.snapshot().metrics.reconciles, app.consumer?.stats);
for (const [k, v] of Object.entries(stats)) console.log(k, v.n, (v.ms / v.n).toFixed(2), "ms avg");
await app.stop(); await relay.stop(); await nc.close(); await db.drop(); process.exit(0);
