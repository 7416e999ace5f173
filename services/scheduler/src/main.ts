import { runService } from "@flotilla/runtime";
import { EstimatorClient } from "@flotilla/proto/grpc";
import { configSchema } from "./config.js";
import { settingsFrom } from "./settings.js";
import { buildApp } from "./app.js";

await runService("scheduler", configSchema, async ({ cfg, log, db, store, js, metrics, ready, keyLocks, starting }) => {
  const estimator = cfg.ESTIMATOR_ENABLED ? new EstimatorClient(cfg.ESTIMATOR_GRPC_URL, { deadlineMs: cfg.ESTIMATOR_TIMEOUT }) : undefined;
  const app = buildApp({
    store,
    sql: db.sql,
    js,
    stream: cfg.EVENTS_STREAM,
    prefix: cfg.EVENTS_PREFIX,
    log,
    settings: settingsFrom(cfg),
    estimator,
    ready,
    registry: metrics,
    keyLocks,
  });
  const running = {
    async stop() {
      await app.stop();
      estimator?.close();
    },
  };
  starting(running);
  const { url, grpcAddress } = await app.start({ host: cfg.HOST, port: cfg.PORT, grpcPort: cfg.SCHEDULER_GRPC_PORT || undefined });
  log.info({ url, grpcAddress, estimator: estimator ? cfg.ESTIMATOR_GRPC_URL : "off" }, "scheduler listening");
  return running;
});
