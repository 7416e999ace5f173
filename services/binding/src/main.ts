import { runService } from "@flotilla/runtime";
import { configSchema } from "./config.js";
import { settingsFrom } from "./settings.js";
import { buildApp } from "./app.js";

await runService("binding", configSchema, async ({ cfg, log, db, store, js, metrics, ready, keyLocks, starting }) => {
  const app = buildApp({
    store,
    sql: db.sql,
    js,
    stream: cfg.EVENTS_STREAM,
    prefix: cfg.EVENTS_PREFIX,
    log,
    settings: settingsFrom(cfg),
    ready,
    metrics,
    keyLocks,
  });
  starting(app);
  const { url } = await app.start({ host: cfg.HOST, port: cfg.PORT });
  log.info({ url }, "binding service listening");
  return app;
});
