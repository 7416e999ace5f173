import { loadConfig } from "@flotilla/config";
import { createLogger } from "@flotilla/log";
import { ObjectStore, openDatabase } from "@flotilla/store";
import { connectNats, startRelay } from "@flotilla/events";
import { configSchema } from "./config.js";
import { buildGateway } from "./app.js";

const cfg = loadConfig(configSchema, process.env);
const log = createLogger({ name: "gateway", level: cfg.LOG_LEVEL });
const db = await openDatabase({ url: cfg.DATABASE_URL });
const store = new ObjectStore(db.sql);
const relay = startRelay({
  sql: db.sql,
  connect: () => connectNats({ servers: cfg.NATS_URL }),
  stream: cfg.EVENTS_STREAM,
  prefix: cfg.EVENTS_PREFIX,
  retentionMs: cfg.OUTBOX_RETENTION,
  prune: (ms) => store.pruneOutbox(ms),
  log: log.child({ component: "relay" }),
});
const gateway = buildGateway({
  store,
  log,
  settings: { notReadyTolerationSeconds: cfg.DEFAULT_NOT_READY_TOLERATION_SECONDS, unreachableTolerationSeconds: cfg.DEFAULT_UNREACHABLE_TOLERATION_SECONDS },
  ready: async () => (await db.sql`SELECT 1`, true),
});
const { url, grpcAddress } = await gateway.start({ host: cfg.HOST, port: cfg.PORT, grpcPort: cfg.GRPC_PORT || undefined });
log.info({ url, grpcAddress }, "gateway listening");

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    log.info({ signal: sig }, "shutting down");
    void Promise.allSettled([gateway.stop(), relay.stop()])
      .then(() => db.close())
      .finally(() => process.exit(0));
  });
}
