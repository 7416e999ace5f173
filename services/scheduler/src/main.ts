import { runService } from "@flotilla/runtime";
import { ConfigError } from "@flotilla/config";
import { EstimatorClient } from "@flotilla/proto/grpc";
import { SCHEDULER_IDENTITY, callerCredentials, grpcServerSecurity, readCa, selfIssuedToken, serviceAccountVerifier } from "@flotilla/auth";
import { configSchema } from "./config.js";
import { settingsFrom } from "./settings.js";
import { buildApp } from "./app.js";

await runService("scheduler", configSchema, async ({ cfg, log, db, store, js, metrics, ready, keyLocks, starting }) => {
  const grpcSecurity = cfg.SCHEDULER_GRPC_PORT ? await grpcServerSecurity(cfg, store, log, "SCHEDULER_GRPC_PORT") : undefined;
  let estimator: EstimatorClient | undefined;
  if (cfg.ESTIMATOR_ENABLED) {
    // the estimator takes calls over TLS from service accounts allowed to: the scheduler's own (flotilla-system/scheduler)
    const problem = "the scheduler needs SERVICE_ACCOUNT_KEY_FILE (the gateway's private key) while ESTIMATOR_ENABLED: it signs its own service account token for the estimator";
    if (!cfg.SERVICE_ACCOUNT_KEY_FILE) throw new ConfigError([problem]);
    const tokens = grpcSecurity?.tokens ?? (await serviceAccountVerifier(cfg, store));
    if (!tokens.canIssue) throw new ConfigError([`${problem}; its first key is a public key`]);
    const credentials = callerCredentials({ ca: readCa("ESTIMATOR_CA_FILE", cfg.ESTIMATOR_CA_FILE), token: selfIssuedToken({ store, tokens, identity: SCHEDULER_IDENTITY }) });
    estimator = new EstimatorClient(cfg.ESTIMATOR_GRPC_URL, { deadlineMs: cfg.ESTIMATOR_TIMEOUT, credentials });
  }
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
    grpcSecurity,
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
