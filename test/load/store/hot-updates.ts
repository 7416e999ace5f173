// Postgres CPU per status write of an object, at several fillfactors of `objects`, on a Postgres
// server of its own (so its processes' CPU is the writes' alone): N Works carrying a Deployment
// manifest, then four status writes of each (a read and a write, 16 at a time), and how many were
// heap-only updates (no new index entries). Migration 016 chose fillfactor 50 from it.
//   node --conditions=source --import tsx test/load/store/hot-updates.ts [--works 3000] [--fillfactors 100,70,50]
import { readFileSync, readdirSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import type { KubeObject } from "@flotilla/api";
import { ObjectStore, openDatabase } from "@flotilla/store";
import { PostgresServer } from "@flotilla/testkit";
import { loadDeployment } from "../lib/objects.js";
import { pool } from "../lib/stats.js";

const { values: v } = parseArgs({ options: { works: { type: "string", default: "3000" }, fillfactors: { type: "string", default: "100,70,50" } } });
const N = Number(v.works);
const TICK_MS = 10; // USER_HZ 100

const pg = await PostgresServer.start();
const master = Number(readFileSync(`${pg.data}/postmaster.pid`, "utf8").split("\n")[0]);
/** CPU ms of the server: the postmaster, its live children and the ones that exited. */
function serverCpu(): number {
  let ticks = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) === master) ticks += Number(f[11]) + Number(f[12]);
      if (Number(d) === master) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks * TICK_MS;
}

const work = (i: number): KubeObject => ({
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: {
    name: `w-${i}`,
    namespace: `karmada-es-member${i % 10}`,
    labels: { "resourcebinding.karmada.io/permanent-id": `rb-${i}`, "work.karmada.io/permanent-id": `w-${i}` },
    annotations: { "resourcebinding.karmada.io/name": `d-${i}-deployment`, "resourcebinding.karmada.io/namespace": "load" },
  },
  spec: { workload: { manifests: [loadDeployment({ namespace: "load", name: `d-${i}`, replicas: 3 })] } },
});

try {
  console.log(`${N} Works, 4 status writes each; load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
  for (const [idx, ff] of v.fillfactors.split(",").map(Number).entries()) {
    const name = `hot_${idx}_${ff}`;
    const db = await openDatabase({ url: pg.url(name), max: 8 });
    try {
      await db.sql.unsafe(`ALTER TABLE objects SET (fillfactor = ${ff})`);
      const store = new ObjectStore(db.sql);
      await pool(N, 16, (i) => store.create(work(i)));
      const c0 = serverCpu();
      const t0 = performance.now();
      for (let round = 1; round <= 4; round++) {
        await pool(N, 16, async (i) => {
          const w = (await store.get({ gk: "work.karmada.io/Work", namespace: `karmada-es-member${i % 10}`, name: `w-${i}` }))!;
          const identifier = { group: "apps", version: "v1", kind: "Deployment", namespace: "load", name: `d-${i}`, ordinal: 0 };
          await store.updateStatus({ ...w, status: { conditions: [{ type: "Applied", status: "True", reason: "AppliedSuccessful", message: "applied", lastTransitionTime: new Date().toISOString() }], manifestStatuses: [{ identifier, status: { replicas: 3, readyReplicas: round, observedGeneration: 1 }, health: "Healthy" }] } });
        });
      }
      const ms = performance.now() - t0;
      const cpu = serverCpu() - c0;
      await new Promise((r) => setTimeout(r, 10_500)); // an idle backend publishes its table counts within 10 s
      const [st] = await db.sql<{ upd: string; hot: string; size: string }[]>`
        SELECT n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot, pg_size_pretty(pg_total_relation_size('objects')) AS size FROM pg_stat_user_tables WHERE relname = 'objects'`;
      console.log(`fillfactor ${ff}: ${4 * N} status writes in ${ms.toFixed(0)} ms, Postgres CPU ${(cpu / (4 * N)).toFixed(3)} ms per read and write; heap-only ${st!.hot} of ${st!.upd} updates; objects ${st!.size}`);
    } finally {
      await db.close();
    }
  }
} finally {
  await pg.destroy();
}
