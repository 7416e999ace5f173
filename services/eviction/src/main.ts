import { runService } from "@flotilla/runtime";
import { buildApp } from "./app.js";
import { configSchema } from "./config.js";

await runService("eviction", configSchema, async ({ cfg, log, db, store, js, metrics, ready, keyLocks, starting }) => {
  const app = buildApp({ store, sql: db.sql, log, cfg, js, ready, metrics, runtime: { keyLocks } });
  starting(app);
  await app.start();
  const url = await app.listen({ host: cfg.HOST, port: cfg.PORT });
  log.info({ url }, "eviction listening");
  return app;
});
