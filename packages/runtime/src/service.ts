import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { ConfigError, bool, common, duration, int, loadConfig, str, type ConfigOf, type Schema } from "@flotilla/config";
import { createLogger, type Logger } from "@flotilla/log";
import { ObjectStore, Sealer, databaseProbe, isConnectionLost, isDriverFault, newKeyLine, openDatabase, type Database } from "@flotilla/store";
import { connectNats, ensureStream, jetstream, natsAuthOptions, natsProbe, startRelay, type JetStreamClient, type NatsConnection } from "@flotilla/events";
import { backoffDelay } from "./backoff.js";
import { keyLocks, type KeyLocks } from "@flotilla/store";
import { Metrics } from "./metrics.js";
import { startTracing, traceContextOf } from "./tracing.js";

/** The settings every service process has, on top of its own. */
export const serviceSchema = {
  ...common,
  OUTBOX_RETENTION: duration("15m", "how long published events stay readable for watches resuming from a resourceVersion"),
  PLACEMENT_HISTORY_RETENTION: duration("168h", "how long each change of a binding's placement (spec.clusters) stays in its history (GET .../resourcebindings/{name}/history); 0 keeps them until PLACEMENT_HISTORY_MAX_ENTRIES or the binding goes"),
  PLACEMENT_HISTORY_MAX_ENTRIES: int(100, { min: 0 }, "placement changes kept per binding, the newest; 0: no limit but PLACEMENT_HISTORY_RETENTION"),
  DATABASE_POOL_SIZE: int(8, { min: 1 }, "Postgres connections of the service (the outbox relay has two of its own)"),
  NATS_USER: str("", "NATS user (with NATS_PASSWORD); empty: none"),
  NATS_PASSWORD: str("", "password of NATS_USER"),
  NATS_TOKEN: str("", "NATS authentication token"),
  NATS_CREDS_FILE: str("", "NATS credentials file (NKey seed and user JWT, as nsc writes them)"),
  ENCRYPTION_KEYS_FILE: str("", "keys (id:base64 of 32 bytes per line, the first seals) that encrypt the member credentials (Secrets in karmada-cluster) at rest; the gateway and execution need it, without it they are stored in clear"),
  OTEL_EXPORTER_OTLP_ENDPOINT: str("", "OpenTelemetry collector (OTLP over HTTP, e.g. http://collector:4318): traces are sent to its /v1/traces; empty: tracing off"),
  SHUTDOWN_TIMEOUT: duration("25s", "on SIGTERM/SIGINT, how long the service may take to stop cleanly (finish running reconciles, close its connections) before it exits anyway with code 1; below the orchestrator's grace period (Kubernetes: 30 s). A second signal exits at once"),
  ENCRYPTION_KEYS_FILE_CREATE: bool(false, "when ENCRYPTION_KEYS_FILE does not exist, create it (mode 0600) with one random key"),
};

export interface ServiceContext<C> {
  cfg: C;
  log: Logger;
  db: Database;
  store: ObjectStore;
  nc: NatsConnection;
  js: JetStreamClient;
  /** The process's metrics registry (the store's statements and the relay are registered already); the service adds its own and serves it on /metrics. */
  metrics: Metrics;
  /** Readiness of the dependencies: Postgres answers (within 2 s) and NATS is connected. */
  ready: () => Promise<boolean>;
  /**
   * The process's key locks (a connection of their own, opened at first use), for the
   * controllers whose keys the replicas share: one replica reconciles a key at a time.
   */
  keyLocks: KeyLocks;
  /**
   * Names what the service is starting, so that a start cut short by Postgres or NATS going
   * away is stopped before the service is started again.
   */
  starting: (r: Running) => void;
}

export interface Running {
  stop(): Promise<void>;
}

/**
 * A fault raised inside the Postgres driver (see `@flotilla/store` driver.ts) is logged and the
 * process carries on: the pool reconnects by itself. Anything else uncaught means the process
 * is in a state nobody planned for: it exits with code 1 and says why, and its supervisor
 * (`npm start`, the container runtime) starts it again.
 */
export function guardProcess(name: string, log: Logger): void {
  const fault = (kind: string) => (err: unknown) => {
    if (isDriverFault(err)) {
      log.error({ err, kind }, "postgres driver fault caught; the connection pool reconnects");
      return;
    }
    log.fatal({ err, kind }, `${name} cannot continue: ${kind}`);
    console.error(`${name}: exiting after ${kind}:`, err);
    process.exit(1);
  };
  process.on("uncaughtException", fault("uncaught exception"));
  process.on("unhandledRejection", fault("unhandled promise rejection"));
}

/**
 * Runs `attempt` until it succeeds, waiting 0.2 .. 5 s between tries while `transient(err)`
 * holds (the dependency is not reachable yet); any other error is returned to the caller.
 */
async function untilReachable<T>(what: string, log: Logger, attempt: () => Promise<T>, transient: (e: unknown) => boolean): Promise<T> {
  for (let failures = 1; ; failures++) {
    try {
      return await attempt();
    } catch (e) {
      if (!transient(e)) throw e;
      const retryInMs = backoffDelay(failures, { baseMs: 200, maxMs: 5000 });
      log.warn({ err: e, failures, retryInMs }, `${what} not reachable; retrying`);
      await new Promise((r) => setTimeout(r, retryInMs));
    }
  }
}

/**
 * The one way a Flotilla process starts: settings (a bad value stops it with the names), the root
 * logger, Postgres (created and migrated as needed), NATS and the stream, a standby-or-active outbox
 * relay, then the service itself; SIGINT/SIGTERM stop it all in reverse order.
 *
 * Postgres or NATS not reachable at start: it waits for them (retrying with backoff). Either
 * going away later: the service keeps running, `/readyz` answers 503 until it is back, the
 * pools and the NATS client reconnect, and the relay and consumers carry on from where they
 * were; going away while the service starts, what was started is stopped and started again. It
 * exits (code 1, with the reason) only when it cannot continue: a setting or credential the
 * server refuses, or the NATS connection closed for good.
 */
type ServiceConfig<S extends Schema> = ConfigOf<S> & ConfigOf<typeof serviceSchema>;

export async function runService<S extends Schema>(name: string, schema: S, start: (ctx: ServiceContext<ServiceConfig<S>>) => Promise<Running>): Promise<void> {
  const problems: string[] = [];
  const load = <T extends Schema>(x: T): ConfigOf<T> | undefined => {
    try {
      return loadConfig(x, process.env);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push(...e.problems);
      return undefined;
    }
  };
  const base = load(serviceSchema);
  const own = load(schema);
  if (!base || !own) {
    console.error(`${name}: invalid configuration:\n  ${[...new Set(problems)].join("\n  ")}`);
    process.exit(2);
  }
  const cfg = Object.freeze({ ...base, ...own }) as ServiceConfig<S>;
  const log = createLogger({ name, level: cfg.LOG_LEVEL });
  guardProcess(name, log);
  let stopping = false;
  // not reachable (yet): wait; refused (class 28: credentials, 3D000: no such database): exit
  const unreachable = (e: unknown) => isConnectionLost(e) && !/^(28|3D)/.test(String((e as { code?: unknown }).code));
  try {
    const db = await untilReachable("postgres", log, () => openDatabase({ url: cfg.DATABASE_URL, max: cfg.DATABASE_POOL_SIZE, applicationName: `flotilla-${name}` }), unreachable);
    const metrics = new Metrics();
    const tracing = cfg.OTEL_EXPORTER_OTLP_ENDPOINT ? startTracing({ service: name, endpoint: cfg.OTEL_EXPORTER_OTLP_ENDPOINT }) : undefined;
    const store = new ObjectStore(db.sql, {
      sealer: await sealerFrom(cfg, log),
      onStatement: metrics.statementObserver(),
      // the write's trace goes on with its wake-up (only while tracing is on)
      traceContext: tracing ? () => traceContextOf() : undefined,
      // recorded with the placement changes this service makes (the gateway's users' writes name the user)
      actor: `service:${name}`,
    });
    // the relay reads and marks the outbox on a pool of its own, so it never queues behind the service's writes
    const relayDb = await untilReachable("postgres", log, () => openDatabase({ url: cfg.DATABASE_URL, max: 2, create: false, migrate: false, applicationName: `flotilla-${name}-relay` }), unreachable);
    // waitOnFirstConnect: NATS not up yet is retried like a later disconnect, forever
    const waiting = setTimeout(() => log.warn({ servers: cfg.NATS_URL }, "nats not reachable; retrying"), 2000);
    const auth = natsAuthOptions({ user: cfg.NATS_USER, password: cfg.NATS_PASSWORD, token: cfg.NATS_TOKEN, credsFile: cfg.NATS_CREDS_FILE || undefined });
    const nc = await connectNats({ servers: cfg.NATS_URL, waitOnFirstConnect: true, ...auth }).finally(() => clearTimeout(waiting));
    void nc.closed().then((err) => {
      if (stopping) return;
      log.fatal({ err }, `${name} cannot continue: the NATS connection closed`);
      console.error(`${name}: exiting: the NATS connection closed${err ? `: ${err.message}` : ""}`);
      process.exit(1);
    });
    await untilReachable("nats jetstream", log, () => ensureStream(nc, { stream: cfg.EVENTS_STREAM, prefix: cfg.EVENTS_PREFIX, replicas: cfg.EVENTS_REPLICAS }), () => !nc.isClosed());
    const relay = startRelay({
      sql: relayDb.sql,
      nc,
      stream: cfg.EVENTS_STREAM,
      prefix: cfg.EVENTS_PREFIX,
      streamOptions: { replicas: cfg.EVENTS_REPLICAS },
      retentionMs: cfg.OUTBOX_RETENTION,
      // one process at a time (the active relay) applies the placement history's retention
      housekeeping: () => store.prunePlacementHistory({ maxAgeMs: cfg.PLACEMENT_HISTORY_RETENTION, maxPerBinding: cfg.PLACEMENT_HISTORY_MAX_ENTRIES }),
      log: log.child({ component: "relay" }),
    });
    metrics.relay(relay);
    const dbReady = databaseProbe(db.sql);
    const natsReady = natsProbe(nc);
    const ready = async () => natsReady() && (await dbReady());
    const locks = keyLocks(db.sql);
    // Postgres or NATS going away while the service starts (its first lists, say): what was
    // started is stopped, and the service is started again once they answer
    let running: Running | undefined;
    for (let failures = 1; !running; failures++) {
      let partial: Running | undefined;
      try {
        running = await start({ cfg, log, db, store, nc, js: jetstream(nc), metrics, ready, keyLocks: locks, starting: (r) => void (partial = r) });
      } catch (e) {
        if (!unreachable(e) || nc.isClosed()) throw e;
        const retryInMs = backoffDelay(failures, { baseMs: 200, maxMs: 5000 });
        log.warn({ err: e, failures, retryInMs }, `${name}: a dependency went away while starting; starting again`);
        await Promise.race([partial?.stop().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
        metrics.forgetControllers();
        await new Promise((r) => setTimeout(r, retryInMs));
      }
    }
    const started = running;
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
      process.on(sig, () => {
        if (stopping) {
          log.warn({ signal: sig }, "second signal while shutting down: exiting now");
          process.exit(1);
        }
        stopping = true;
        log.info({ signal: sig, timeoutMs: cfg.SHUTDOWN_TIMEOUT }, "shutting down");
        // a stop that hangs (a member or Postgres not answering) must not keep the process past its grace period
        setTimeout(() => {
          log.error({ timeoutMs: cfg.SHUTDOWN_TIMEOUT }, "did not stop within SHUTDOWN_TIMEOUT; exiting anyway");
          process.exit(1);
        }, cfg.SHUTDOWN_TIMEOUT).unref();
        void Promise.allSettled([started.stop(), relay.stop()])
          .then(() => Promise.allSettled([nc.drain(), locks.close(), db.close(), relayDb.close(), tracing?.stop()]))
          .finally(() => process.exit(0));
      });
    }
  } catch (e) {
    log.fatal({ err: e }, `${name} cannot start`);
    console.error(`${name}: cannot start:`, e instanceof ConfigError ? e.message : e);
    // a setting the service rejects is not retried by supervision (exit 2, as for a malformed one)
    process.exit(e instanceof ConfigError ? 2 : 1);
  }
}

/** The Sealer of ENCRYPTION_KEYS_FILE (created when asked to), or undefined (credentials in clear, with a warning). */
async function sealerFrom(cfg: ConfigOf<typeof serviceSchema>, log: Logger): Promise<Sealer | undefined> {
  const file = cfg.ENCRYPTION_KEYS_FILE;
  if (!file) {
    log.warn("ENCRYPTION_KEYS_FILE is not set: member credentials are stored in clear");
    return undefined;
  }
  if (cfg.ENCRYPTION_KEYS_FILE_CREATE) {
    // written aside, then linked into place: replicas starting together never read a half-written file
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, newKeyLine(`k${Date.now().toString(36)}`), { mode: 0o600 });
    const created = await link(tmp, file).then(
      () => true,
      (e: NodeJS.ErrnoException) => {
        if (e.code !== "EEXIST") throw e;
        return false;
      },
    );
    await unlink(tmp);
    if (created) log.warn({ file }, "created an encryption key file");
  }
  try {
    return Sealer.fromFile(file);
  } catch (e) {
    throw new ConfigError([`ENCRYPTION_KEYS_FILE ${file}: ${(e as Error).message}`]);
  }
}
