// The cluster proxy to a Pull member through its flotilla-agent: a real gateway (buildGateway over
// TLS on a fresh database, no other service), the agent of member3 with its least-privilege
// ServiceAccount (scripts/register-agent.mjs, as `npm start` does) beside a simulated member3. A
// stock kubectl lists member3's pods through `clusters/member3/proxy`, a watch streams, the member
// sees the caller impersonated and never its token, an agent cannot open another cluster's tunnel,
// and a stopped agent leaves a 503 that says why.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import http from "node:http";
import https from "node:https";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { WebSocket } from "ws";
import type { KubeObject } from "@flotilla/api";
import { buildAgent, type Agent } from "@flotilla/agent";
import { buildGateway, ensureSigningKey, RbacAuthorizer, ServiceAccountTokens, TokenFileAuthenticator, unionAuthenticator, type Gateway } from "@flotilla/gateway";
import { createLogger } from "@flotilla/log";
import { startSimulator } from "@flotilla/member-sim";
import { ObjectStore } from "@flotilla/store";
import { eventually, freshDatabase } from "@flotilla/testkit";
import { FAST_AGENT } from "./settings.js";

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const log = createLogger({ name: "proxy-test", level: process.env.LOG_LEVEL ?? "silent" });
const ADMIN = "admin-token";
const VIEWER = "viewer-token";
const TOKEN_FILE = `${ADMIN},admin,admin-uid,"system:masters"\n${VIEWER},vi,vi-uid,"team-a"`;
const ISSUER = "https://flotilla.test";
const P = "/apis/cluster.karmada.io/v1alpha1/clusters";

type RegisterAgent = (o: { gatewayUrl: string; member: string; tokenFile: string; token: string }) => Promise<string>;

function deployment(name: string): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.25" }] } } },
  };
}

test("the cluster proxy reaches a Pull member through its agent's tunnel: kubectl, a watch, impersonation, only its own tunnel, 503 without it", async (t) => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  const dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-agent-proxy-"));
  const crt = path.join(dir, "tls.crt");
  const key = path.join(dir, "tls.key");
  await run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]);
  const ca = await readFile(crt, "utf8");
  const keyFile = path.join(dir, "sa.key");
  await ensureSigningKey(keyFile);
  const sim = await startSimulator({ admin: false, defaults: { readyDelayMs: 50 }, clusters: [{ name: "member3" }] });
  // a member that records what reaches it, served by a second agent
  const seen: http.IncomingHttpHeaders[] = [];
  let streamsOpen = 0;
  const spy = http.createServer((req, res) => {
    if (req.url?.startsWith("/spy/stream")) {
      // a stream that never ends by itself: the member side of a watch
      streamsOpen++;
      res.once("close", () => streamsOpen--);
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"type":"ADDED"}\n');
      return;
    }
    if (req.url?.startsWith("/spy")) seen.push(req.headers);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ kind: "Status", status: "Success", path: req.url }));
  });
  await new Promise<void>((r) => spy.listen(0, "127.0.0.1", r));
  const sa = await ServiceAccountTokens.fromFile(store, keyFile, ISSUER, { audiences: [ISSUER], defaultSeconds: 3600, maxSeconds: 86400 });
  const replica = (tls?: { cert: Buffer; key: Buffer }) =>
    buildGateway({
      store,
      log,
      settings: { notReadyTolerationSeconds: 300, unreachableTolerationSeconds: 300 },
      ready: async () => true,
      access: { authenticator: unionAuthenticator(new TokenFileAuthenticator(TOKEN_FILE), sa), authorizer: new RbacAuthorizer(store), serviceAccounts: sa },
      ...(tls ? { tls } : {}),
      proxy: { allowHttp: "loopback", timeoutMs: 2000, tunnelRecheckMs: 300 },
    });
  // two replicas of the gateway on one database: the agents connect to the first (TLS, for kubectl)
  const gw: Gateway = replica({ cert: Buffer.from(ca), key: await readFile(key) });
  const { url } = await gw.start({ host: "127.0.0.1", port: 0 });
  const other: Gateway = replica();
  const { url: otherUrl } = await other.start({ host: "127.0.0.1", port: 0 });
  const agents: Agent[] = [];
  t.after(async () => {
    for (const a of agents) await a.stop();
    await gw.stop();
    await other.stop();
    await sim.close();
    await new Promise<void>((r) => spy.close(() => r()));
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });
  const tls = new https.Agent({ ca });
  /** One request over TLS; the body as text. */
  const call = (method: string, p: string, token: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      // the path goes on the wire as given (a URL would resolve %2e%2e)
      const req = https.request({ hostname: "127.0.0.1", port: new URL(url).port, path: p, method, agent: tls, headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") }));
      });
      req.on("error", reject);
      req.end(body ? JSON.stringify(body) : undefined);
    });
  const message = (text: string) => (JSON.parse(text) as { message?: string }).message ?? "";

  // the agent's identity and token, as npm start makes them (examples/agent-rbac.yaml for member3)
  const registerAgent = ((await import(path.join(root, "scripts/register-agent.mjs"))) as { registerAgent: RegisterAgent }).registerAgent;
  const tokenFile = path.join(dir, "agent.token");
  await registerAgent({ gatewayUrl: otherUrl, member: "member3", tokenFile, token: ADMIN });
  const AGENT = (await readFile(tokenFile, "utf8")).trim();

  const m3 = sim.cluster("member3");
  const member3 = buildAgent({ settings: { ...FAST_AGENT, GATEWAY_URL: url }, log, member: { server: m3.url, token: m3.token }, token: () => AGENT, gatewayCa: ca });
  agents.push(member3);
  await member3.start();
  await eventually(() => member3.tunnel?.connected === true, { timeoutMs: 15_000, message: "member3's tunnel open" });

  await t.test("an HTTP GET and a write reach member3 through the agent; a watch streams", async () => {
    const created = await call("POST", `${P}/member3/proxy/apis/apps/v1/namespaces/default/deployments`, ADMIN, deployment("web"));
    assert.equal(created.status, 201, created.text);
    assert.ok(m3.get("apps/v1", "Deployment", "web", "default"), "written on member3");
    const list = await call("GET", `${P}/member3/proxy/apis/apps/v1/namespaces/default/deployments`, ADMIN);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual((JSON.parse(list.text) as { items: KubeObject[] }).items.map((d) => d.metadata.name), ["web"]);
    const missing = await call("GET", `${P}/member3/proxy/apis/apps/v1/namespaces/default/deployments/nope`, ADMIN);
    assert.equal(missing.status, 404, "the member's own status comes back");

    // a watch: the existing Deployment, then one created while it is open, then the caller closes it
    const events: string[] = [];
    const ac = new AbortController();
    const watching = new Promise<void>((resolve, reject) => {
      const req = https.request(`${url}${P}/member3/proxy/apis/apps/v1/namespaces/default/deployments?watch=true`, { agent: tls, signal: ac.signal, headers: { authorization: `Bearer ${ADMIN}` } }, (res) => {
        assert.equal(res.statusCode, 200);
        let buf = "";
        res.on("data", (c: Buffer) => {
          buf += c.toString("utf8");
          let i;
          while ((i = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, i).trim();
            buf = buf.slice(i + 1);
            if (line) {
              const e = JSON.parse(line) as { type: string; object: KubeObject };
              events.push(`${e.type} ${e.object.metadata.name}`);
            }
          }
        });
        res.on("close", () => resolve());
        res.on("error", () => resolve());
      });
      req.on("error", (e) => (ac.signal.aborted ? resolve() : reject(e)));
      req.end();
    });
    await eventually(() => events.includes("ADDED web"), { message: "the watch's first event" });
    assert.equal((await call("POST", `${P}/member3/proxy/apis/apps/v1/namespaces/default/deployments`, ADMIN, deployment("api"))).status, 201);
    await eventually(() => events.includes("ADDED api"), { message: "an event streamed while the watch is open" });
    ac.abort();
    await watching;
  });

  await t.test("kubectl get pods -A through clusters/member3/proxy", async () => {
    const kc = path.join(dir, "kubeconfig");
    await writeFile(kc, ["apiVersion: v1", "kind: Config", "clusters:", "- name: c", `  cluster: {server: "${url}", certificate-authority: "${crt}"}`, "users:", "- name: u", `  user: {token: "${ADMIN}"}`, "contexts:", "- name: x", "  context: {cluster: c, user: u}", "current-context: x", ""].join("\n"), { mode: 0o600 });
    const { stdout } = await run("kubectl", ["--kubeconfig", kc, "--server", `${url}${P}/member3/proxy`, "get", "pods", "-A", "--no-headers"], { timeout: 30_000, env: { ...process.env, KUBECONFIG: "" } });
    const pods = stdout.trim().split("\n").filter(Boolean);
    assert.ok(pods.some((l) => /^default\s+web-/.test(l)), stdout);
    const deploys = await run("kubectl", ["--kubeconfig", kc, "--server", `${url}${P}/member3/proxy`, "get", "deploy", "-n", "default", "-o", "name"], { timeout: 30_000, env: { ...process.env, KUBECONFIG: "" } });
    assert.deepEqual(deploys.stdout.trim().split("\n").sort(), ["deployment.apps/api", "deployment.apps/web"]);
  });

  await t.test("the member sees the caller impersonated and the agent's member token, never the caller's; closing a stream closes the member's", async () => {
    // a Pull cluster "spy" whose agent (the administrator's token: RBAC lets it) talks to the recording member
    const spyAgent = buildAgent({
      settings: { ...FAST_AGENT, CLUSTER_NAME: "spy", GATEWAY_URL: url },
      log,
      member: { server: `http://127.0.0.1:${(spy.address() as AddressInfo).port}`, token: "spy-member-token" },
      token: () => ADMIN,
      gatewayCa: ca,
    });
    agents.push(spyAgent);
    await spyAgent.start();
    await eventually(() => spyAgent.tunnel?.connected === true, { timeoutMs: 15_000, message: "spy's tunnel open" });
    const r = await call("GET", `${P}/spy/proxy/spy/x?a=1`, ADMIN);
    assert.equal(r.status, 200, r.text);
    assert.equal((JSON.parse(r.text) as { path: string }).path, "/spy/x?a=1");
    const h = seen.at(-1)!;
    assert.equal(h.authorization, "Bearer spy-member-token");
    assert.equal(h["impersonate-user"], "admin");
    assert.ok(!JSON.stringify(h).includes(ADMIN), "the caller's token never reaches the member");
    // a streamed answer: the caller closing it closes the member's stream, through the agent
    const ac = new AbortController();
    const first = await new Promise<string>((resolve, reject) => {
      const req = https.request(`${url}${P}/spy/proxy/spy/stream?watch=true`, { agent: tls, signal: ac.signal, headers: { authorization: `Bearer ${ADMIN}` } }, (res) => {
        res.once("data", (c: Buffer) => resolve(c.toString("utf8")));
        res.on("error", () => {});
      });
      req.on("error", (e) => (ac.signal.aborted ? undefined : reject(e)));
      req.end();
    });
    assert.equal(first, '{"type":"ADDED"}\n');
    assert.equal(streamsOpen, 1);
    ac.abort();
    await eventually(() => streamsOpen === 0, { message: "the member's stream closed after the caller's" });
    // the proxy's own rules still apply: RBAC on clusters/proxy, path checks
    assert.equal((await call("GET", `${P}/spy/proxy/spy/x`, VIEWER)).status, 403);
    assert.equal((await call("GET", `${P}/spy/proxy/spy/%2e%2e/secret`, ADMIN)).status, 400);
  });

  await t.test("an agent's token opens only its own cluster's tunnel; any other upgrade is a 400", async () => {
    const open = (cluster: string, token?: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${url.replace(/^https/, "wss")}${P}/${cluster}/tunnel`, { ca, headers: token ? { authorization: `Bearer ${token}` } : {} });
        ws.on("open", () => (ws.close(), resolve(101)));
        ws.on("unexpected-response", (_req, res) => (res.resume(), resolve(res.statusCode ?? 0)));
        ws.on("error", () => resolve(-1));
      });
    assert.equal((await call("POST", "/apis/cluster.karmada.io/v1alpha1/clusters", ADMIN, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "member4" }, spec: { syncMode: "Pull" } })).status, 201);
    // RBAC: create on clusters/tunnel for member3 only
    assert.equal(await open("member4", AGENT), 403);
    assert.equal(await open("member4"), 401);
    // even when RBAC would let it, the agent of member3 is refused member4's tunnel
    await call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", ADMIN, { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "all-tunnels" }, rules: [{ apiGroups: ["cluster.karmada.io"], resources: ["clusters/tunnel"], verbs: ["create"] }] });
    await call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", ADMIN, { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "all-tunnels" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "all-tunnels" }, subjects: [{ kind: "ServiceAccount", name: "flotilla-agent-member3", namespace: "karmada-cluster" }] });
    await eventually(async () => (await call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", AGENT, { spec: { resourceAttributes: { group: "cluster.karmada.io", resource: "clusters", subresource: "tunnel", verb: "create", name: "member4" } } })).text.includes('"allowed":true'), { message: "RBAC grants all tunnels" });
    assert.equal(await open("member4", AGENT), 403);
    // a tunnel for a cluster that does not exist, or one in Push mode, is refused too
    assert.equal(await open("nope", ADMIN), 404);
    await call("POST", "/apis/cluster.karmada.io/v1alpha1/clusters", ADMIN, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "pushed" }, spec: { syncMode: "Push", apiEndpoint: "https://10.0.0.1:6443" } });
    assert.equal(await open("pushed", ADMIN), 400);
    // any other upgrade is a 400 Status (kubectl exec, attach and port-forward are not proxied), never a 5xx
    const upgrade = (p: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = https.request({ hostname: "127.0.0.1", port: new URL(url).port, path: p, agent: false, ca, headers: { authorization: `Bearer ${ADMIN}`, connection: "Upgrade", upgrade: "websocket", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" } }, (res) => {
          const parts: Buffer[] = [];
          res.on("data", (c: Buffer) => parts.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") }));
        });
        req.on("upgrade", () => reject(new Error(`${p} was upgraded`)));
        req.on("error", reject);
        req.end();
      });
    const exec = await upgrade(`${P}/member3/proxy/api/v1/namespaces/default/pods/web/exec?command=sh`);
    assert.equal(exec.status, 400);
    assert.match(message(exec.text), /only an agent's clusters\/\{name\}\/tunnel is a WebSocket/);
    assert.equal((await upgrade(`${P}/Member3%2F/tunnel`)).status, 400);
    // member3's own tunnel is still the agent's
    assert.equal(member3.tunnel?.connected, true);
  });

  await t.test("without a tunnel the proxy answers 503 saying why", async () => {
    const none = await call("GET", `${P}/member4/proxy/api/v1/pods`, ADMIN);
    assert.equal(none.status, 503);
    assert.equal(message(none.text), "cluster member4 is in Pull mode and its flotilla-agent has no tunnel to this gateway replica: the agent is not connected, or its tunnel is held by another gateway replica");
    // another replica of the gateway does not hold member3's tunnel, and says so
    const elsewhere = await fetch(`${otherUrl}${P}/member3/proxy/api/v1/pods`, { headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(elsewhere.status, 503);
    assert.match(message(await elsewhere.text()), /^cluster member3 is in Pull mode and its flotilla-agent has no tunnel to this gateway replica/);
    await member3.stop();
    await eventually(async () => (await call("GET", `${P}/member3/proxy/api/v1/pods`, ADMIN)).status === 503, { message: "member3 503 once its agent stopped" });
  });

  await t.test("an open tunnel whose agent is revoked (its ServiceAccount deleted) is closed within the recheck interval and not opened again", async () => {
    const again = buildAgent({ settings: { ...FAST_AGENT, GATEWAY_URL: url }, log, member: { server: m3.url, token: m3.token }, token: () => AGENT, gatewayCa: ca });
    agents.push(again);
    await again.start();
    await eventually(() => again.tunnel?.connected === true, { timeoutMs: 15_000, message: "member3's tunnel open again" });
    assert.equal((await call("GET", `${P}/member3/proxy/api/v1/namespaces/default/pods`, ADMIN)).status, 200);
    const deleted = await call("DELETE", "/api/v1/namespaces/karmada-cluster/serviceaccounts/flotilla-agent-member3", ADMIN);
    assert.equal(deleted.status, 200, deleted.text);
    const t0 = Date.now();
    await eventually(() => again.tunnel?.connected === false, { timeoutMs: 5000, message: "the revoked agent's tunnel closed" });
    const closedMs = Date.now() - t0;
    assert.ok(closedMs < 3000, `closed after ${closedMs} ms (recheck every 300 ms)`);
    // its reconnects are refused (401): the proxy stays unavailable
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(again.tunnel?.connected, false);
    const after = await call("GET", `${P}/member3/proxy/api/v1/namespaces/default/pods`, ADMIN);
    assert.equal(after.status, 503, after.text);
  });
});
