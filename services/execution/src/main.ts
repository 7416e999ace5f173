import { hostname } from "node:os";
import { grpcServerSecurity } from "@flotilla/auth";
import { runService } from "@flotilla/runtime";
import { configSchema } from "./config.js";
import { buildExecution } from "./app.js";

await runService("execution", configSchema, async ({ cfg, log, db, store, js, metrics, ready, starting }) => {
  // a restarted replica keeps its name, so it takes its members back at once rather than after the lease
  const replica = cfg.REPLICA_NAME || `${hostname()}-${cfg.PORT || process.pid}`;
  const grpcSecurity = cfg.ESTIMATOR_PORT ? await grpcServerSecurity(cfg, store, log, "ESTIMATOR_PORT") : undefined;
  const execution = buildExecution({ store, sql: db.sql, js, log, settings: cfg, ready, metrics, replica, grpcSecurity });
  starting(execution);
  const { url, estimatorAddress } = await execution.start({ host: cfg.HOST, port: cfg.PORT, estimatorPort: cfg.ESTIMATOR_PORT || undefined });
  log.info({ url, estimatorAddress, replica, memberSharding: cfg.MEMBER_SHARDING, statusUpdateFrequencyMs: cfg.CLUSTER_STATUS_UPDATE_FREQUENCY }, "execution listening");
  return execution;
});
