import { readFileSync } from "node:fs";
import { ConfigError, bool, str, type ConfigOf } from "@flotilla/config";
import type { Logger } from "@flotilla/log";
import type { ObjectStore } from "@flotilla/store";
import { ensureServingCert } from "./bootstrap.js";
import { RbacAuthorizer } from "./rbac-authorizer.js";
import { ServiceAccountTokens } from "./service-account-tokens.js";

/**
 * The settings of a service that serves gRPC to other Flotilla services (the scheduler's
 * Simulate, execution's replica estimator): TLS always, and the gateway's service-account
 * tokens and RBAC for every call. The names are the gateway's.
 */
export const grpcServerSchema = {
  TLS_CERT_FILE: str("", "serving certificate (PEM) of the gRPC server; required while its port is on (plaintext is never served)"),
  TLS_KEY_FILE: str("", "private key (PEM) of TLS_CERT_FILE"),
  TLS_CERT_CREATE: bool(false, "when TLS_CERT_FILE does not exist, create a self-signed certificate for localhost, 127.0.0.1, HOST and TLS_CERT_HOSTS (needs the openssl command)"),
  TLS_CERT_HOSTS: str("", "more names or addresses of the created certificate, comma-separated"),
  SERVICE_ACCOUNT_KEY_FILE: str("", "the gateway's service account keys (PEM; public keys suffice to verify): every gRPC call carries a service account token they signed; required while the gRPC port is on"),
  SERVICE_ACCOUNT_ISSUER: str("https://flotilla.local", "the `iss` service account tokens must carry (the gateway's SERVICE_ACCOUNT_ISSUER)"),
  API_AUDIENCES: str("", "comma-separated audiences a token must carry one of (the gateway's API_AUDIENCES); empty: SERVICE_ACCOUNT_ISSUER"),
};

type GrpcServerSettings = ConfigOf<typeof grpcServerSchema> & { HOST: string };

/** What a service needs to serve gRPC to other services: the TLS material, and who may call (started and stopped with the service). */
export interface GrpcServerSecurity {
  tls: { cert: Buffer; key: Buffer };
  tokens: ServiceAccountTokens;
  authorizer: RbacAuthorizer;
}

/** Reads (or, with TLS_CERT_CREATE, makes) the TLS material and the service-account keys; a missing one stops the service naming it. */
export async function grpcServerSecurity(cfg: GrpcServerSettings, store: ObjectStore, log: Logger, port: string): Promise<GrpcServerSecurity> {
  const problems: string[] = [];
  if (!cfg.TLS_CERT_FILE || !cfg.TLS_KEY_FILE) problems.push(`TLS_CERT_FILE and TLS_KEY_FILE are required while ${port} is on: the gRPC server speaks TLS only (0 turns it off)`);
  if (!cfg.SERVICE_ACCOUNT_KEY_FILE) problems.push(`SERVICE_ACCOUNT_KEY_FILE is required while ${port} is on: every call is authenticated with a service account token (0 turns it off)`);
  if (problems.length) throw new ConfigError(problems);
  if (cfg.TLS_CERT_CREATE && (await ensureServingCert(cfg.TLS_CERT_FILE, cfg.TLS_KEY_FILE, [cfg.HOST, ...cfg.TLS_CERT_HOSTS.split(",").map((h) => h.trim())]))) log.warn({ cert: cfg.TLS_CERT_FILE }, "created a self-signed serving certificate");
  let tls: { cert: Buffer; key: Buffer };
  try {
    tls = { cert: readFileSync(cfg.TLS_CERT_FILE), key: readFileSync(cfg.TLS_KEY_FILE) };
  } catch (e) {
    throw new ConfigError([`TLS_CERT_FILE/TLS_KEY_FILE: ${(e as Error).message}`]);
  }
  return { tls, tokens: await serviceAccountVerifier(cfg, store), authorizer: new RbacAuthorizer(store, log) };
}

/** The service-account keys of SERVICE_ACCOUNT_KEY_FILE with the issuer and audiences the gateway's tokens carry. */
export async function serviceAccountVerifier(cfg: Pick<GrpcServerSettings, "SERVICE_ACCOUNT_KEY_FILE" | "SERVICE_ACCOUNT_ISSUER" | "API_AUDIENCES">, store: ObjectStore): Promise<ServiceAccountTokens> {
  const audiences = cfg.API_AUDIENCES.split(",").map((a) => a.trim()).filter(Boolean);
  try {
    return await ServiceAccountTokens.fromFile(store, cfg.SERVICE_ACCOUNT_KEY_FILE, cfg.SERVICE_ACCOUNT_ISSUER, { audiences: audiences.length ? audiences : [cfg.SERVICE_ACCOUNT_ISSUER], defaultSeconds: 3600, maxSeconds: 86_400 });
  } catch (e) {
    throw new ConfigError([`SERVICE_ACCOUNT_KEY_FILE ${cfg.SERVICE_ACCOUNT_KEY_FILE}: ${(e as Error).message}`]);
  }
}

/** A CA file (PEM) a caller trusts for a service's certificate; empty: the system's roots. */
export function readCa(setting: string, file: string): Buffer | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file);
  } catch (e) {
    throw new ConfigError([`${setting} ${file}: ${(e as Error).message}`]);
  }
}
