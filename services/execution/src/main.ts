import { runService } from "@flotilla/runtime";
import { ObjectStore, openDatabase } from "@flotilla/store";
import { configSchema } from "./config.js";
import { buildExecution } from "./app.js";

await runService("execution", configSchema, async ({ cfg, log, db, js }) => {
  // The controllers get a pool of their own, so the outbox relay (on runService's pool) never
  // queues behind their status writes.
  const own = await openDatabase({ url: cfg.DATABASE_URL, max: cfg.DATABASE_POOL_SIZE, migrate: false });
  const execution = buildExecution({ store: new ObjectStore(own.sql), sql: own.sql, js, log, settings: cfg, ready: async () => (await db.sql`SELECT 1`, true) });
  const { url, estimatorAddress } = await execution.start({ host: cfg.HOST, port: cfg.PORT, estimatorPort: cfg.ESTIMATOR_PORT || undefined });
  log.info({ url, estimatorAddress, statusUpdateFrequencyMs: cfg.CLUSTER_STATUS_UPDATE_FREQUENCY }, "execution listening");
  return {
    async stop() {
      await execution.stop();
      await own.close();
    },
  };
});
