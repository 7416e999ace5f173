import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { ConfigError, type ConfigOf } from "@flotilla/config";
import type { Logger } from "@flotilla/log";
import { FleetShares, type ObjectStore } from "@flotilla/store";
import { runService } from "@flotilla/runtime";
import { configSchema } from "./config.js";
import { buildGateway } from "./app.js";
import { RbacAuthorizer, TokenFileAuthenticator } from "./auth/access.js";
import { ensureServingCert, ensureTokenFile, isLoopback } from "./auth/bootstrap.js";
import { openAuditLog } from "./auth/audit.js";
import { OidcAuthenticator, unionAuthenticator } from "./auth/oidc.js";
import { ServiceAccountTokens, ensureSigningKey } from "./auth/serviceaccounts.js";
import { DEFAULT_LIMITS } from "./http/auth.js";
import { parseAllowedOrigins } from "./http/cors.js";
import { GATEWAY_IDENTITY, callerCredentials, readCa, selfIssuedToken } from "@flotilla/auth";

await runService("gateway", configSchema, async ({ cfg, log, db, store, metrics, ready, starting }) => {
  if (!cfg.TOKEN_AUTH_FILE && !cfg.OIDC_ISSUER_URL) {
    throw new ConfigError(['neither TOKEN_AUTH_FILE nor OIDC_ISSUER_URL is set: every request is authenticated; give a token file (token,user,uid,"groups" per line, or TOKEN_AUTH_FILE_CREATE=true to have one created) or an OIDC issuer']);
  }
  if (cfg.OIDC_ISSUER_URL && !cfg.OIDC_CLIENT_ID) throw new ConfigError(["OIDC_ISSUER_URL needs OIDC_CLIENT_ID (the audience tokens must carry)"]);
  if (cfg.TOKEN_AUTH_FILE && cfg.TOKEN_AUTH_FILE_CREATE && (await ensureTokenFile(cfg.TOKEN_AUTH_FILE))) log.warn({ file: cfg.TOKEN_AUTH_FILE }, "created a token file with one admin token (group system:masters)");
  const tokens = cfg.TOKEN_AUTH_FILE ? tokenFile(cfg.TOKEN_AUTH_FILE) : undefined;
  const oidc = cfg.OIDC_ISSUER_URL
    ? new OidcAuthenticator({
        issuerUrl: cfg.OIDC_ISSUER_URL,
        clientId: cfg.OIDC_CLIENT_ID,
        usernameClaim: cfg.OIDC_USERNAME_CLAIM,
        usernamePrefix: cfg.OIDC_USERNAME_PREFIX || undefined,
        groupsClaim: cfg.OIDC_GROUPS_CLAIM,
        groupsPrefix: cfg.OIDC_GROUPS_PREFIX,
        jwksFile: cfg.OIDC_JWKS_FILE || undefined,
        jwksUrl: cfg.OIDC_JWKS_URL || undefined,
      })
    : undefined;
  const serviceAccounts = cfg.SERVICE_ACCOUNT_KEY_FILE ? await serviceAccountTokens(cfg, store, log) : undefined;
  if (serviceAccounts && !serviceAccounts.canIssue) throw new ConfigError([`SERVICE_ACCOUNT_KEY_FILE ${cfg.SERVICE_ACCOUNT_KEY_FILE}: its first key is a public key; the gateway signs tokens with it (a private key)`]);
  const authenticator = unionAuthenticator(...[tokens, oidc, serviceAccounts].filter((a): a is NonNullable<typeof a> => !!a));
  if (!cfg.TLS_CERT_FILE !== !cfg.TLS_KEY_FILE) throw new ConfigError(["TLS_CERT_FILE and TLS_KEY_FILE go together"]);
  if (!cfg.TLS_CERT_FILE && !isLoopback(cfg.HOST)) throw new ConfigError([`HOST ${cfg.HOST} is not a loopback address: tokens must not cross a network in clear; set TLS_CERT_FILE and TLS_KEY_FILE`]);
  if (cfg.TLS_CERT_FILE && cfg.TLS_CERT_CREATE && (await ensureServingCert(cfg.TLS_CERT_FILE, cfg.TLS_KEY_FILE, [cfg.HOST, ...cfg.TLS_CERT_HOSTS.split(",").map((h) => h.trim())]))) log.warn({ cert: cfg.TLS_CERT_FILE }, "created a self-signed serving certificate");
  const tls = cfg.TLS_CERT_FILE ? { cert: readFileSync(cfg.TLS_CERT_FILE), key: readFileSync(cfg.TLS_KEY_FILE) } : undefined;
  const allowedOrigins = allowedOriginsOf(cfg.CORS_ALLOWED_ORIGINS);
  const gateway = buildGateway({
    store,
    log,
    metrics,
    settings: {
      notReadyTolerationSeconds: cfg.DEFAULT_NOT_READY_TOLERATION_SECONDS,
      unreachableTolerationSeconds: cfg.DEFAULT_UNREACHABLE_TOLERATION_SECONDS,
      allowNoExecuteTaintPolicy: cfg.ALLOW_NO_EXECUTE_TAINT_POLICY,
      placementHistory: { retentionMs: cfg.PLACEMENT_HISTORY_RETENTION, maxEntries: cfg.PLACEMENT_HISTORY_MAX_ENTRIES },
      clusterResourceModelingDefaults: cfg.CLUSTER_RESOURCE_MODELING_DEFAULTS,
    },
    ready,
    // the scheduler takes TLS and a service account token: the gateway's own (flotilla-system/gateway, may only simulate), signed with its key
    scheduler:
      cfg.SCHEDULER_GRPC_URL && serviceAccounts
        ? { address: cfg.SCHEDULER_GRPC_URL, credentials: callerCredentials({ ca: readCa("SCHEDULER_CA_FILE", cfg.SCHEDULER_CA_FILE), token: selfIssuedToken({ store, tokens: serviceAccounts, identity: GATEWAY_IDENTITY }) }) }
        : undefined,
    access: { authenticator, authorizer: new RbacAuthorizer(store, log), serviceAccounts },
    tls,
    cors: { allowedOrigins },
    proxy: { allowHttp: cfg.MEMBER_ALLOW_HTTP, timeoutMs: cfg.MEMBER_REQUEST_TIMEOUT, tunnelRecheckMs: cfg.TUNNEL_RECHECK_INTERVAL },
    audit: openAuditLog(cfg.AUDIT_LOG_PATH),
    eventTtl: { sql: db.sql, ttlMs: cfg.EVENT_TTL },
    limits: { ratePerSecond: cfg.RATE_LIMIT_QPS, burst: cfg.RATE_LIMIT_BURST, watchesPerUser: cfg.MAX_WATCHES_PER_USER, failedAuthPerSecond: DEFAULT_LIMITS.failedAuthPerSecond },
    // each user's rate and watch cap are shared with the other gateway replicas (limit_leases)
    shares: new FleetShares({
      sql: db.sql,
      holder: `gateway/${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
      renewMs: cfg.LIMIT_LEASE_RENEW_INTERVAL,
      onError: (err) => log.warn({ err }, "renewing the per-user limits' leases failed; the last shares stay in force"),
    }),
  });
  starting(gateway);
  const resealed = await store.resealCredentials();
  if (resealed) log.info({ secrets: resealed }, "member credentials sealed with the current encryption key");
  const { url, grpcAddress } = await gateway.start({ host: cfg.HOST, port: cfg.PORT, grpcPort: cfg.GRPC_PORT || undefined });
  if (cfg.SCHEDULER_GRPC_URL && !serviceAccounts) log.warn("simulations are off: calling the scheduler takes a service account token the gateway signs (SERVICE_ACCOUNT_KEY_FILE)");
  log.info({ url, grpcAddress, tokens: tokens?.size ?? 0, oidc: cfg.OIDC_ISSUER_URL || "off" }, "gateway listening");
  return gateway;
});

async function serviceAccountTokens(cfg: ConfigOf<typeof configSchema>, store: ObjectStore, log: Logger): Promise<ServiceAccountTokens> {
  const file = cfg.SERVICE_ACCOUNT_KEY_FILE;
  if (cfg.SERVICE_ACCOUNT_KEY_CREATE && (await ensureSigningKey(file))) log.warn({ file }, "created a service account signing key");
  const audiences = cfg.API_AUDIENCES.split(",").map((a) => a.trim()).filter(Boolean);
  try {
    return await ServiceAccountTokens.fromFile(store, file, cfg.SERVICE_ACCOUNT_ISSUER, { audiences: audiences.length ? audiences : [cfg.SERVICE_ACCOUNT_ISSUER], defaultSeconds: 3600, maxSeconds: Math.max(600, Math.floor(cfg.SERVICE_ACCOUNT_MAX_TOKEN_EXPIRATION / 1000)) });
  } catch (e) {
    throw new ConfigError([`SERVICE_ACCOUNT_KEY_FILE ${file}: ${(e as Error).message}`]);
  }
}

function allowedOriginsOf(s: string): string[] {
  try {
    return parseAllowedOrigins(s);
  } catch (e) {
    throw new ConfigError([`CORS_ALLOWED_ORIGINS: ${(e as Error).message}`]);
  }
}

function tokenFile(path: string): TokenFileAuthenticator {
  try {
    return TokenFileAuthenticator.fromFile(path);
  } catch (e) {
    throw new ConfigError([`TOKEN_AUTH_FILE ${path}: ${(e as Error).message}`]);
  }
}
