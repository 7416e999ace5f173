// Gateway load test: the gateway alone, built in this process exactly as main.ts builds it (a token
// file, RBAC, the fleet's per-user limits, its own pool and a relay of its own), against a fresh
// database holding N Deployments. Every request is authenticated with a bearer token, as users
// send it. One kind of request at a time — GET of single objects, GET of lists with a limit, POST
// of new Deployments — for a fixed time at a fixed number of connections, from autocannon in a
// process of its own (cannon.ts).
//   node --conditions=source --import tsx test/load/gateway/run.ts [--scenario full|smoke]
//        [--objects N] [--duration S] [--connections N] [--limit N] [--pool N] [--only get,list,post]
import { randomUUID } from "node:crypto";
import { spawn } from "node:child_process";
import os, { hostname } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { applyDefaults } from "@flotilla/api";
import { silentLogger } from "@flotilla/log";
import { FleetShares, ObjectStore, databaseProbe } from "@flotilla/store";
import { RbacAuthorizer, TokenFileAuthenticator, buildGateway } from "@flotilla/gateway";
import { loadDeployment } from "../lib/objects.js";
import { childrenCpuMs } from "../lib/proc.js";
import { adminTokenFile } from "../lib/stack.js";
import { fmt, markdownTable, mib, pool } from "../lib/stats.js";
import { backendCpuDelta, countedStack, describe, minus, rssPeak, selfCpuMs, type Counts, type CountedStack } from "../lib/counted.js";
import type { CannonOptions, CannonResult } from "./cannon.js";

const SCENARIOS: Record<string, { objects: number; duration: number }> = {
  full: { objects: 2_000, duration: 10 },
  smoke: { objects: 300, duration: 3 },
};
const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: "full" },
    objects: { type: "string" },
    duration: { type: "string" },
    connections: { type: "string", default: "50" },
    limit: { type: "string", default: "50" },
    pool: { type: "string", default: "8" },
    only: { type: "string", default: "get,list,post" },
  },
});
const base = SCENARIOS[values.scenario!];
if (!base) throw new Error(`unknown scenario ${values.scenario}; one of ${Object.keys(SCENARIOS).join(", ")}`);
const N = Number(values.objects ?? base.objects);
const DURATION = Number(values.duration ?? base.duration);
const CONNECTIONS = Number(values.connections);
const LIMIT = Number(values.limit);
const POOL = Number(values.pool);
const NAMESPACES = 10;
const KINDS = values.only!.split(",") as CannonOptions["kind"][];
const CANNON = path.join(path.dirname(fileURLToPath(import.meta.url)), "cannon.ts");

function cannon(o: CannonOptions): Promise<CannonResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", CANNON, JSON.stringify(o)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("error", reject);
    p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as CannonResult) : reject(new Error(`the load generator exited ${code}`))));
  });
}

const tokens = adminTokenFile();

/** The gateway on a phase of its own (its pool, a relay), as main.ts builds it; stop() closes the phase. */
async function startGateway(s: CountedStack) {
  const ph = s.phase();
  await ph.relay();
  const sql = await ph.pool(POOL);
  const store = new ObjectStore(sql);
  const log = silentLogger();
  const gw = buildGateway({
    store,
    log,
    settings: { notReadyTolerationSeconds: 300, unreachableTolerationSeconds: 300 },
    ready: databaseProbe(sql),
    access: { authenticator: TokenFileAuthenticator.fromFile(tokens.file), authorizer: new RbacAuthorizer(store, log) },
    shares: new FleetShares({ sql, holder: `gateway/${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`, renewMs: 2000 }),
  });
  const { url } = await gw.start({ host: "127.0.0.1", port: 0 });
  return {
    url,
    drained: () => ph.drained(),
    async stop() {
      await gw.stop().catch(() => {});
      await ph.close();
    },
  };
}

interface Row {
  kind: CannonOptions["kind"];
  r: CannonResult;
  /** CPU ms: this process (gateway + relay), Postgres backends, the load generator. */
  cpu: { self: number; pg: number; cannon: number };
  rss: number;
  counts: Counts;
}

const LABEL: Record<CannonOptions["kind"], string> = { get: "GET one Deployment", list: `GET a list (limit ${LIMIT})`, post: "POST a new Deployment" };

console.log(`load average at the start: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(
  `gateway load test: scenario ${values.scenario}: ${N} Deployments over ${NAMESPACES} namespaces; ${KINDS.join(", ")} for ${DURATION} s each at ${CONNECTIONS} connections, ` +
    `authenticated (bearer token of a token-file user in system:masters); pool ${POOL}; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), Node ${process.version}; ` +
    `the gateway runs in this process, autocannon in another; Postgres, NATS and both share the machine`,
);
const s = await countedStack("LOADGW");
const rows: Row[] = [];
let overheadCounts: Counts = { transactions: NaN, rowWrites: NaN, natsMessages: NaN };
try {
  // setup: the Deployments as the gateway would have stored them (defaults applied)
  {
    const ph = s.phase();
    try {
      await ph.relay();
      const gen = new ObjectStore(await ph.pool(16));
      const w0 = performance.now();
      await pool(N, 16, (i) => gen.create(applyDefaults(loadDeployment({ namespace: `ns-${i % NAMESPACES}`, name: `app-${i}`, replicas: 3 }), { now: new Date(), uuid: randomUUID })));
      console.log(`setup: ${N} Deployments written in ${fmt((performance.now() - w0) / 1000, 1)} s`);
      await ph.drained();
    } finally {
      await ph.close();
    }
  }
  // the first start writes the bootstrap RBAC policy; a second start and stop with no request is
  // taken off every phase's counts
  await (await startGateway(s)).stop();
  const c0 = await s.counts();
  await (await startGateway(s)).stop();
  let last = await s.counts();
  const overhead = minus(last, c0);
  overheadCounts = overhead;

  for (const kind of KINDS) {
    const gw = await startGateway(s);
    const mem = rssPeak();
    const cpu0 = { self: selfCpuMs(), pg: await s.backendCpu(), cannon: childrenCpuMs(process.pid) };
    const r = await cannon({ url: gw.url, token: tokens.token, kind, connections: CONNECTIONS, durationSeconds: DURATION, objects: N, namespaces: NAMESPACES, limit: LIMIT });
    await gw.drained();
    const cpu1 = { self: selfCpuMs(), pg: await s.backendCpu(), cannon: childrenCpuMs(process.pid) };
    const rss = mem.stop();
    await gw.stop();
    const c = await s.counts();
    rows.push({ kind, r, rss, cpu: { self: cpu1.self - cpu0.self, pg: backendCpuDelta(cpu0.pg, cpu1.pg), cannon: cpu1.cannon - cpu0.cannon }, counts: minus(minus(c, last), overhead) });
    last = c;
  }
} finally {
  await s.close();
  tokens.remove();
}

const rate = (r: CannonResult) => r.ok / r.seconds;
const statements = rows.some((x) => x.counts.statements !== undefined);
console.log(
  `\n${markdownTable(
    [
      "requests",
      "requests/s (2xx)",
      "p50 ms",
      "p99 ms",
      "max ms",
      "errors (non-2xx / failed / timed out)",
      "CPU ms per request: gateway process / Postgres / both",
      "load generator CPU ms per request",
      "transactions per request",
      "row writes per request",
      "NATS messages per request",
      ...(statements ? ["statements per request"] : []),
      "peak RSS MiB",
    ],
    rows.map(({ kind, r, cpu, rss, counts }) => [
      LABEL[kind],
      fmt(rate(r)),
      fmt(r.p50, 1),
      fmt(r.p99, 1),
      fmt(r.max, 1),
      `${fmt(r.non2xx)} / ${fmt(r.errors)} / ${fmt(r.timeouts)}`,
      `${fmt(cpu.self / r.ok, 3)} / ${fmt(cpu.pg / r.ok, 3)} / ${fmt((cpu.self + cpu.pg) / r.ok, 3)}`,
      fmt(cpu.cannon / r.ok, 3),
      fmt(counts.transactions / r.ok, 2),
      fmt(counts.rowWrites / r.ok, 2),
      fmt(counts.natsMessages / r.ok, 3),
      ...(statements ? [fmt((counts.statements ?? NaN) / r.ok, 2)] : []),
      mib(rss),
    ]),
  )}`,
);
console.log(`counted with every connection closed after each phase; taken off each phase: a gateway started and stopped with no request (${describe(overheadCounts)})`);

// issue 22's goals for the gateway alone
const byKind = new Map(rows.map((x) => [x.kind, x.r]));
const goals: [string, string, CannonResult | undefined, (r: CannonResult) => number, (v: number) => boolean, string][] = [
  ["GETs/s (one object)", "≥ 5,000", byKind.get("get"), rate, (v) => v >= 5000, "/s"],
  ["POSTs/s", "≥ 2,000", byKind.get("post"), rate, (v) => v >= 2000, "/s"],
  ["p99 of a GET (one object)", "≤ 20 ms", byKind.get("get"), (r) => r.p99, (v) => v <= 20, " ms"],
  ["p99 of a GET (list)", "≤ 20 ms", byKind.get("list"), (r) => r.p99, (v) => v <= 20, " ms"],
  ["p99 of a POST", "≤ 20 ms", byKind.get("post"), (r) => r.p99, (v) => v <= 20, " ms"],
];
console.log(
  `\n${markdownTable(
    ["goal (authenticated)", "target", "measured", "met"],
    goals.filter(([, , r]) => r).map(([name, target, r, value, ok, unit]) => [name, target, `${fmt(value(r!), unit === "/s" ? 0 : 1)}${unit}`, ok(value(r!)) ? "met" : "not met"]),
  )}`,
);
console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
process.exit(0);
