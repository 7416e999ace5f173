// Every service's /metrics comes from the one registry of @flotilla/runtime: each service is built
// as runService builds it (its store's statements and the outbox relay in the same registry), its
// /metrics is scraped, and every family it declares is there with the type its name promises.
// The Grafana dashboard (deploy/grafana/flotilla.json) is then checked against what the services
// serve: every metric a panel queries exists, with a type the query suits.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { loadConfig } from "@flotilla/config";
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay, type NatsConnection, type Relay } from "@flotilla/events";
import { silentLogger } from "@flotilla/log";
import { METRICS, METRIC_NAME, Metrics } from "@flotilla/runtime";
import { ObjectStore } from "@flotilla/store";
import { NATS_URL, freshDatabase, uniqueName, type TestDatabase } from "@flotilla/testkit";
import { AGENT_METRICS, buildAgent } from "../../services/agent/src/app.js";
import { configSchema as agentSchema } from "../../services/agent/src/config.js";
import { buildApp as buildBinding } from "../../services/binding/src/app.js";
import { EVICTION_METRICS, buildApp as buildEviction, configSchema as evictionSchema } from "../../services/eviction/src/app.js";
import { EXECUTION_METRICS, buildExecution } from "../../services/execution/src/app.js";
import { testGatewayDeps } from "../../services/gateway/src/access.test-support.js";
import { GATEWAY_METRICS, buildGateway } from "../../services/gateway/src/app.js";
import { SCHEDULER_METRICS, buildApp as buildScheduler } from "../../services/scheduler/src/app.js";
import { configSchema as schedulerSchema } from "../../services/scheduler/src/config.js";
import { settingsFrom } from "../../services/scheduler/src/settings.js";
import { TAINT_MANAGER_METRICS, buildApp as buildTaintManager, configSchema as taintManagerSchema } from "../../services/taint-manager/src/app.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DASHBOARD = path.join(root, "deploy/grafana/flotilla.json");

type Families = Map<string, string>;

/** `# TYPE name type` lines of a Prometheus text exposition. */
function families(text: string): Families {
  const out: Families = new Map();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
  return out;
}

/** The type a Flotilla metric's name promises: `_total` a counter, a `_seconds` or `_bytes` histogram, anything else a gauge. */
function typeByName(name: string): string {
  if (name.endsWith("_total")) return "counter";
  if (name.endsWith("_seconds") || name.endsWith("_bytes")) return "histogram";
  return "gauge";
}

const CONTROLLER_FAMILIES = Object.values(METRICS).filter((n) => n.startsWith("flotilla_controller_") || n.startsWith("flotilla_consumer_"));
const PROCESS_FAMILIES = [METRICS.storeStatementDuration, METRICS.relayPublished, METRICS.relayDuplicates, METRICS.relayBatches, METRICS.relayErrors, METRICS.relayPruned, METRICS.relayActive];

/** What each service must serve on /metrics. */
const EXPECTED: Record<string, string[]> = {
  gateway: [...PROCESS_FAMILIES, ...Object.values(GATEWAY_METRICS)],
  binding: [...PROCESS_FAMILIES, ...CONTROLLER_FAMILIES],
  scheduler: [...PROCESS_FAMILIES, ...CONTROLLER_FAMILIES, ...Object.values(SCHEDULER_METRICS)],
  "taint-manager": [...PROCESS_FAMILIES, ...CONTROLLER_FAMILIES, ...Object.values(TAINT_MANAGER_METRICS)],
  eviction: [...PROCESS_FAMILIES, ...CONTROLLER_FAMILIES, ...Object.values(EVICTION_METRICS)],
  execution: [...PROCESS_FAMILIES, ...CONTROLLER_FAMILIES, ...Object.values(EXECUTION_METRICS)],
  agent: Object.values(AGENT_METRICS),
};

describe("every service's metrics", () => {
  let db: TestDatabase;
  let nc: NatsConnection;
  let relay: Relay;
  const stream = uniqueName("OBS").toUpperCase();
  const prefix = uniqueName("obs");
  const scraped = new Map<string, Families>();
  const stops: Array<() => Promise<unknown>> = [];

  /** What runService gives a service: a registry with the store's statements and the relay in it. */
  const processOf = () => {
    const metrics = new Metrics();
    const store = new ObjectStore(db.sql, { onStatement: metrics.statementObserver() });
    metrics.relay(relay);
    return { metrics, store };
  };

  before(async () => {
    db = await freshDatabase();
    nc = await connectNats({ servers: NATS_URL });
    await ensureStream(nc, { stream, prefix, maxAgeMs: 10 * 60_000 });
    relay = startRelay({ sql: db.sql, nc, stream, prefix, retentionMs: 0 });
    const log = silentLogger();
    const js = jetstream(nc);
    const events = { EVENTS_STREAM: stream, EVENTS_PREFIX: prefix };

    {
      const { metrics, store } = processOf();
      const gw = buildGateway({ ...testGatewayDeps(store), metrics });
      stops.push(() => gw.stop());
      // a request, so that the request counters have a sample
      await gw.http.inject({ method: "GET", url: "/healthz" });
      // served behind authentication like everything else: read as the process sees it
      scraped.set("gateway", families(await metrics.text()));
      assert.equal((await gw.http.inject({ method: "GET", url: "/metrics" })).statusCode, 401, "the gateway's /metrics needs a token");
    }
    {
      const { metrics, store } = processOf();
      const app = buildBinding({ store, sql: db.sql, js, stream, prefix, log, metrics });
      stops.push(() => app.stop());
      scraped.set("binding", families((await app.http.inject({ method: "GET", url: "/metrics" })).body));
    }
    {
      const { metrics, store } = processOf();
      const app = buildScheduler({ store, sql: db.sql, js, stream, prefix, log, settings: settingsFrom(loadConfig(schedulerSchema, {})), registry: metrics });
      stops.push(() => app.stop());
      scraped.set("scheduler", families((await app.http.inject({ method: "GET", url: "/metrics" })).body));
    }
    {
      const { metrics, store } = processOf();
      const app = buildTaintManager({ store, sql: db.sql, log, cfg: { ...loadConfig(taintManagerSchema, {}), ...events }, metrics });
      stops.push(() => app.stop());
      scraped.set("taint-manager", families((await app.http.inject({ method: "GET", url: "/metrics" })).body));
    }
    {
      const { metrics, store } = processOf();
      const app = buildEviction({ store, sql: db.sql, log, cfg: { ...loadConfig(evictionSchema, {}), ...events }, metrics });
      stops.push(() => app.stop());
      scraped.set("eviction", families((await app.http.inject({ method: "GET", url: "/metrics" })).body));
    }
    {
      const { metrics, store } = processOf();
      const app = buildExecution({ store, sql: db.sql, log, settings: events, metrics });
      stops.push(() => app.stop());
      scraped.set("execution", families((await app.http.inject({ method: "GET", url: "/metrics" })).body));
    }
    {
      const settings = loadConfig(agentSchema, { CLUSTER_NAME: "member1", GATEWAY_URL: "https://127.0.0.1:1", GATEWAY_TOKEN_FILE: "/dev/null" });
      const agent = buildAgent({ settings, log, member: { server: "https://127.0.0.1:1" }, token: () => "t" });
      stops.push(() => agent.stop());
      scraped.set("agent", families(await agent.metrics.text()));
    }
  });

  after(async () => {
    for (const s of stops) await s().catch(() => {});
    await relay?.stop().catch(() => {});
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
    await nc?.close();
    await db?.drop();
  });

  for (const [service, names] of Object.entries(EXPECTED)) {
    test(`${service} serves its metrics with the types their names promise`, () => {
      const got = scraped.get(service);
      assert.ok(got, `${service} was scraped`);
      for (const name of names) assert.equal(got.get(name), typeByName(name), `${service}: ${name}`);
      for (const [name, type] of got) {
        if (!name.startsWith("flotilla_")) continue;
        assert.match(name, METRIC_NAME);
        assert.equal(type, typeByName(name), `${service}: ${name} is a ${type}`);
      }
      assert.equal(got.get("process_cpu_seconds_total"), "counter", `${service}: the process metrics`);
    });
  }

  test("every metric the Grafana dashboard queries is served, with a type the query suits", () => {
    const all: Families = new Map();
    for (const f of scraped.values()) for (const [n, t] of f) all.set(n, t);
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Array<{ title: string; type: string; targets?: Array<{ expr: string }> }> };
    const used = new Set<string>();
    let queries = 0;
    for (const panel of dashboard.panels) {
      if (panel.type === "row") continue;
      assert.ok(panel.targets?.length, `panel ${panel.title} has queries`);
      for (const { expr } of panel.targets!) {
        queries++;
        const names = [...expr.matchAll(/\b((?:flotilla|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
        assert.ok(names.length > 0, `${panel.title}: ${expr} names a metric`);
        for (const name of names) {
          const suffix = /_(bucket|sum|count)$/.exec(name);
          const base = suffix && all.get(name.slice(0, -suffix[0].length)) === "histogram" ? name.slice(0, -suffix[0].length) : name;
          const type = all.get(base);
          assert.ok(type, `${panel.title}: ${name} is served by no service`);
          used.add(base);
          const rated = new RegExp(`\\b(rate|increase)\\(\\s*${name}\\b`).test(expr);
          if (type === "histogram") assert.ok(suffix && rated, `${panel.title}: the histogram ${base} is read through rate(${base}_bucket|_sum|_count)`);
          else if (type === "counter") assert.ok(rated, `${panel.title}: the counter ${name} is read through rate()`);
          else assert.ok(!rated, `${panel.title}: the gauge ${name} is read as it is, not through rate()`);
        }
      }
    }
    assert.ok(queries >= 30, `${queries} queries`);
    // what issue 13 asks the dashboard to show
    for (const name of [
      METRICS.reconcileDuration,
      METRICS.reconcileErrors,
      METRICS.queueDepth,
      METRICS.wakeUpLag,
      METRICS.storeStatementDuration,
      METRICS.relayPublished,
      METRICS.consumerMessages,
      TAINT_MANAGER_METRICS.evictions,
      EVICTION_METRICS.tasksRemoved,
      SCHEDULER_METRICS.schedule,
      EXECUTION_METRICS.probeDuration,
    ]) {
      assert.ok(used.has(name), `the dashboard shows ${name}`);
    }
  });

  test("docker compose runs two replicas of each controller service and Prometheus scrapes every replica where compose serves its /metrics", () => {
    type Service = { environment?: Record<string, string>; volumes?: string[]; profiles?: string[]; deploy?: { replicas?: number }; ports?: string[] };
    const compose = parse(readFileSync(path.join(root, "docker-compose.yml"), "utf8")) as { services: Record<string, Service> };
    type Job = { job_name: string; static_configs?: unknown; dns_sd_configs?: Array<{ names: string[]; type?: string; port: number }> };
    const prom = parse(readFileSync(path.join(root, "deploy/prometheus/prometheus.yml"), "utf8")) as { scrape_configs: Job[] };
    const jobs = prom.scrape_configs.map((j) => j.job_name).sort();
    assert.deepEqual(jobs, ["binding", "eviction", "execution", "scheduler", "taint-manager"]);
    for (const j of prom.scrape_configs) {
      const svc = compose.services[j.job_name];
      assert.ok((svc?.deploy?.replicas ?? 1) >= 2, `${j.job_name} runs ${svc?.deploy?.replicas ?? 1} replica(s)`);
      // a fixed host port can be published by one replica only
      for (const p of svc?.ports ?? []) assert.match(p, /^127\.0\.0\.1:(\d+-\d+)?:\d+$/, `${j.job_name}: ${p} is not a free or ranged host port on loopback`);
      // one static target would reach one replica: the service's name through DNS, one target per replica address
      assert.equal(j.static_configs, undefined, `${j.job_name}: a static target scrapes one replica`);
      const sd = j.dns_sd_configs?.[0];
      assert.ok(sd, `${j.job_name}: no DNS service discovery`);
      assert.deepEqual(sd.names, [j.job_name]);
      assert.equal(sd.type ?? "SRV", "A", "compose's DNS answers A records, one per replica");
      assert.equal(svc?.environment?.PORT, String(sd.port), `${j.job_name} listens on ${sd.port}`);
    }
    assert.deepEqual(compose.services.grafana?.profiles, ["observability"], "an opt-in profile: a plain `up` is unchanged");
    assert.ok(compose.services.grafana?.volumes?.some((v) => v.startsWith("./deploy/grafana/flotilla.json:")));
  });
});
