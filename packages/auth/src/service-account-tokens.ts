import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { SignJWT, calculateJwkThumbprint, decodeProtectedHeader, exportJWK, jwtVerify } from "jose";
import { GK, rfc3339 } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { claimedServiceAccount, serviceAccountClaims, serviceAccountUserInfo, type TokenPolicy, type TokenRequestSpec } from "./service-account-claims.js";
import type { UserInfo } from "./rbac.js";
import { bearerToken } from "./tokens.js";
import type { Authenticator } from "./authenticator.js";
import { createExclusive } from "./bootstrap.js";

const ALG = "ES256";

interface SigningKey {
  kid: string;
  /** Absent for a key given by its public half: it verifies, never signs. */
  privateKey?: KeyObject;
  publicKey: KeyObject;
}

/** The PEM private keys in a file (several `-----BEGIN … PRIVATE KEY-----` blocks, first = signing key). */
export function parsePrivateKeys(pem: string): KeyObject[] {
  const blocks = pem.match(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g) ?? [];
  return blocks.map((b) => createPrivateKey(b));
}

/**
 * The keys of a PEM file in their order: private keys (`… PRIVATE KEY`) and public keys
 * (`PUBLIC KEY`, kube-apiserver's --service-account-key-file), so that a service that only
 * verifies tokens may be given the public halves alone.
 */
export function parseKeys(pem: string): KeyObject[] {
  const blocks = pem.match(/-----BEGIN [A-Z ]*(?:PRIVATE|PUBLIC) KEY-----[\s\S]*?-----END [A-Z ]*(?:PRIVATE|PUBLIC) KEY-----/g) ?? [];
  return blocks.map((b) => (/PRIVATE KEY-----/.test(b) ? createPrivateKey(b) : createPublicKey(b)));
}

/**
 * Creates the signing key file (one P-256 private key, PEM, mode 0600) when it does not exist;
 * true when it did. Never overwrites: every gateway replica must read the same keys.
 */
export async function ensureSigningKey(path: string): Promise<boolean> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return createExclusive(path, privateKey.export({ type: "pkcs8", format: "pem" }));
}

/**
 * Service account tokens, as kube-apiserver's TokenRequest and service-account authenticator:
 * `issue` signs a JWT (ES256, `kid` = the key's JWK thumbprint) naming the account and its uid;
 * `authenticate` accepts a token signed by any of the keys, from the issuer, for one of the API's
 * audiences, unexpired, whose account still exists with the same uid (deleting the account, or
 * deleting and re-creating it, revokes its tokens at once). Keys rotate by putting a new key
 * first in the file and keeping the old one after it until its tokens have expired.
 */
export class ServiceAccountTokens implements Authenticator {
  private constructor(
    private readonly store: ObjectStore,
    private readonly keys: SigningKey[],
    readonly issuer: string,
    readonly policy: TokenPolicy,
  ) {}

  /** Private keys sign (the first) and verify; public keys only verify. */
  static async fromKeys(store: ObjectStore, keys: KeyObject[], issuer: string, policy: TokenPolicy): Promise<ServiceAccountTokens> {
    if (!keys.length) throw new Error("no key");
    const signing = await Promise.all(
      keys.map(async (key) => {
        if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") throw new Error("the keys must be P-256 (prime256v1) EC keys");
        const publicKey = key.type === "private" ? createPublicKey(key) : key;
        return { kid: await calculateJwkThumbprint(await exportJWK(publicKey)), ...(key.type === "private" ? { privateKey: key } : {}), publicKey };
      }),
    );
    return new ServiceAccountTokens(store, signing, issuer, policy);
  }

  /** The keys of a PEM file (private keys, or public keys for a service that only verifies). */
  static async fromFile(store: ObjectStore, path: string, issuer: string, policy: TokenPolicy): Promise<ServiceAccountTokens> {
    return ServiceAccountTokens.fromKeys(store, parseKeys(await readFile(path, "utf8")), issuer, policy);
  }

  /** The same keys, issuer and policy over another store (the accounts looked up there). */
  withStore(store: ObjectStore): ServiceAccountTokens {
    return new ServiceAccountTokens(store, this.keys, this.issuer, this.policy);
  }

  /** Whether tokens can be issued (the file's first key is a private key). */
  get canIssue(): boolean {
    return !!this.keys[0]?.privateKey;
  }

  /** A token of the service account `sa` (as stored, with its uid) for the request's audiences and lifetime. */
  async issue(sa: { namespace: string; name: string; uid: string }, spec: TokenRequestSpec, now = new Date()): Promise<{ token: string; expirationTimestamp: string }> {
    const key = this.keys[0]!;
    if (!key.privateKey) throw new Error("the first service account key is a public key: tokens can be verified, not issued");
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + spec.expirationSeconds;
    const token = await new SignJWT({ ...serviceAccountClaims(sa.namespace, sa.name, sa.uid) })
      .setProtectedHeader({ alg: ALG, kid: key.kid })
      .setIssuer(this.issuer)
      .setAudience(spec.audiences)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .sign(key.privateKey);
    return { token, expirationTimestamp: rfc3339(exp * 1000) };
  }

  async authenticate(authorization: string | undefined): Promise<UserInfo | undefined> {
    const token = bearerToken(authorization);
    if (!token || token.split(".").length !== 3) return undefined;
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return undefined;
    }
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) return undefined;
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key.publicKey, { issuer: this.issuer, audience: this.policy.audiences, algorithms: [ALG], clockTolerance: 30 }));
    } catch {
      return undefined;
    }
    const sa = claimedServiceAccount(payload);
    if (!sa) return undefined;
    // the account must still be there, and be the same one (not deleted and made again)
    const cur = await this.store.get({ gk: GK.serviceAccount, namespace: sa.namespace, name: sa.name });
    if (!cur || cur.metadata.uid !== sa.uid || cur.metadata.deletionTimestamp) return undefined;
    return serviceAccountUserInfo(sa);
  }
}
