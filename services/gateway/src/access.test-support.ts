// Identities for the gateway's tests: a token file with an administrator (system:masters) and
// users with no role until a test binds one.
import { mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ObjectStore } from "@flotilla/store";
import { silentLogger } from "@flotilla/log";
import type { FastifyInstance } from "fastify";
import * as grpc from "@grpc/grpc-js";
import { RbacAuthorizer, TokenFileAuthenticator, type Access } from "./auth/access.js";
import { ensureServingCert } from "./auth/bootstrap.js";

export const TOKENS = { admin: "admin-test-token", editor: "editor-test-token", viewer: "viewer-test-token", nobody: "nobody-test-token" } as const;

export const TOKEN_FILE = [
  `${TOKENS.admin},admin,admin-uid,"system:masters"`,
  `${TOKENS.editor},ed,ed-uid,"team-a"`,
  `${TOKENS.viewer},vi,vi-uid`,
  `${TOKENS.nobody},nobody,nobody-uid`,
].join("\n");

export function testAccess(store: ObjectStore): Access {
  return { authenticator: new TokenFileAuthenticator(TOKEN_FILE), authorizer: new RbacAuthorizer(store) };
}

/** What every test gateway is built with: this store, no logs, the default tolerations, ready, the test identities. */
export function testGatewayDeps(store: ObjectStore) {
  return { store, log: silentLogger(), settings: { notReadyTolerationSeconds: 300, unreachableTolerationSeconds: 300 }, ready: async () => true, access: testAccess(store) };
}

export const bearer = (token: string = TOKENS.admin) => ({ authorization: `Bearer ${token}` });

/** gRPC call metadata carrying the token. */
export function grpcAuth(token: string = TOKENS.admin): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
}

/** Makes `app.inject` send the admin's token unless a request sets its own `authorization`. */
export function injectAsAdmin(app: FastifyInstance): void {
  const inject = app.inject.bind(app) as (o: unknown) => unknown;
  (app as { inject: unknown }).inject = (o: unknown) => {
    if (typeof o !== "object" || o === null) return inject(o);
    const opts = o as { headers?: Record<string, string> };
    return inject({ ...opts, headers: { ...bearer(), ...opts.headers } });
  };
}

let tlsFiles: Promise<{ cert: Buffer; key: Buffer; certFile: string }> | undefined;
/** A self-signed serving certificate for 127.0.0.1, made once per test process (client-go sends tokens over TLS only). */
export function testTls(): Promise<{ cert: Buffer; key: Buffer; certFile: string }> {
  tlsFiles ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-tls-"));
    const certFile = path.join(dir, "tls.crt");
    const keyFile = path.join(dir, "tls.key");
    await ensureServingCert(certFile, keyFile);
    return { cert: await readFile(certFile), key: await readFile(keyFile), certFile };
  })();
  return tlsFiles;
}
