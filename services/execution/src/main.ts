import { runService } from "@flotilla/runtime";
import { configSchema } from "./config.js";
import { buildExecution } from "./app.js";

await runService("execution", configSchema, async ({ cfg, log, db, store, js, ready, starting }) => {
  const execution = buildExecution({ store, sql: db.sql, js, log, settings: cfg, ready });
  starting(execution);
  const { url, estimatorAddress } = await execution.start({ host: cfg.HOST, port: cfg.PORT, estimatorPort: cfg.ESTIMATOR_PORT || undefined });
  log.info({ url, estimatorAddress, statusUpdateFrequencyMs: cfg.CLUSTER_STATUS_UPDATE_FREQUENCY }, "execution listening");
  return execution;
});
