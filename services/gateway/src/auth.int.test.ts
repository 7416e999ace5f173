import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { GetRequestSchema, ObjectService } from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { ObjectStore } from "@flotilla/store";
import { eventually, freshDatabase, kubectlAt, kubectlOr, type TestDatabase } from "@flotilla/testkit";
import { buildGateway, type Gateway } from "./app.js";
import { TOKENS, bearer, grpcAuth, testAccess, testTls, testGatewayDeps } from "./access.test-support.js";
import { openAuditLog, type AuditEvent } from "./auth/audit.js";
import { RbacAuthorizer } from "./auth/access.js";

const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";
const WORKS = "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member2/works";
const RBAC = "/apis/rbac.authorization.k8s.io/v1";

const deployment = (name: string) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx" }] } } },
});
// the finding: a Work that makes system:anonymous cluster-admin on a member
const adminGrab = {
  apiVersion: "work.karmada.io/v1alpha1",
  kind: "Work",
  metadata: { name: "grab" },
  spec: {
    workload: {
      manifests: [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "grab" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" }, subjects: [{ kind: "User", name: "system:anonymous" }] }],
    },
  },
};
const bindTo = (name: string, role: string, subject: { kind: string; name: string }, namespace?: string) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: namespace ? "RoleBinding" : "ClusterRoleBinding",
  metadata: { name, ...(namespace ? { namespace } : {}) },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: [{ apiGroup: "rbac.authorization.k8s.io", ...subject }],
});

describe("authentication and RBAC", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  let gw: Gateway;
  let secure: Gateway;
  let url: string;
  let secureUrl: string;
  let grpcAddress: string;
  let tls: Awaited<ReturnType<typeof testTls>>;
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
    const deps = testGatewayDeps(store);
    gw = buildGateway(deps);
    ({ url, grpcAddress } = (await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 })) as { url: string; grpcAddress: string });
    // kubectl sends a token only over TLS
    tls = await testTls();
    secure = buildGateway({ ...deps, access: testAccess(store), tls });
    secureUrl = (await secure.start({ host: "127.0.0.1", port: 0 })).url;
  });
  after(async () => {
    await secure.stop();
    await gw.stop();
    await db.drop();
  });

  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined, text };
  };
  const bind = async (b: ReturnType<typeof bindTo>, token = TOKENS.admin) => {
    const path = b.kind === "RoleBinding" ? `${RBAC}/namespaces/${b.metadata.namespace}/rolebindings` : `${RBAC}/clusterrolebindings`;
    const r = await call("POST", path, token, b);
    assert.equal(r.status, 201, r.text);
  };
  /** Waits until the gateway's RBAC copy has caught up (a watch: tens of ms). */
  const until = (token: string, method: string, path: string, status: number, body?: unknown) =>
    eventually(async () => (await call(method, path, token, body)).status === status, { timeoutMs: 5000, message: `${method} ${path} → ${status}` });

  test("no token, or one nobody issued, is a 401 Status; the probes and the portal page need none", async () => {
    for (const token of [undefined, "bogus", ""]) {
      const r = await call("GET", "/api/v1/namespaces/kube-system/secrets", token);
      assert.equal(r.status, 401, `token ${JSON.stringify(token)}`);
      assert.deepEqual([r.body.kind, r.body.reason, r.body.code], ["Status", "Unauthorized", 401]);
    }
    const basic = await fetch(`${url}/api/v1/configmaps`, { headers: { authorization: `Basic ${Buffer.from("admin:admin").toString("base64")}` } });
    assert.equal(basic.status, 401);
    // the findings: anonymous reads, writes in kube-system, deletes and Work injection are all refused
    assert.equal((await call("POST", "/api/v1/namespaces/kube-system/configmaps", undefined, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } })).status, 401);
    assert.equal((await call("POST", WORKS, undefined, adminGrab)).status, 401);
    assert.equal((await call("DELETE", `${DEPLOY}/web`, undefined)).status, 401);
    assert.equal((await call("GET", "/metrics", undefined)).status, 401);
    for (const p of ["/healthz", "/readyz", "/livez", "/"]) assert.equal((await fetch(`${url}${p}`)).status, 200, p);
    assert.equal((await store.list({ gk: "work.karmada.io/Work" } as never)).items.length, 0, "nothing was written");
  });

  test("an authenticated user with no role can discover the API and ask about itself, nothing else (403 Status)", async () => {
    assert.equal((await call("GET", "/apis", TOKENS.nobody)).status, 200);
    assert.equal((await call("GET", "/apis/apps/v1", TOKENS.nobody)).status, 200);
    const r = await call("GET", "/api/v1/namespaces/default/configmaps", TOKENS.nobody);
    assert.equal(r.status, 403);
    assert.deepEqual([r.body.kind, r.body.reason, r.body.code], ["Status", "Forbidden", 403]);
    assert.equal(r.body.message, 'User "nobody" cannot list resource "configmaps" in API group "" in the namespace "default"');
    assert.deepEqual(r.body.details, { group: "", kind: "configmaps" });
    const who = await call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", TOKENS.nobody, { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
    assert.equal(who.status, 201, who.text);
    assert.deepEqual(who.body.status.userInfo, { username: "nobody", uid: "nobody-uid", groups: ["system:authenticated"] });
  });

  test("the default roles exist (written once: an unchanged default is not written again), and flotilla:view can list but not create", async () => {
    const roles = await call("GET", `${RBAC}/clusterroles`, TOKENS.admin);
    const rv = roles.body.items.find((r: { metadata: { name: string } }) => r.metadata.name === "flotilla:edit").metadata.resourceVersion;
    const again = new RbacAuthorizer(store);
    await again.start();
    await again.stop();
    assert.equal((await call("GET", `${RBAC}/clusterroles/flotilla:edit`, TOKENS.admin)).body.metadata.resourceVersion, rv);
    for (const n of ["flotilla:admin", "flotilla:edit", "flotilla:view"]) assert.ok(roles.body.items.some((r: { metadata: { name: string } }) => r.metadata.name === n), n);
    await bind(bindTo("vi-views", "flotilla:view", { kind: "User", name: "vi" }));
    await until(TOKENS.viewer, "GET", DEPLOY, 200);
    const denied = await call("POST", DEPLOY, TOKENS.viewer, deployment("web"));
    assert.equal(denied.status, 403);
    assert.equal(denied.body.reason, "Forbidden");
    assert.equal((await call("GET", "/api/v1/namespaces/default/secrets", TOKENS.viewer)).status, 403, "view does not read Secrets");
  });

  test("flotilla:edit writes templates and policies but no Works, Clusters or RBAC; reserved namespaces need more than a broad grant", async () => {
    await bind(bindTo("team-a-edits", "flotilla:edit", { kind: "Group", name: "team-a" }));
    await until(TOKENS.editor, "POST", DEPLOY, 201, deployment("web"));
    assert.equal((await call("POST", WORKS, TOKENS.editor, adminGrab)).status, 403);
    assert.equal((await call("POST", "/apis/cluster.karmada.io/v1alpha1/clusters", TOKENS.editor, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "evil" }, spec: { apiEndpoint: "https://127.0.0.1:1" } })).status, 403);
    assert.equal((await call("POST", `${RBAC}/clusterrolebindings`, TOKENS.editor, bindTo("self-admin", "flotilla:admin", { kind: "User", name: "ed" }))).status, 403, "no escalation");
    // Secrets: yes in an ordinary namespace, no in karmada-cluster (the members' credentials), even with a broad grant of Secrets
    assert.equal((await call("POST", "/api/v1/namespaces/default/secrets", TOKENS.editor, { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } })).status, 201);
    const cred = await call("POST", "/api/v1/namespaces/karmada-cluster/secrets", TOKENS.editor, { apiVersion: "v1", kind: "Secret", metadata: { name: "member1" } });
    assert.equal(cred.status, 403);
    assert.match(cred.body.message, /reserved to the control plane/);
    // an explicit grant in that namespace does reach it
    await bind(bindTo("ed-works", "flotilla:admin", { kind: "User", name: "ed" }, "karmada-es-member2"));
    await until(TOKENS.editor, "POST", WORKS, 201, adminGrab);
    assert.equal((await call("POST", "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works", TOKENS.editor, { ...adminGrab, metadata: { name: "other" } })).status, 403);
  });

  test("SelfSubjectAccessReview answers as the authorizer decides, so kubectl auth can-i works", async (t) => {
    const ssar = (token: string, resourceAttributes: Record<string, string>) =>
      call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", token, { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes } });
    const yes = await ssar(TOKENS.editor, { verb: "create", group: "apps", resource: "deployments", namespace: "default" });
    assert.equal(yes.status, 201, yes.text);
    assert.equal(yes.body.status.allowed, true);
    assert.equal((await ssar(TOKENS.editor, { verb: "create", group: "work.karmada.io", resource: "works", namespace: "karmada-es-member1" })).body.status.allowed, false);
    const bad = await call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", TOKENS.editor, { spec: { resourceAttributes: { verb: 7 } } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.causes[0].field, "spec.resourceAttributes.verb");
    if (!(await kubectlOr(t))) return;
    const kubectl = kubectlAt(secureUrl, tls.certFile);
    const canI = async (token: string, ...args: string[]) => (await kubectl(token, "auth", "can-i", ...args)).stdout.trim();
    assert.equal(await canI(TOKENS.editor, "create", "works", "-n", "karmada-es-member1"), "no");
    assert.equal(await canI(TOKENS.editor, "create", "deployments", "-n", "default"), "yes");
    assert.equal(await canI(TOKENS.viewer, "create", "deployments", "-n", "default"), "no");
    const who = await kubectl(TOKENS.editor, "auth", "whoami", "-o", "json");
    assert.equal(JSON.parse(who.stdout).status.userInfo.username, "ed");
    // kubectl create sends RBAC objects as protobuf; they are read
    const created = await kubectl(TOKENS.admin, "create", "clusterrolebinding", "vi-reads", "--clusterrole=flotilla:view", "--user=vi", "--group=auditors");
    assert.match(created.stdout, /clusterrolebinding.rbac.authorization.k8s.io\/vi-reads created/, created.stderr);
    const crb = (await call("GET", `${RBAC}/clusterrolebindings/vi-reads`, TOKENS.admin)).body;
    assert.deepEqual(crb.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flotilla:view" });
    assert.deepEqual(crb.subjects.map((x: { kind: string; name: string }) => [x.kind, x.name]), [["User", "vi"], ["Group", "auditors"]]);
    const role = await kubectl(TOKENS.admin, "create", "role", "cm-reader", "--verb=get,list", "--resource=configmaps", "-n", "default");
    assert.match(role.stdout, /role.rbac.authorization.k8s.io\/cm-reader created/, role.stderr);
    assert.deepEqual((await call("GET", `${RBAC}/namespaces/default/roles/cm-reader`, TOKENS.admin)).body.rules, [{ verbs: ["get", "list"], apiGroups: [""], resources: ["configmaps"] }]);
    assert.equal((await call("DELETE", `${RBAC}/clusterrolebindings/vi-reads`, TOKENS.admin)).status, 200);
    // other kinds in protobuf are a clear 415 (kubectl itself sends those as JSON)
    const pb = await fetch(`${url}/api/v1/namespaces/default/configmaps`, {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/vnd.kubernetes.protobuf" },
      body: Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), Buffer.from([0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, ...Buffer.from("ConfigMap")])]),
    });
    assert.equal(pb.status, 415);
    assert.match(((await pb.json()) as { message: string }).message, /protobuf bodies are read for the RBAC kinds only/);
    // impersonation (kubectl --as) needs the impersonate verb: an admin may, an editor may not
    assert.equal((await kubectl(TOKENS.admin, "auth", "can-i", "create", "works", "-n", "karmada-es-member1", "--as=ed", "--as-group=team-a")).stdout.trim(), "no");
    assert.equal((await kubectl(TOKENS.admin, "auth", "can-i", "create", "deployments", "-n", "default", "--as=ed", "--as-group=team-a")).stdout.trim(), "yes");
    // kubectl auth can-i --list: the rules that apply in a namespace
    const list = await kubectl(TOKENS.editor, "auth", "can-i", "--list", "-n", "default");
    assert.match(list.stdout, /\*\.apps\s+\[\]\s+\[\]\s+\[get list watch create update patch delete\]/, list.stdout + list.stderr);
    assert.match(list.stdout, /selfsubjectaccessreviews\.authorization\.k8s\.io/);
    assert.ok(!/works\.work\.karmada\.io\s+\[\]\s+\[\]\s+\[.*create/.test(list.stdout), "an editor creates no Works");
    const asAdmin = await kubectl(TOKENS.editor, "get", "secrets", "-n", "karmada-cluster", "--as=admin");
    assert.match(asAdmin.stderr, /cannot impersonate resource "users"/);
  });

  test("the gRPC front authenticates the authorization metadata and authorizes the same way", async () => {
    const Client = grpc.makeGenericClientConstructor(grpcServiceDefinition(ObjectService), "ObjectService");
    const client = new Client(grpcAddress, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (...a: unknown[]) => unknown>;
    const get = (md: grpc.Metadata) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        (client.get as (r: unknown, md: grpc.Metadata, cb: (e: grpc.ServiceError | null) => void) => void).call(client, create(GetRequestSchema, { key: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "web" } }), md, (e) => resolve(e)),
      );
    try {
      assert.equal((await get(new grpc.Metadata()))?.code, grpc.status.UNAUTHENTICATED);
      assert.equal((await get(grpcAuth("bogus")))?.code, grpc.status.UNAUTHENTICATED);
      assert.equal((await get(grpcAuth(TOKENS.nobody)))?.code, grpc.status.PERMISSION_DENIED);
      assert.equal(await get(grpcAuth(TOKENS.viewer)), null);
    } finally {
      client.close();
    }
  });

  test("a Cluster may only name credentials its writer could read; endpoints are https or http URLs", async () => {
    // a role that may write Clusters (and Secrets in its own namespace) but not read karmada-cluster
    const role = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "cluster-writer" }, rules: [{ apiGroups: ["cluster.karmada.io"], resources: ["clusters"], verbs: ["*"] }] };
    assert.equal((await call("POST", `${RBAC}/clusterroles`, TOKENS.admin, role)).status, 201);
    await bind(bindTo("nobody-writes-clusters", "cluster-writer", { kind: "User", name: "nobody" }));
    const cluster = (name: string, spec: Record<string, unknown>) => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name }, spec: { syncMode: "Push", ...spec } });
    const CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters";
    await until(TOKENS.nobody, "POST", CLUSTERS, 201, cluster("plain", { apiEndpoint: "https://10.0.0.9:6443" }));
    // the finding: a new Cluster pointing at member1's credential, with an endpoint of the writer's choice
    const borrow = await call("POST", CLUSTERS, TOKENS.nobody, cluster("borrower", { apiEndpoint: "https://127.0.0.1:9999", secretRef: { namespace: "karmada-cluster", name: "member1" } }));
    assert.equal(borrow.status, 403, borrow.text);
    assert.match(borrow.body.message, /spec.secretRef names the secret karmada-cluster\/member1, which user "nobody" cannot read/);
    // a patch that would add the reference is refused the same way, and nothing changes
    const patched = await fetch(`${url}${CLUSTERS}/plain`, {
      method: "PATCH",
      headers: { ...bearer(TOKENS.nobody), "content-type": "application/merge-patch+json" },
      body: JSON.stringify({ spec: { secretRef: { namespace: "karmada-cluster", name: "member1" } } }),
    });
    assert.equal(patched.status, 403);
    assert.equal((await call("GET", `${CLUSTERS}/plain`, TOKENS.admin)).body.spec.secretRef, undefined);
    assert.equal((await call("GET", `${CLUSTERS}/borrower`, TOKENS.admin)).status, 404);
    // an admin may
    assert.equal((await call("POST", CLUSTERS, TOKENS.admin, cluster("member1", { apiEndpoint: "https://10.0.0.1:6443", secretRef: { namespace: "karmada-cluster", name: "member1" } }))).status, 201);
    // a scheme no member speaks is refused at the door
    const gopher = await call("POST", CLUSTERS, TOKENS.admin, cluster("gopher", { apiEndpoint: "gopher://127.0.0.1:70" }));
    assert.equal(gopher.status, 422);
    assert.equal(gopher.body.details.causes[0].field, "spec.apiEndpoint");
  });

  test("removing a binding takes the access away", async () => {
    assert.equal((await call("DELETE", `${RBAC}/clusterrolebindings/vi-views`, TOKENS.admin)).status, 200);
    await until(TOKENS.viewer, "GET", DEPLOY, 403);
    assert.equal((await fetch(`${url}${DEPLOY}`, { headers: bearer() })).status, 200, "the admin is unaffected");
  });
});

describe("limits and the audit log", () => {
  let db: TestDatabase;
  let gw: Gateway;
  let url: string;
  let auditFile: string;
  before(async () => {
    db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    auditFile = path.join(await mkdtemp(path.join(os.tmpdir(), "flotilla-audit-")), "audit.log");
    gw = buildGateway({
      ...testGatewayDeps(store),
      audit: openAuditLog(auditFile),
      limits: { ratePerSecond: 0.5, burst: 3, watchesPerUser: 1, failedAuthPerSecond: 1 },
    });
    url = (await gw.start({ host: "127.0.0.1", port: 0 })).url;
    const r = await fetch(`${url}${RBAC}/clusterrolebindings`, { method: "POST", headers: { ...bearer(), "content-type": "application/json" }, body: JSON.stringify(bindTo("vi-views", "flotilla:view", { kind: "User", name: "vi" })) });
    assert.equal(r.status, 201);
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });

  test("a user over its rate gets 429 with Retry-After; system:masters is exempt", async () => {
    const codes: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await fetch(`${url}/apis`, { headers: bearer(TOKENS.viewer) });
      codes.push(last.status);
    }
    assert.deepEqual(codes.slice(0, 3), [200, 200, 200]);
    assert.equal(codes[4], 429);
    const body = (await last!.json()) as { reason: string; details: { retryAfterSeconds: number } };
    assert.equal(body.reason, "TooManyRequests");
    assert.ok(Number(last!.headers.get("retry-after")) >= 1);
    assert.ok(body.details.retryAfterSeconds >= 1);
    for (let i = 0; i < 10; i++) assert.equal((await fetch(`${url}/apis`, { headers: bearer() })).status, 200);
  });

  test("guessing tokens is slowed down per address", async () => {
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) codes.push((await fetch(`${url}/apis`, { headers: bearer(`guess-${i}`) })).status);
    assert.equal(codes[0], 401);
    assert.ok(codes.includes(429), `codes: ${codes}`);
  });

  test("open watches per user are capped, and a closed one frees its slot", async () => {
    const admin = await mkWatch(TOKENS.admin);
    const admin2 = await mkWatch(TOKENS.admin);
    assert.deepEqual([admin.status, admin2.status], [200, 200], "system:masters is exempt");
    admin.ac.abort();
    admin2.ac.abort();
  });

  async function mkWatch(token: string) {
    const ac = new AbortController();
    const r = await fetch(`${url}/api/v1/namespaces/default/configmaps?watch=true`, { headers: bearer(token), signal: ac.signal });
    return { status: r.status, ac, r };
  }

  test("a second watch of a limited user is refused until the first closes", async () => {
    // vi's rate was spent above: wait for a token
    await new Promise((r) => setTimeout(r, 2100));
    const first = await mkWatch(TOKENS.viewer);
    assert.equal(first.status, 200);
    await new Promise((r) => setTimeout(r, 2100));
    const second = await mkWatch(TOKENS.viewer);
    assert.equal(second.status, 429);
    first.ac.abort();
    await new Promise((r) => setTimeout(r, 2100));
    const third = await mkWatch(TOKENS.viewer);
    assert.equal(third.status, 200);
    third.ac.abort();
  });

  test("every write and every refusal is one JSON line, without bodies", async () => {
    const post = (token: string | undefined, body: unknown) =>
      fetch(`${url}/api/v1/namespaces/default/secrets`, { method: "POST", headers: { ...(token ? bearer(token) : {}), "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal((await post(TOKENS.admin, { apiVersion: "v1", kind: "Secret", metadata: { name: "audited" }, stringData: { password: "hunter2-in-a-body" } })).status, 201);
    assert.equal((await post(TOKENS.nobody, { apiVersion: "v1", kind: "Secret", metadata: { name: "nope" } })).status, 403);
    assert.equal((await post(undefined, { apiVersion: "v1", kind: "Secret", metadata: { name: "anon" } })).status, 401);
    await new Promise((r) => setTimeout(r, 200)); // the log is written as requests end
    const lines = (await readFile(auditFile, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as AuditEvent);
    const created = lines.find((e) => e.verb === "create" && e.objectRef?.resource === "secrets" && e.responseStatus.code === 201)!;
    assert.ok(created, "the create is audited");
    assert.deepEqual([created.apiVersion, created.kind, created.level, created.user.username, created.objectRef], ["audit.k8s.io/v1", "Event", "Metadata", "admin", { resource: "secrets", apiGroup: "", namespace: "default" }]);
    const denied = lines.find((e) => e.responseStatus.code === 403 && e.user.username === "nobody")!;
    assert.match(denied.annotations?.["authorization.k8s.io/reason"] ?? "", /cannot create resource "secrets"/);
    assert.ok(lines.some((e) => e.responseStatus.code === 401 && e.user.username === "system:anonymous"));
    assert.ok(lines.some((e) => e.responseStatus.code === 429 && e.user.username === "vi"));
    assert.ok(!lines.some((e) => e.verb === "list" && e.responseStatus.code === 200), "successful reads are not audited");
    assert.ok(!(await readFile(auditFile, "utf8")).includes("hunter2-in-a-body"), "no body in the log");
  });
});

describe("the gRPC front under the same limits", () => {
  test("a user over its rate gets RESOURCE_EXHAUSTED with a TooManyRequests Status; system:masters is exempt", async () => {
    const db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    const gw = buildGateway({ ...testGatewayDeps(store), limits: { ratePerSecond: 0.1, burst: 2, watchesPerUser: 1, failedAuthPerSecond: 1 } });
    const { grpcAddress } = (await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 })) as { grpcAddress: string };
    const Client = grpc.makeGenericClientConstructor(grpcServiceDefinition(ObjectService), "ObjectService");
    const client = new Client(grpcAddress, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (...a: unknown[]) => unknown>;
    const get = (token: string) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        (client.get as (r: unknown, md: grpc.Metadata, cb: (e: grpc.ServiceError | null) => void) => void).call(client, create(GetRequestSchema, { key: { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "x" } }), grpcAuth(token), (e) => resolve(e)),
      );
    try {
      const codes = [];
      for (let i = 0; i < 3; i++) codes.push((await get(TOKENS.nobody))?.code);
      // two within the burst are authorized (and refused by RBAC), the third is over the rate
      assert.deepEqual(codes.slice(0, 2), [grpc.status.PERMISSION_DENIED, grpc.status.PERMISSION_DENIED]);
      const third = await get(TOKENS.nobody);
      assert.equal(third?.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.match(String(third?.metadata.get("k8s-status")[0]), /TooManyRequests/);
      assert.equal((await get(TOKENS.admin))?.code, grpc.status.NOT_FOUND, "system:masters is exempt");
    } finally {
      client.close();
      await gw.stop();
      await db.drop();
    }
  });
});
