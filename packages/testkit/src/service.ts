// A service under test with what it runs on, made fresh for each test and torn down after it.
// @flotilla/events is a peer dependency: events' own tests use this package, and turbo would see
// a regular dependency as a cycle (tsconfig's reference still builds events before this package).
import { connectNats, ensureStream, jetstream, jetstreamManager, startRelay, type JetStreamClient, type JetStreamManager, type NatsConnection, type Relay, type RelayOptions } from "@flotilla/events";
import { createLogger, type Logger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { NATS_URL, freshDatabase, uniqueName, type TestDatabase } from "./core.js";

/** A logger that is silent unless LOG_LEVEL is set. */
export function testLogger(name: string): Logger {
  return createLogger({ name, level: process.env.LOG_LEVEL ?? "silent" });
}

/** Controller timings shrunk for tests: timer polls, retries and stops in milliseconds. */
export const FAST_CONTROLLERS = { timerPollMs: 50, backoff: { baseMs: 20, maxMs: 500 }, stopTimeoutMs: 2000 };

/** What a service under test runs on, nothing of it shared with a running stack or another test. */
export interface ServiceBackends {
  /** A migrated database of its own. */
  db: TestDatabase;
  /** An ObjectStore on `db`. */
  store: ObjectStore;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The wake-up stream and its subject prefix, unique names. */
  stream: string;
  prefix: string;
  /** The outbox relay from `db` to `stream`. */
  relay: Relay;
  log: Logger;
}

export interface Stoppable {
  stop(): Promise<unknown>;
}

export interface ServiceOptions<A extends Stoppable, S> {
  /** Names the logger, the stream (NAME_<random>) and the prefix (name_<random>). */
  name: string;
  /** Builds the service on the backends. */
  build(b: ServiceBackends): A | Promise<A>;
  /** Starts it (default `app.start()`); what it resolves to is the env's `started`. */
  start?(app: A): Promise<S>;
  /** Options of the database's pool. */
  db?: { max?: number };
  /** Relay options over the tests' (50 ms poll, no pruning); `ownConnection`: a NATS connection of its own. */
  relay?: Partial<RelayOptions> & { ownConnection?: boolean };
  /** Default `testLogger(name)`. */
  log?: Logger;
}

export interface ServiceEnv<A, S = unknown> extends ServiceBackends {
  /** The service as built and started. */
  app: A;
  started: S;
  /**
   * Starts `app` (one more replica, or one replacing a stopped service) with `start` (default:
   * the options' start); close() stops it, before those started earlier.
   */
  startAnother(app: A, start?: (app: A) => Promise<unknown>): Promise<A>;
  /** Stops the services (newest first) and the relay, deletes the stream, closes NATS, drops the database; each step runs whatever failed before it. */
  close(): Promise<void>;
}

/**
 * A fresh database, NATS stream and prefix, outbox relay and logger, the service `build` makes
 * on them, started (`start` is needed when the service's own start takes arguments). A failure
 * on the way tears down what was made.
 */
export function startService<A extends Stoppable, S>(o: ServiceOptions<A, S> & { start(app: A): Promise<S> }): Promise<ServiceEnv<A, S>>;
export function startService<A extends Stoppable & { start(): Promise<unknown> }>(o: ServiceOptions<A, unknown>): Promise<ServiceEnv<A>>;
export async function startService<A extends Stoppable, S>(o: ServiceOptions<A, S>): Promise<ServiceEnv<A, S>> {
  const log = o.log ?? testLogger(o.name);
  const stream = uniqueName(o.name).toUpperCase();
  const prefix = uniqueName(o.name);
  const db = await freshDatabase(o.db);
  const apps: A[] = [];
  const connections: NatsConnection[] = [];
  let jsm: JetStreamManager | undefined;
  let relay: Relay | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const a of [...apps].reverse()) await a.stop().catch(() => {});
      await relay?.stop().catch(() => {});
      await jsm?.streams.delete(stream).catch(() => {});
      await Promise.allSettled(connections.map((c) => c.close()));
      await db.drop();
    })());
  const start = o.start ?? ((app: A) => (app as unknown as { start(): Promise<S> }).start());
  const startAnother = async (app: A, how: (app: A) => Promise<unknown> = start) => {
    apps.push(app);
    await how(app);
    return app;
  };
  try {
    const connect = async () => {
      const c = await connectNats({ servers: NATS_URL });
      connections.push(c);
      return c;
    };
    const nc = await connect();
    jsm = await jetstreamManager(nc);
    await ensureStream(jsm, { stream, prefix, maxAgeMs: 10 * 60_000 });
    const { ownConnection, ...relayOptions } = o.relay ?? {};
    relay = startRelay({ sql: db.sql, nc: ownConnection ? await connect() : nc, stream, prefix, pollMs: 50, retentionMs: 0, ...relayOptions });
    const backends: ServiceBackends = { db, store: new ObjectStore(db.sql), nc, js: jetstream(nc), jsm, stream, prefix, relay, log };
    const app = await o.build(backends);
    apps.push(app);
    const started = await start(app);
    return { ...backends, app, started, startAnother, close };
  } catch (e) {
    await close().catch(() => {});
    throw e;
  }
}
