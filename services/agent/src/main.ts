#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { ConfigError, loadConfig } from "@flotilla/config";
import { createLogger } from "@flotilla/log";
import { configSchema } from "./config.js";
import { buildAgent } from "./app.js";
import { memberEndpoint } from "./member.js";

let cfg;
try {
  cfg = loadConfig(configSchema, process.env);
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  process.stderr.write(`flotilla-agent: ${e.message}\n`);
  process.exit(2);
}
const log = createLogger({ name: "agent", level: cfg.LOG_LEVEL });
const tokenFile = cfg.GATEWAY_TOKEN_FILE;
const agent = buildAgent({
  settings: cfg,
  log,
  member: memberEndpoint({ kubeconfig: cfg.MEMBER_KUBECONFIG, server: cfg.MEMBER_API_SERVER, tokenFile: cfg.MEMBER_TOKEN_FILE, caFile: cfg.MEMBER_CA_FILE }),
  token: () => readFileSync(tokenFile, "utf8").trim(),
  gatewayCa: cfg.GATEWAY_CA_FILE ? readFileSync(cfg.GATEWAY_CA_FILE, "utf8") : undefined,
  gatewayInsecureSkipTLSVerify: cfg.GATEWAY_INSECURE_SKIP_TLS_VERIFY,
});
const stop = async () => {
  await agent.stop();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
const { url } = await agent.start({ host: cfg.HOST, port: cfg.PORT || undefined });
log.info({ url }, "agent listening");
