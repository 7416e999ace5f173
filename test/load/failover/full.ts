// Failover load test through the whole stack: N Deployments (1 replica each, Duplicated onto one
// cluster, tolerations of 0 s) all running on member1 of three simulated members; member1 becomes
// unreachable. Measures, from the fault: Ready False, the NoExecute taint, every binding evicted,
// every binding rescheduled, and every graceful-eviction task dropped — which the eviction
// service only does once the new Work is applied and its Deployment reports Healthy.
// Every service runs as a process from its build; the simulator runs in this process.
//   npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction packages/member-sim
//   node --conditions=source --import tsx test/load/failover/full.ts [--bindings 1000] [--timeout 300]
import { randomUUID } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { applyDefaults, type KubeObject } from "@flotilla/api";
import { startSimulator } from "@flotilla/member-sim";
import { ObjectStore } from "@flotilla/store";
import { NATS_URL, freshDatabase, uniqueName } from "@flotilla/testkit";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({ options: { bindings: { type: "string", default: "1000" }, timeout: { type: "string", default: "300" }, namespaces: { type: "string", default: "10" } } });
const N = Number(values.bindings);
const NS = Number(values.namespaces);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

function cpuMs(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

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
  const stream = uniqueName("FAILFULL").toUpperCase();
  const env = { DATABASE_URL: db.url, NATS_URL, EVENTS_STREAM: stream, EVENTS_PREFIX: uniqueName("failfull"), HOST: "127.0.0.1", LOG_LEVEL: "warn", ...KNOBS };
  const children = new Map<string, ChildProcess>();
  const ports = new Map<string, number>();
  const start = async (name: string, extra: Record<string, string> = {}) => {
    const port = await freePort();
    ports.set(name, port);
    const child = spawn(process.execPath, [path.join(root, "services", name, "dist", "main.js")], { cwd: root, env: { ...process.env, ...env, PORT: String(port), ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout!.on("data", (d) => (out = (out + d).slice(-8000)));
    child.stderr!.on("data", (d) => (out = (out + d).slice(-8000)));
    child.on("exit", (code) => code && console.error(`${name} exited ${code}:\n${out}`));
    children.set(name, child);
  };
  console.log(`failover load, whole stack: ${N} Deployments (1 replica, Duplicated onto one of member1..3, tolerationSeconds 0) in ${NS} namespaces; ${os.cpus().length} cores; settings ${JSON.stringify(KNOBS)}`);
  try {
    const estimatorPort = await freePort();
    await start("gateway", { GRPC_PORT: "0" });
    await start("execution", { ESTIMATOR_PORT: String(estimatorPort) });
    await start("binding");
    await start("scheduler", { SCHEDULER_GRPC_PORT: "0", ESTIMATOR_GRPC_URL: `127.0.0.1:${estimatorPort}` });
    await start("taint-manager");
    await start("eviction");
    const gw = `http://127.0.0.1:${ports.get("gateway")}`;
    for (let i = 0; i < 200 && !(await fetch(`${gw}/readyz`).then((r) => r.ok, () => false)); i++) await sleep(100);
    const { joinMembers } = (await import(path.join(root, "scripts/join-members.mjs"))) as { joinMembers: (o: { gatewayUrl: string; adminUrl: string; log?: (s: string) => void }) => Promise<string[]> };
    await joinMembers({ gatewayUrl: gw, adminUrl: sim.adminUrl!, log: () => {} });
    for (;;) {
      const [{ n }] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM objects WHERE gk = 'cluster.karmada.io/Cluster'
          AND body->'status'->'conditions' @> '[{"type":"Ready","status":"True"}]' AND coalesce(jsonb_array_length(body->'spec'->'taints'), 0) = 0`;
      if (n === 3) break;
      await sleep(200);
    }

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
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < N) {
        const i = next++;
        const ns = `team-${i % NS}`;
        await store.create({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: `app-${i}`, namespace: ns, labels: { app: `app-${i}` } },
          spec: { replicas: 1, selector: { matchLabels: { app: `app-${i}` } }, template: { metadata: { labels: { app: `app-${i}` } }, spec: { containers: [{ name: "app", image: "nginx", resources: { requests: { cpu: "10m", memory: "16Mi" } } }] } } },
        });
      }
    }));
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
    for (let quiet = 0; quiet < 3; ) {
      await sleep(300);
      const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
      const busy = await Promise.all([...ports.values()].map(async (p) => {
        const text = await fetch(`http://127.0.0.1:${p}/metrics`).then((r) => r.text(), () => "");
        return text.split("\n").some((l) => /^flotilla_controller_(queue_depth|in_flight)\{/.test(l) && !l.endsWith(" 0"));
      }));
      quiet = n === 0 && !busy.some(Boolean) ? quiet + 1 : 0;
    }
    console.log(`services idle: ${Math.round(performance.now() - t)} ms`);

    const load0 = os.loadavg()[0];
    const cpu0 = new Map([...children].map(([k, c]) => [k, cpuMs(c.pid)]));
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
    console.log(`  CPU used meanwhile: ${[...children].map(([k, c]) => `${k} ${Math.round(cpuMs(c.pid) - cpu0.get(k)!)} ms`).join(", ")} (simulator, Postgres, NATS not counted)`);
    console.log(`  1-minute load average before/after: ${load0.toFixed(2)} / ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} cores`);
    console.log(`  progress (ms:evicted/rescheduled/healthy/dropped) ${samples.join(" ")}`);
  } finally {
    for (const c of children.values()) c.kill("SIGTERM");
    await Promise.all([...children.values()].map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once("exit", r)))));
    await sim.close();
    await db.drop();
    const { connectNats, jetstreamManager } = await import("@flotilla/events");
    const nc = await connectNats({ servers: NATS_URL });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => {});
    await nc.close();
  }
}

await main();
