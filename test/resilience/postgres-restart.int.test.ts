// Postgres restarts under write load: a server of the test's own is stopped (fast shutdown: every
// session gets FATAL 57P01) and started again, six times, while writers, paged lists (transactions),
// outbox pruning (transactions), a watch (LISTEN), the outbox relay (its advisory-lock session and
// LISTEN) and the binding service's controllers and consumer all use it. Nothing may crash; the
// readiness probe must say false while Postgres is down and true again after; afterwards every
// acknowledged write reaches the stream, and the controllers still turn a template into a binding.
// Then a service process (eviction, through runService) is started while Postgres and NATS (a
// nats-server of the test's own) are down: it waits, becomes ready, answers 503 through a Postgres
// restart and a NATS kill -9 and 200 after each, and stops cleanly.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { randomUUID } from "node:crypto";
import { applyDefaults, type KubeObject } from "@flotilla/api";
import { connectNats, consume, ensureStream, jetstream, jetstreamManager, startRelay, subjectFor, type NatsConnection, type Relay, type WakeUpConsumer } from "@flotilla/events";
import { ObjectStore, databaseProbe, openDatabase, type Database } from "@flotilla/store";
import { NATS_URL, NatsServer, PostgresServer, canRunNatsServer, canRunPostgresServer, eventually, sleep, uniqueName } from "@flotilla/testkit";
import { buildApp, type App } from "@flotilla/binding";

const log = pino({ level: process.env.LOG_LEVEL ?? "silent" });
const ROUNDS = 6;

const cm = (name: string): KubeObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { a: "1" } });
const deployment = (name: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default", labels: { app: name } },
  spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx" }] } } },
});
const policy = (name: string, target: string): KubeObject =>
  applyDefaults(
    {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "PropagationPolicy",
      metadata: { name, namespace: "default" },
      spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: target }], placement: { clusterAffinity: { clusterNames: ["member1"] } } },
    },
    { now: new Date(), uuid: randomUUID },
  );
const RB = "work.karmada.io/ResourceBinding";

let server: PostgresServer;
let db: Database;
let relayDb: Database;
let store: ObjectStore;
let nc: NatsConnection;
let relay: Relay;
let app: App;
let collector: WakeUpConsumer;
const stream = uniqueName("PGR").toUpperCase();
const prefix = uniqueName("pgr");
const delivered = new Set<string>();

before(async () => {
  server = await PostgresServer.start();
  const url = server.url("flotilla_restart");
  db = await openDatabase({ url, max: 8 });
  relayDb = await openDatabase({ url, max: 2, create: false, migrate: false });
  store = new ObjectStore(db.sql);
  nc = await connectNats({ servers: NATS_URL });
  await ensureStream(nc, { stream, prefix, maxAgeMs: 10 * 60_000 });
  relay = startRelay({
    sql: relayDb.sql,
    nc,
    stream,
    prefix,
    pollMs: 50,
    standbyRetryMs: 100,
    lockCheckMs: 200,
    dbTimeoutMs: 3000,
    backoff: { baseMs: 50, maxMs: 500 },
    retentionMs: 2000,
    pruneEveryMs: 200,
  });
  collector = consume({
    js: jetstream(nc),
    stream,
    durable: "collector",
    subject: subjectFor("/ConfigMap", prefix),
    handler: async (w) => void delivered.add(w.name ?? ""),
  });
  app = buildApp({
    store,
    sql: db.sql,
    js: jetstream(nc),
    stream,
    prefix,
    log,
    ready: databaseProbe(db.sql, 1000),
    settings: { resyncMs: 0 },
    controllerOptions: { timerPollMs: 50, backoff: { baseMs: 20, maxMs: 500 }, stopTimeoutMs: 2000, timeoutMs: 5000 },
  });
  await app.start();
  await Promise.all([app.consumer!.ready, collector.ready, relay.whenActive()]);
});

after(async () => {
  await app?.stop().catch(() => {});
  await collector?.stop().catch(() => {});
  await relay?.stop().catch(() => {});
  await jetstreamManager(nc)
    .then((jsm) => jsm.streams.delete(stream))
    .catch(() => {});
  await nc?.close().catch(() => {});
  await Promise.allSettled([db?.close(), relayDb?.close()]);
  await server?.destroy();
});

const readyz = async () => (await app.http.inject({ method: "GET", url: "/readyz" })).statusCode;

test(`${ROUNDS} Postgres restarts under write load: no crash, readiness follows Postgres, relay, consumers and controllers carry on`, { skip: !canRunPostgresServer() && "no PostgreSQL binaries" }, async () => {
  const faults: unknown[] = [];
  const onFault = (e: unknown) => faults.push(e);
  process.on("uncaughtException", onFault);
  process.on("unhandledRejection", onFault);

  let stop = false;
  const acked = new Set<string>();
  let failed = 0;
  let listed = 0;
  let watched = 0;
  const loops: Promise<void>[] = [];
  // which loops are still running, by name (a stuck one is named in the failure)
  const running = new Set<string>();
  const loop = (name: string, body: () => Promise<void>) => {
    running.add(name);
    loops.push(body().finally(() => running.delete(name)));
  };
  // writers: every write the store acknowledged must reach the stream
  for (let w = 0; w < 8; w++) {
    loop(`writer ${w}`, async () => {
      for (let i = 0; !stop; i++) {
        const name = `cm-${w}-${i}`;
        try {
          await store.create(cm(name));
          acked.add(name);
        } catch {
          failed++;
          await sleep(20);
        }
      }
    });
  }
  // paged lists: a REPEATABLE READ transaction each
  loop("paged lists", async () => {
    while (!stop) {
      try {
        await store.list("/ConfigMap", { limit: 5 });
        listed++;
      } catch {
        await sleep(20);
      }
    }
  });
  // a watch (LISTEN on the pool), re-opened whenever Postgres drops it
  loop("watch", async () => {
    const abort = new AbortController();
    const stopping = setInterval(() => stop && abort.abort(), 50);
    while (!stop) {
      try {
        for await (const _ of await store.watch("/ConfigMap", { signal: abort.signal })) {
          watched++;
          if (stop) break;
        }
      } catch {
        await sleep(50);
      }
    }
    clearInterval(stopping);
  });

  try {
    for (let round = 0; round < ROUNDS; round++) {
      await sleep(300);
      await server.stopServer("fast");
      await eventually(async () => (await readyz()) === 503, { timeoutMs: 3000, message: `round ${round}: /readyz still 200 with Postgres down` });
      await sleep(200);
      await server.startServer();
      await eventually(async () => (await readyz()) === 200, { timeoutMs: 10_000, intervalMs: 50, message: `round ${round}: /readyz not 200 again` });
    }
    // writes go on after the last restart
    const before = acked.size;
    await eventually(() => acked.size > before + 50, { timeoutMs: 10_000 });
  } finally {
    stop = true;
    // every loop ends within a query's time: one that does not is a query that never settled
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`load loops did not end within 30 s of the last restart: ${[...running].join(", ")} (writes ${acked.size}, failed ${failed}, lists ${listed}, watch events ${watched})`)), 30_000);
    });
    await Promise.race([Promise.all(loops), stuck]).finally(() => clearTimeout(timer));
  }

  // the relay published everything that was written (and acknowledged), the consumer got it
  await eventually(() => [...acked].every((n) => delivered.has(n)), { timeoutMs: 20_000, message: "wake-ups of acknowledged writes missing" });
  assert.ok(relay.active, "the relay holds its lock again");
  assert.ok(relay.stats.activations >= 1);

  // the binding service's controllers still work: a template and its policy make a binding
  await store.create(policy("after-restarts", "web"));
  await store.create(deployment("web"));
  const rb = await eventually(() => store.get({ gk: RB, namespace: "default", name: "web-deployment" }), { timeoutMs: 15_000 });
  assert.equal(rb.spec?.resource?.name, "web");
  assert.equal(await readyz(), 200);

  process.off("uncaughtException", onFault);
  process.off("unhandledRejection", onFault);
  assert.deepEqual(faults, []);
  assert.ok(listed > 0 && watched > 0, `lists ${listed}, watch events ${watched}`);
  log.info({ acked: acked.size, failed, listed, watched, activations: relay.stats.activations, relayErrors: relay.stats.errors }, "done");
});

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

test("a service process waits for Postgres and NATS at start, answers 503 while either is down (NATS killed with -9) and 200 after, and stops with code 0", { skip: !(canRunPostgresServer() && canRunNatsServer()) && "no PostgreSQL or nats-server binaries" }, async () => {
  const root = path.resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
  const port = await freePort();
  const nats = await NatsServer.create();
  const readiness = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) })).status;
    } catch {
      return 0; // not listening (yet)
    }
  };
  await server.stopServer("fast");
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "services/eviction/src/main.ts"], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: server.url("flotilla_service"), NATS_URL: nats.url, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const alive = (when: string) => assert.equal(child.exitCode, null, `exited ${when}:\n${output}`);
  try {
    // neither is up: it waits for Postgres, then for NATS
    await eventually(() => /postgres not reachable; retrying/.test(output), { timeoutMs: 20_000, message: `no word about Postgres:\n${output}` });
    alive("while Postgres was down");
    await server.startServer();
    await eventually(() => /nats not reachable; retrying/.test(output), { timeoutMs: 20_000, message: `no word about NATS:\n${output}` });
    alive("while NATS was down");
    await nats.start();
    await eventually(async () => (await readiness()) === 200, { timeoutMs: 30_000, intervalMs: 100, message: `never ready:\n${output}` });

    // Postgres restarts
    await server.stopServer("fast");
    await eventually(async () => (await readiness()) === 503, { timeoutMs: 5000, intervalMs: 100 });
    await sleep(500);
    alive("while Postgres was down");
    await server.startServer();
    await eventually(async () => (await readiness()) === 200, { timeoutMs: 10_000, intervalMs: 100, message: `not ready again after Postgres:\n${output}` });

    // NATS crashes (kill -9) and comes back with its store
    await nats.kill("SIGKILL");
    await eventually(async () => (await readiness()) === 503, { timeoutMs: 10_000, intervalMs: 100, message: "/readyz still 200 with NATS down" });
    await sleep(500);
    alive("while NATS was down");
    await nats.start();
    await eventually(async () => (await readiness()) === 200, { timeoutMs: 15_000, intervalMs: 100, message: `not ready again after NATS:\n${output}` });

    assert.doesNotMatch(output, /cannot continue|cannot start|uncaught|unhandled/i);
    child.kill("SIGTERM");
    assert.equal(await exited, 0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    await nats.destroy();
  }
});
