import { readFileSync } from "node:fs";
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";
import { AUTHENTICATED_GROUP, type UserInfo } from "../logic/rbac.js";
import { bearerToken } from "../logic/tokens.js";
import type { Authenticator } from "./access.js";

/** kube-apiserver's --oidc-* flags. */
export interface OidcSettings {
  issuerUrl: string;
  /** The audience (`aud`) a token must carry (--oidc-client-id). */
  clientId: string;
  /** The claim naming the user (default `sub`). */
  usernameClaim?: string;
  /** Put before the user name; default, as upstream: `<issuer>#` unless the claim is `email`; "-" for none. */
  usernamePrefix?: string;
  /** The claim listing groups (a string array, or one string); none when empty. */
  groupsClaim?: string;
  groupsPrefix?: string;
  /** Verification keys: a JWKS file, or else a JWKS URL (default `<issuer>/.well-known/jwks.json`... as discovery names it). */
  jwksFile?: string;
  jwksUrl?: string;
  /** Accepted clock skew in seconds (default 30). */
  clockToleranceS?: number;
}

/** A JWT-shaped token (three base64url parts). */
const looksLikeJwt = (t: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(t);

/**
 * Bearer tokens that are JWTs signed by the configured OIDC issuer, verified as kube-apiserver
 * does: signature against the issuer's keys (JWKS), `iss`, `aud` containing the client id,
 * `exp`/`nbf`; the user from the username claim (prefixed), groups from the groups claim (never
 * a `system:` group). An `email` username needs `email_verified` true, as upstream.
 */
export class OidcAuthenticator implements Authenticator {
  private readonly keys: JWTVerifyGetKey;
  private readonly prefix: string;

  constructor(private readonly o: OidcSettings) {
    if (o.jwksFile) this.keys = createLocalJWKSet(JSON.parse(readFileSync(o.jwksFile, "utf8")));
    else this.keys = createRemoteJWKSet(new URL(o.jwksUrl || `${o.issuerUrl.replace(/\/+$/, "")}/.well-known/jwks.json`));
    const claim = o.usernameClaim || "sub";
    this.prefix = o.usernamePrefix === "-" ? "" : (o.usernamePrefix ?? (claim === "email" ? "" : `${o.issuerUrl}#`));
  }

  async authenticate(authorization: string | undefined): Promise<UserInfo | undefined> {
    const token = bearerToken(authorization);
    if (!token || !looksLikeJwt(token)) return undefined;
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.keys, { issuer: this.o.issuerUrl, audience: this.o.clientId, clockTolerance: this.o.clockToleranceS ?? 30 }));
    } catch {
      return undefined;
    }
    const claim = this.o.usernameClaim || "sub";
    const name = payload[claim];
    if (typeof name !== "string" || !name) return undefined;
    if (claim === "email" && payload.email_verified !== true) return undefined;
    const raw = this.o.groupsClaim ? payload[this.o.groupsClaim] : undefined;
    // an identity provider cannot hand out Kubernetes' own groups (system:masters above all)
    const groups = (Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : [])
      .filter((g): g is string => typeof g === "string" && g !== "")
      .map((g) => `${this.o.groupsPrefix ?? ""}${g}`)
      .filter((g) => !g.startsWith("system:"));
    return { name: `${this.prefix}${name}`, uid: typeof payload.sub === "string" ? payload.sub : undefined, groups: [...new Set([...groups, AUTHENTICATED_GROUP])] };
  }
}

export { unionAuthenticator } from "@flotilla/auth";
