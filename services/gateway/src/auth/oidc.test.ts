import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { OidcAuthenticator, unionAuthenticator } from "./oidc.js";
import { TokenFileAuthenticator } from "./access.js";

const ISSUER = "https://idp.example.com";

test("OIDC tokens: signature, issuer, audience and expiry checked; user and groups from the claims", async () => {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const other = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  const jwksFile = path.join(await mkdtemp(path.join(os.tmpdir(), "flotilla-jwks-")), "jwks.json");
  await writeFile(jwksFile, JSON.stringify({ keys: [jwk] }));
  const sign = (claims: Record<string, unknown>, o: { iss?: string; aud?: string; exp?: string | number; key?: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"]; kid?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: o.kid ?? "k1" })
      .setIssuer(o.iss ?? ISSUER)
      .setAudience(o.aud ?? "flotilla")
      .setIssuedAt()
      .setExpirationTime(o.exp ?? "5m")
      .sign(o.key ?? privateKey);
  const a = new OidcAuthenticator({ issuerUrl: ISSUER, clientId: "flotilla", groupsClaim: "groups", jwksFile });
  const bearer = async (t: Promise<string>) => `Bearer ${await t}`;

  assert.deepEqual(await a.authenticate(await bearer(sign({ sub: "u-123", groups: ["team-a", "system:masters", 7] }))), {
    name: `${ISSUER}#u-123`,
    uid: "u-123",
    groups: ["team-a", "system:authenticated"],
  });
  for (const [why, t] of [
    ["another issuer", sign({ sub: "u" }, { iss: "https://evil.example.com" })],
    ["another audience", sign({ sub: "u" }, { aud: "someone-else" })],
    ["expired", sign({ sub: "u" }, { exp: Math.floor(Date.now() / 1000) - 3600 })],
    ["signed by another key", sign({ sub: "u" }, { key: other.privateKey })],
    ["no subject", sign({})],
  ] as const) assert.equal(await a.authenticate(await bearer(t)), undefined, why);
  assert.equal(await a.authenticate("Bearer not-a-jwt"), undefined);
  assert.equal(await a.authenticate(undefined), undefined);

  // the email claim needs email_verified, and is not prefixed (as upstream); group prefixes apply
  const byEmail = new OidcAuthenticator({ issuerUrl: ISSUER, clientId: "flotilla", usernameClaim: "email", groupsClaim: "roles", groupsPrefix: "oidc:", jwksFile });
  assert.equal(await byEmail.authenticate(await bearer(sign({ sub: "u", email: "ann@example.com" }))), undefined);
  assert.deepEqual(await byEmail.authenticate(await bearer(sign({ sub: "u", email: "ann@example.com", email_verified: true, roles: "ops" }))), {
    name: "ann@example.com",
    uid: "u",
    groups: ["oidc:ops", "system:authenticated"],
  });

  // with a token file too, either kind of token is accepted
  const both = unionAuthenticator(new TokenFileAuthenticator("static-token,ops,ops-uid"), a);
  assert.equal((await both.authenticate("Bearer static-token"))?.name, "ops");
  assert.equal((await both.authenticate(await bearer(sign({ sub: "u-9" }))))?.name, `${ISSUER}#u-9`);
  assert.equal(await both.authenticate("Bearer nothing"), undefined);
});
