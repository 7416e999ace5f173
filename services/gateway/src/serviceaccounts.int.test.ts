import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ObjectStore } from "@flotilla/store";
import { eventually, freshDatabase, kubectlAt, kubectlOr, type TestDatabase } from "@flotilla/testkit";
import { buildGateway, type Gateway } from "./app.js";
import { TOKENS, testAccess, testGatewayDeps, testTls } from "./access.test-support.js";
import { unionAuthenticator } from "./auth/oidc.js";
import { ServiceAccountTokens, ensureSigningKey, parsePrivateKeys } from "./auth/serviceaccounts.js";

const ISSUER = "https://flotilla.test";
const POLICY = { audiences: [ISSUER], defaultSeconds: 3600, maxSeconds: 86400 };
const SA = "/api/v1/namespaces/default/serviceaccounts";
const RBAC = "/apis/rbac.authorization.k8s.io/v1";

describe("service account tokens (TokenRequest)", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  let gw: Gateway;
  let url: string;
  let keyFile: string;
  let dir: string;
  let tokens: ServiceAccountTokens;

  /** A gateway whose service account tokens are signed/verified with the keys in `file`. */
  const start = async (file: string, tls?: Awaited<ReturnType<typeof testTls>>) => {
    const sa = await ServiceAccountTokens.fromFile(store, file, ISSUER, POLICY);
    const base = testAccess(store);
    const g = buildGateway({ ...testGatewayDeps(store), access: { ...base, authenticator: unionAuthenticator(base.authenticator, sa), serviceAccounts: sa }, tls });
    return { g, sa, url: (await g.start({ host: "127.0.0.1", port: 0 })).url };
  };

  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
    dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-sa-"));
    keyFile = path.join(dir, "sa.key");
    assert.equal(await ensureSigningKey(keyFile), true);
    assert.equal(await ensureSigningKey(keyFile), false, "an existing key file is never replaced");
    ({ g: gw, sa: tokens, url } = await start(keyFile));
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });

  const call = async (method: string, p: string, token: string | undefined, body?: unknown, base = url) => {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await fetch(`${base}${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined, text };
  };
  const createSa = async (name: string) => {
    const r = await call("POST", SA, TOKENS.admin, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } });
    assert.equal(r.status, 201, r.text);
    return r.body as { metadata: { uid: string } };
  };
  const tokenOf = async (name: string, spec: Record<string, unknown> = {}, as: string = TOKENS.admin) => call("POST", `${SA}/${name}/token`, as, { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec });
  const whoami = async (token: string, base = url) => call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", token, { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }, base);

  test("a TokenRequest returns a token that authenticates as the service account, with Kubernetes' groups and only the roles bound to it", async () => {
    const sa = await createSa("robot");
    const r = await tokenOf("robot", { expirationSeconds: 1200 });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.kind, "TokenRequest");
    assert.deepEqual(r.body.spec, { audiences: [ISSUER], expirationSeconds: 1200, boundObjectRef: null });
    const left = (Date.parse(r.body.status.expirationTimestamp) - Date.now()) / 1000;
    assert.ok(left > 1190 && left <= 1200, `expires in ${left} s`);
    const token = r.body.status.token as string;
    const who = await whoami(token);
    assert.equal(who.status, 201, who.text);
    assert.deepEqual(who.body.status.userInfo, { username: "system:serviceaccount:default:robot", uid: sa.metadata.uid, groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"] });
    // no role yet
    assert.equal((await call("GET", "/api/v1/namespaces/default/configmaps", token)).status, 403);
    const bound = await call("POST", `${RBAC}/namespaces/default/rolebindings`, TOKENS.admin, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "robot-view", namespace: "default" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flotilla:view" },
      subjects: [{ kind: "ServiceAccount", name: "robot", namespace: "default" }],
    });
    assert.equal(bound.status, 201, bound.text);
    await eventually(async () => (await call("GET", "/api/v1/namespaces/default/configmaps", token)).status === 200, { timeoutMs: 5000, message: "the bound role applies" });
    assert.equal((await call("GET", "/api/v1/namespaces/kube-system/configmaps", token)).status, 403, "a RoleBinding is one namespace's");
    assert.equal((await call("POST", "/api/v1/namespaces/default/configmaps", token, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } })).status, 403, "view cannot write");
  });

  test("bad TokenRequests are 4xx Status naming the field; a missing account is a 404; who may ask is RBAC's create on serviceaccounts/token", async () => {
    await createSa("bot2");
    const short = await tokenOf("bot2", { expirationSeconds: 60 });
    assert.equal(short.status, 422, short.text);
    assert.equal(short.body.details.causes[0].field, "spec.expirationSeconds");
    const bound = await tokenOf("bot2", { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "p" } });
    assert.equal(bound.status, 422);
    assert.equal(bound.body.details.causes[0].field, "spec.boundObjectRef");
    const missing = await tokenOf("ghost");
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.reason, "NotFound");
    // a viewer may not mint tokens; nobody may; anonymous is 401
    assert.equal((await tokenOf("bot2", {}, TOKENS.nobody)).status, 403);
    assert.equal((await call("POST", `${SA}/bot2/token`, undefined, {})).status, 401);
    // flotilla:edit may (as Kubernetes' edit role)
    const b = await call("POST", `${RBAC}/clusterrolebindings`, TOKENS.admin, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "ed-edits" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flotilla:edit" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "ed" }],
    });
    assert.equal(b.status, 201, b.text);
    await eventually(async () => (await tokenOf("bot2", {}, TOKENS.editor)).status === 201, { timeoutMs: 5000, message: "an editor may request a token" });
  });

  test("a token dies with its account (deleted, or deleted and made again), and outside its audience, lifetime or keys it is nobody's", async () => {
    await createSa("temp");
    const token = (await tokenOf("temp")).body.status.token as string;
    assert.equal((await whoami(token)).status, 201);
    assert.equal((await call("DELETE", `${SA}/temp`, TOKENS.admin)).status, 200);
    assert.equal((await whoami(token)).status, 401, "the account is gone");
    await createSa("temp");
    assert.equal((await whoami(token)).status, 401, "a new account of the same name is another account (uid)");

    const sa = await createSa("aud");
    const other = (await tokenOf("aud", { audiences: ["vault"] })).body.status.token as string;
    assert.equal((await whoami(other)).status, 401, "a token for another audience is not accepted here");
    const expired = await tokens.issue({ namespace: "default", name: "aud", uid: sa.metadata.uid }, { audiences: [ISSUER], expirationSeconds: 600 }, new Date(Date.now() - 3600_000));
    assert.equal((await whoami(expired.token)).status, 401, "expired");
    const fresh = (await tokenOf("aud")).body.status.token as string;
    const [h, p, s] = fresh.split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString());
    const forged = [h, Buffer.from(JSON.stringify({ ...claims, sub: "system:serviceaccount:kube-system:admin" })).toString("base64url"), s].join(".");
    assert.equal((await whoami(forged)).status, 401, "changed claims break the signature");

    // rotation: a gateway with a new signing key first and the old one after still accepts old tokens; without the old key, no
    const newFile = path.join(dir, "new.key");
    await ensureSigningKey(newFile);
    const both = path.join(dir, "both.key");
    await writeFile(both, (await readFile(newFile, "utf8")) + (await readFile(keyFile, "utf8")));
    assert.equal(parsePrivateKeys(await readFile(both, "utf8")).length, 2);
    const rotated = await start(both);
    const onlyNew = await start(newFile);
    try {
      assert.equal((await whoami(fresh, rotated.url)).status, 201, "the old key still verifies");
      const next = await rotated.sa.issue({ namespace: "default", name: "aud", uid: sa.metadata.uid }, { audiences: [ISSUER], expirationSeconds: 600 });
      assert.equal((await whoami(next.token, onlyNew.url)).status, 201, "new tokens are signed with the first key");
      assert.equal((await whoami(fresh, onlyNew.url)).status, 401, "a dropped key verifies nothing");
    } finally {
      await rotated.g.stop();
      await onlyNew.g.stop();
    }
  });

  test("kubectl create serviceaccount, kubectl create token, and the token used by kubectl", async (t) => {
    if (!(await kubectlOr(t))) return;
    const tls = await testTls();
    const secure = await start(keyFile, tls);
    try {
      const kubectl = kubectlAt(secure.url, tls.certFile);
      const created = await kubectl(TOKENS.admin, "create", "serviceaccount", "deployer", "-n", "default");
      assert.match(created.stdout, /serviceaccount\/deployer created/, created.stderr);
      const minted = await kubectl(TOKENS.admin, "create", "token", "deployer", "-n", "default", "--duration=15m");
      const token = minted.stdout.trim();
      assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, minted.stderr);
      const who = await kubectl(token, "auth", "whoami", "-o", "json");
      assert.equal(JSON.parse(who.stdout).status.userInfo.username, "system:serviceaccount:default:deployer", who.stderr);
      assert.equal((await kubectl(token, "auth", "can-i", "list", "configmaps", "-n", "default")).stdout.trim(), "no");
      const short = await kubectl(TOKENS.admin, "create", "token", "deployer", "-n", "default", "--duration=1m");
      assert.match(short.stderr, /expirationSeconds|10 minutes/, "a too short token is refused with the reason");
    } finally {
      await secure.g.stop();
    }
  });
});
