import { runService } from "@flotilla/runtime";
import { configSchema } from "./config.js";
import { buildGateway } from "./app.js";

await runService("gateway", configSchema, async ({ cfg, log, store, ready }) => {
  const gateway = buildGateway({
    store,
    log,
    settings: { notReadyTolerationSeconds: cfg.DEFAULT_NOT_READY_TOLERATION_SECONDS, unreachableTolerationSeconds: cfg.DEFAULT_UNREACHABLE_TOLERATION_SECONDS },
    ready,
    scheduler: cfg.SCHEDULER_GRPC_URL,
  });
  const { url, grpcAddress } = await gateway.start({ host: cfg.HOST, port: cfg.PORT, grpcPort: cfg.GRPC_PORT || undefined });
  log.info({ url, grpcAddress }, "gateway listening");
  return gateway;
});
