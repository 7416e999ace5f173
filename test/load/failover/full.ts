// Failover load test through the whole stack: N Deployments (1 replica each, Duplicated onto one
// cluster, tolerations of 0 s) all running on member1 of three simulated members; member1 becomes
// unreachable. Measures, from the fault: Ready False, the NoExecute taint, every binding evicted,
// every binding rescheduled, and every graceful-eviction task dropped — which the eviction
// service only does once the new Work is applied and its Deployment reports Healthy.
// Every service runs as a process from its build (test/load/lib/stack.ts); the simulator runs in this process.
//   npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction packages/member-sim
//   node --conditions=source --import tsx test/load/failover/full.ts [--bindings 1000] [--timeout 300]
import { randomUUID } from "node:crypto";
import os from "node:os";
import { parseArgs } from "node:util";
import { applyDefaults, type KubeObject } from "@flotilla/api";
import { startSimulator } from "@flotilla/member-sim";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../lib/logs.js";
import { cpuMs } from "../lib/proc.js";
import { deleteStream, isolatedEnv, joinAndWaitReady, startServices, waitIdle, type Services } from "../lib/stack.js";
import { pool, sleep } from "../lib/stats.js";

const { values } = parseArgs({ options: { bindings: { type: "string", default: "1000" }, timeout: { type: "string", default: "300" }, namespaces: { type: "string", default: "10" } } });
const N = Number(values.bindings);
const NS = Number(values.namespaces);

const KNOBS: Record<string, string> = {
  CLUSTER_STATUS_UPDATE_FREQUENCY: "500ms",
  CLUSTER_FAILURE_THRESHOLD: "1s",
  CLUSTER_SUCCESS_THRESHOLD: "1s",
  CLUSTER_PROBE_TIMEOUT: "500ms",
  FAILOVER_EVICTION_TIMEOUT: "0s",
  CLUSTER_MONITOR_GRACE_PERIOD: "10m",
  GRACEFUL_EVICTION_TIMEOUT: "10m",
};

async function main() {
  const sim = await startSimulator({
    admin: { host: "127.0.0.1", port: 0 },
    defaults: { readyDelayMs: 200 },
    clusters: [
      { name: "member1", nodes: [{ name: "node", count: 4, cpu: "100000", memory: "100000Gi", pods: 100_000 }] },
      { name: "member2", nodes: [{ name: "node", count: 2, cpu: "100000", memory: "100000Gi", pods: 100_000 }] },
      { name: "member3", nodes: [{ name: "node", count: 2, cpu: "100000", memory: "100000Gi", pods: 100_000 }] },
    ],
  });
  const db = await freshDatabase({ max: 8 });
  const store = new ObjectStore(db.sql);
  const env = { ...isolatedEnv(db, "FAILFULL"), LOG_LEVEL: "warn", ...KNOBS };
  const logs = new ProcessLogs();
  let services: Services | undefined;
  console.log(`failover load, whole stack: ${N} Deployments (1 replica, Duplicated onto one of member1..3, tolerationSeconds 0) in ${NS} namespaces; ${os.cpus().length} cores; settings ${JSON.stringify(KNOBS)}`);
  try {
    services = await startServices({ env, logs });
    const children = services.procs;
    await joinAndWaitReady({ gatewayUrl: services.gatewayUrl, token: services.token, adminUrl: sim.adminUrl!, sql: db.sql, count: 3 });

    let t = performance.now();
    const placement = {
      clusterAffinity: { clusterNames: ["member1", "member2", "member3"] },
      spreadConstraints: [{ spreadByField: "cluster", maxGroups: 1, minGroups: 1 }],
      replicaScheduling: { replicaSchedulingType: "Duplicated" },
      clusterTolerations: ["cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"].map((key) => ({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 0 })),
    };
    for (let n = 0; n < NS; n++) {
      const pp: KubeObject = { apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "apps", namespace: `team-${n}` }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], placement } };
      await store.create(applyDefaults(pp, { now: new Date(), uuid: randomUUID }));
    }
    await pool(N, 16, async (i) => {
      const ns = `team-${i % NS}`;
      await store.create({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: `app-${i}`, namespace: ns, labels: { app: `app-${i}` } },
        spec: { replicas: 1, selector: { matchLabels: { app: `app-${i}` } }, template: { metadata: { labels: { app: `app-${i}` } }, spec: { containers: [{ name: "app", image: "nginx", resources: { requests: { cpu: "10m", memory: "16Mi" } } }] } } },
      });
    });
    const counts = async () => {
      const [c] = await db.sql<{ on1: number; evicted: number; moved: number; done: number; healthy: number }[]>`
        SELECT count(*) FILTER (WHERE index_keys @> ARRAY['cluster:member1'] AND body->'status'->'aggregatedStatus' @> '[{"clusterName":"member1","health":"Healthy"}]')::int AS on1,
               count(*) FILTER (WHERE index_keys @> ARRAY['evicting:member1'] OR (NOT index_keys @> ARRAY['cluster:member1'] AND jsonb_array_length(coalesce(body->'spec'->'clusters','[]')) > 0))::int AS evicted,
               count(*) FILTER (WHERE jsonb_array_length(coalesce(body->'spec'->'clusters','[]')) > 0 AND NOT index_keys @> ARRAY['cluster:member1'])::int AS moved,
               count(*) FILTER (WHERE NOT index_keys @> ARRAY['cluster:member1'] AND NOT index_keys @> ARRAY['evicting'] AND jsonb_array_length(coalesce(body->'spec'->'clusters','[]')) > 0)::int AS done,
               count(*) FILTER (WHERE jsonb_array_length(coalesce(body->'spec'->'clusters','[]')) > 0 AND NOT index_keys @> ARRAY['cluster:member1']
                                  AND body->'status'->'aggregatedStatus' @> jsonb_build_array(jsonb_build_object('clusterName', body->'spec'->'clusters'->0->>'name', 'health', 'Healthy')))::int AS healthy
        FROM objects WHERE gk = 'work.karmada.io/ResourceBinding'`;
      return c;
    };
    for (;;) {
      const c = await counts();
      if (c.on1 >= N) break;
      if (performance.now() - t > Number(values.timeout) * 1000) throw new Error(`setup timed out: ${c.on1}/${N} healthy on member1`);
      await sleep(500);
    }
    console.log(`setup: ${N} Deployments running Healthy on member1 after ${Math.round(performance.now() - t)} ms`);
    // idle: nothing left to publish and every controller's queue empty, three times in a row
    t = performance.now();
    await waitIdle(db.sql, services.ports.values(), { timeoutMs: Number(values.timeout) * 1000, token: services.token });
    console.log(`services idle: ${Math.round(performance.now() - t)} ms`);

    const load0 = os.loadavg()[0];
    const cpu0 = new Map([...children].map(([k, c]) => [k, cpuMs(c.child.pid)]));
    const t0 = performance.now();
    await sim.setFault("member1", { mode: "unreachable" });
    const marks: Record<string, number> = {};
    const mark = (k: string) => (marks[k] ??= Math.round(performance.now() - t0));
    const samples: string[] = [];
    for (let i = 0; ; i++) {
      const [cl] = await db.sql<{ ready: string | null; noexec: boolean }[]>`
        SELECT (SELECT c->>'status' FROM jsonb_array_elements(body->'status'->'conditions') c WHERE c->>'type' = 'Ready') AS ready,
               coalesce(body->'spec'->'taints' @> '[{"effect":"NoExecute"}]', false) AS noexec
        FROM objects WHERE gk = 'cluster.karmada.io/Cluster' AND name = 'member1'`;
      if (cl.ready !== "True") mark("readyFalse");
      if (cl.noexec) mark("noExecute");
      const c = await counts();
      if (c.evicted >= N) mark("allEvicted");
      if (c.moved >= N) mark("allRescheduled");
      if (c.healthy >= N) mark("allReplacementsHealthy");
      if (c.done >= N) mark("allTasksDropped");
      if (i % 10 === 0) samples.push(`${Math.round(performance.now() - t0)}:${c.evicted}/${c.moved}/${c.healthy}/${c.done}`);
      if (marks.allTasksDropped !== undefined) break;
      if (performance.now() - t0 > Number(values.timeout) * 1000) {
        console.log(`TIMEOUT: evicted ${c.evicted}, rescheduled ${c.moved}, healthy ${c.healthy}, tasks dropped ${c.done} of ${N}`);
        break;
      }
      await sleep(100);
    }
    const [{ works }] = await db.sql<{ works: number }[]>`SELECT count(*)::int AS works FROM objects WHERE gk = 'work.karmada.io/Work' AND namespace = 'karmada-es-member1' AND body->'metadata' ? 'deletionTimestamp'`;
    console.log(`member1 made unreachable; times from then (ms):`);
    for (const [k, label] of [
      ["readyFalse", "member1 Ready False"],
      ["noExecute", "NoExecute taint"],
      ["allEvicted", `all ${N} evicted`],
      ["allRescheduled", `all ${N} rescheduled (spec.clusters)`],
      ["allReplacementsHealthy", `all ${N} new copies reported Healthy`],
      ["allTasksDropped", `all ${N} tasks dropped`],
    ] as const)
      console.log(`  ${label.padEnd(38)} ${marks[k] ?? "-"}`);
    console.log(`  member1 Works deleting (kept while it is down): ${works}`);
    console.log(`  CPU used meanwhile: ${[...children].map(([k, c]) => `${k} ${Math.round(cpuMs(c.child.pid) - cpu0.get(k)!)} ms`).join(", ")} (simulator, Postgres, NATS not counted)`);
    console.log(`  1-minute load average before/after: ${load0.toFixed(2)} / ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} cores`);
    console.log(`  progress (ms:evicted/rescheduled/healthy/dropped) ${samples.join(" ")}`);
  } finally {
    await services?.stop();
    await sim.close();
    await db.drop();
    await deleteStream(env.EVENTS_STREAM);
  }
}

await main();
