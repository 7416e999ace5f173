import { ConfigError, common, duration, int, loadConfig, type ConfigOf, type Schema } from "@flotilla/config";
import { createLogger, type Logger } from "@flotilla/log";
import { ObjectStore, openDatabase, type Database } from "@flotilla/store";
import { connectNats, ensureStream, jetstream, startRelay, type JetStreamClient, type NatsConnection } from "@flotilla/events";

/** The settings every service process has, on top of its own. */
export const serviceSchema = {
  ...common,
  OUTBOX_RETENTION: duration("15m", "how long published events stay readable for watches resuming from a resourceVersion"),
  DATABASE_POOL_SIZE: int(8, { min: 1 }, "Postgres connections of the service (the outbox relay has two of its own)"),
};

export interface ServiceContext<C> {
  cfg: C;
  log: Logger;
  db: Database;
  store: ObjectStore;
  nc: NatsConnection;
  js: JetStreamClient;
}

export interface Running {
  stop(): Promise<void>;
}

/**
 * The one way a Flotilla process starts: settings (a bad value stops it with the names), the root
 * logger, Postgres (created and migrated as needed), NATS and the stream, a standby-or-active outbox
 * relay, then the service itself; SIGINT/SIGTERM stop it all in reverse order.
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
  const db = await openDatabase({ url: cfg.DATABASE_URL, max: cfg.DATABASE_POOL_SIZE });
  const store = new ObjectStore(db.sql);
  // the relay reads and marks the outbox on a pool of its own, so it never queues behind the service's writes
  const relayDb = await openDatabase({ url: cfg.DATABASE_URL, max: 2, create: false, migrate: false });
  const nc = await connectNats({ servers: cfg.NATS_URL });
  await ensureStream(nc, { stream: cfg.EVENTS_STREAM, prefix: cfg.EVENTS_PREFIX });
  const relay = startRelay({
    sql: relayDb.sql,
    nc,
    stream: cfg.EVENTS_STREAM,
    prefix: cfg.EVENTS_PREFIX,
    retentionMs: cfg.OUTBOX_RETENTION,
    prune: (ms) => store.pruneOutbox(ms),
    log: log.child({ component: "relay" }),
  });
  const running = await start({ cfg, log, db, store, nc, js: jetstream(nc) });
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      log.info({ signal: sig }, "shutting down");
      void Promise.allSettled([running.stop(), relay.stop()])
        .then(() => Promise.allSettled([nc.drain(), db.close(), relayDb.close()]))
        .finally(() => process.exit(0));
    });
  }
}
