import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Logger } from "@flotilla/log";
import type { ObjectStore } from "@flotilla/store";
import { ensureServingCert } from "./bootstrap.js";
import { callerCredentials, selfIssuedToken, type ServiceIdentity } from "./grpc.js";
import { RbacAuthorizer } from "./rbac-authorizer.js";
import { ServiceAccountTokens, ensureSigningKey } from "./service-account-tokens.js";
import type { GrpcServerSecurity } from "./settings.js";
import type * as grpc from "@grpc/grpc-js";

/** What a test needs to serve and call an internal gRPC API: files made for it, removed by `remove()`. */
export interface TestGrpcSecurity {
  /** A self-signed certificate for 127.0.0.1 and localhost (openssl), its key and the service-account key file. */
  files: { cert: string; key: string; serviceAccountKey: string };
  /** The server's side over `store` (a new RbacAuthorizer each call: one per service built). */
  server(store: ObjectStore, log?: Logger): GrpcServerSecurity;
  /** The keys over `store`: verify, or issue a token of any account (a test's callers). */
  tokens(store: ObjectStore): ServiceAccountTokens;
  /** The certificate, as a caller's CA. */
  ca: Buffer;
  /** A caller's channel as the service `identity` (its account and role ensured in `store`, a token it signs). */
  caller(store: ObjectStore, identity: ServiceIdentity): grpc.ChannelCredentials;
  remove(): void;
}

/** Makes a certificate and a service-account key in a temporary directory, as an installation provides them. */
export async function testGrpcSecurity(): Promise<TestGrpcSecurity> {
  const dir = mkdtempSync(path.join(tmpdir(), "flotilla-grpc-"));
  const files = { cert: path.join(dir, "tls.crt"), key: path.join(dir, "tls.key"), serviceAccountKey: path.join(dir, "sa.key") };
  await ensureServingCert(files.cert, files.key);
  await ensureSigningKey(files.serviceAccountKey);
  const issuer = "https://flotilla.local";
  // the keys alone: each use names the store its accounts are looked up in
  const keys = await ServiceAccountTokens.fromFile(undefined as unknown as ObjectStore, files.serviceAccountKey, issuer, { audiences: [issuer], defaultSeconds: 3600, maxSeconds: 86_400 });
  const tls = { cert: readFileSync(files.cert), key: readFileSync(files.key) };
  return {
    files,
    tokens: (store) => keys.withStore(store),
    ca: tls.cert,
    server: (store, log) => ({ tls, tokens: keys.withStore(store), authorizer: new RbacAuthorizer(store, log) }),
    caller: (store, identity) => callerCredentials({ ca: tls.cert, token: selfIssuedToken({ store, tokens: keys.withStore(store), identity }) }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
