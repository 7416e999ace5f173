import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { startSimulator, type Simulator } from "@flotilla/member-sim";
import { ObjectStore, Sealer } from "@flotilla/store";
import { eventually, freshDatabase, type TestDatabase } from "@flotilla/testkit";
import type { KubeObject } from "@flotilla/api";
import { buildGateway, type Gateway } from "../app.js";
import { TOKENS, testGatewayDeps } from "../access.test-support.js";

const P = "/apis/cluster.karmada.io/v1alpha1/clusters";

/** One raw request (the path goes on the wire exactly as given, no client-side normalisation). */
function raw(base: string, path: string, o: { method?: string; token?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: u.hostname, port: u.port, path, method: o.method ?? "GET", headers: { authorization: `Bearer ${o.token ?? TOKENS.admin}`, ...o.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

const json = (t: string) => JSON.parse(t) as Record<string, unknown> & { message?: string; reason?: string; items?: KubeObject[]; details?: { causes?: Array<{ field: string }> } };

const deployment = (name: string) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default" },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx" }] } } },
});

describe("the cluster proxy", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  let sim: Simulator;
  let gw: Gateway;
  let url: string;
  // a member that records what reaches it
  let spy: http.Server;
  let spyUrl: string;
  const seen: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];

  const join = async (name: string, server: string, token: string, spec: Record<string, unknown> = {}) => {
    await store.create({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "karmada-cluster" }, type: "Opaque", stringData: { token } } as KubeObject);
    await store.create({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name }, spec: { syncMode: "Push", apiEndpoint: server, secretRef: { namespace: "karmada-cluster", name }, ...spec } } as KubeObject);
  };

  /** A ClusterRole on clusters/proxy and its binding to `subject`. */
  const grant = async (name: string, subject: { kind: string; name: string }, rule: { resourceNames?: string[]; verbs: string[] }) => {
    await store.create({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules: [{ apiGroups: ["cluster.karmada.io"], resources: ["clusters/proxy"], ...rule }] } as KubeObject);
    await store.create({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", ...subject }],
    } as KubeObject);
  };

  before(async () => {
    db = await freshDatabase();
    // member credentials sealed at rest, as the services run
    store = new ObjectStore(db.sql, { sealer: new Sealer([{ id: "k1", key: randomBytes(32) }]) });
    sim = await startSimulator({ admin: false, defaults: { readyDelayMs: 50 }, clusters: [{ name: "member1" }, { name: "member2" }] });
    spy = http.createServer((req, res) => {
      seen.push({ url: req.url ?? "", headers: req.headers });
      res.writeHead(200, { "content-type": "application/json", connection: "keep-alive", "x-member": "spy" });
      res.end(JSON.stringify({ kind: "Status", status: "Success", path: req.url }));
    });
    await new Promise<void>((r) => spy.listen(0, "127.0.0.1", r));
    spyUrl = `http://127.0.0.1:${(spy.address() as AddressInfo).port}`;
    for (const n of ["member1", "member2"]) await join(n, sim.cluster(n).url, sim.cluster(n).token);
    await join("spy", spyUrl, "spy-token");
    await join("member3", "https://127.0.0.1:1", "t3", { syncMode: "Pull" });
    await join("far", "http://10.0.0.1:6443", "t4");
    await join("meta", "https://169.254.169.254/", "t5");
    gw = buildGateway({ ...testGatewayDeps(store), proxy: { allowHttp: "loopback", timeoutMs: 2000 } });
    url = (await gw.start({ host: "127.0.0.1", port: 0 })).url;
  });
  after(async () => {
    await gw?.stop();
    await sim?.close();
    spy?.closeAllConnections();
    await new Promise((r) => spy?.close(r));
    await db?.drop();
  });

  test("an administrator reads and writes a member's objects through it, with the member's status codes and bodies", async () => {
    const created = await raw(url, `${P}/member1/proxy/apis/apps/v1/namespaces/default/deployments`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(deployment("web")) });
    assert.equal(created.status, 201, created.text);
    const list = await raw(url, `${P}/member1/proxy/apis/apps/v1/namespaces/default/deployments`);
    assert.equal(list.status, 200);
    assert.deepEqual(json(list.text).items?.map((d) => d.metadata.name), ["web"]);
    // the member's own errors come back as it sent them
    const again = await raw(url, `${P}/member1/proxy/apis/apps/v1/namespaces/default/deployments`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(deployment("web")) });
    assert.equal(again.status, 409);
    assert.equal(json(again.text).reason, "AlreadyExists");
    const missing = await raw(url, `${P}/member2/proxy/apis/apps/v1/namespaces/default/deployments/web`);
    assert.equal(missing.status, 404);
    assert.equal(json(missing.text).reason, "NotFound");
    // the Cluster itself and its other subresources are still the gateway's own
    assert.equal(json((await raw(url, `${P}/member1`)).text).kind, "Cluster");
    assert.equal(json((await raw(url, `${P}/member1/status`)).text).kind, "Cluster");
    // discovery, as kubectl reads it
    const disc = await raw(url, `${P}/member1/proxy/api/v1`);
    assert.equal(json(disc.text).kind, "APIResourceList");
  });

  test("without the clusters/proxy permission the answer is 403, with it (for one cluster by name) the request goes through", async () => {
    const denied = await raw(url, `${P}/member1/proxy/api/v1/pods`, { token: TOKENS.viewer });
    assert.equal(denied.status, 403);
    assert.match(json(denied.text).message ?? "", /cannot get resource "clusters\/proxy" in API group "cluster.karmada.io"/);
    await grant("proxy-member1", { kind: "User", name: "vi" }, { resourceNames: ["member1"], verbs: ["get"] });
    await eventually(async () => (await raw(url, `${P}/member1/proxy/api/v1/pods`, { token: TOKENS.viewer })).status === 200, { timeoutMs: 5000, message: "the binding applies" });
    // only get: a write is still refused, and so is another cluster
    const write = await raw(url, `${P}/member1/proxy/api/v1/namespaces/default/configmaps`, { token: TOKENS.viewer, method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(write.status, 403);
    assert.match(json(write.text).message ?? "", /cannot create resource "clusters\/proxy"/);
    assert.equal((await raw(url, `${P}/member2/proxy/api/v1/pods`, { token: TOKENS.viewer })).status, 403);
    assert.equal((await raw(url, `${P}/member1/proxy/api/v1/pods`, { token: "wrong" })).status, 401);
  });

  test("the caller is impersonated on the member; its token, cookies and hop-by-hop headers stay behind", async () => {
    seen.length = 0;
    const r = await raw(url, `${P}/spy/proxy/api/v1/pods?labelSelector=app%3Dweb`, { token: TOKENS.editor, headers: { cookie: "a=b", "impersonate-user": "root", connection: "x-secret", "x-secret": "1", "x-kept": "2" } });
    // ed (group team-a) may not impersonate: the gateway refuses before anything is sent
    assert.equal(r.status, 403);
    assert.match(json(r.text).message ?? "", /cannot impersonate resource "users"/);
    assert.equal(seen.length, 0);
    await grant("proxy-all", { kind: "Group", name: "team-a" }, { verbs: ["*"] });
    await eventually(async () => (await raw(url, `${P}/spy/proxy/api/v1/pods`, { token: TOKENS.editor })).status === 200, { timeoutMs: 5000, message: "the binding applies" });
    seen.length = 0;
    const ok = await raw(url, `${P}/spy/proxy/api/v1/pods?labelSelector=app%3Dweb`, { token: TOKENS.editor, headers: { cookie: "a=b", connection: "x-secret", "x-secret": "1", "x-kept": "2" } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers["x-member"], "spy");
    const h = seen[0]!.headers;
    assert.equal(seen[0]!.url, "/api/v1/pods?labelSelector=app%3Dweb");
    assert.equal(h.authorization, "Bearer spy-token");
    assert.equal(h["impersonate-user"], "ed");
    assert.equal(h["impersonate-group"], "team-a");
    assert.equal(h.cookie, undefined);
    assert.equal(h["x-secret"], undefined);
    assert.equal(h["x-kept"], "2");
  });

  test("no path reaches anything but the cluster's apiEndpoint: traversal is a 400 naming the path, @ and hosts stay in the path", async () => {
    seen.length = 0;
    for (const p of ["/api/../../../../api/v1/namespaces/karmada-cluster/secrets", "/api/%2e%2e/%2E%2E/x", "/api%2F..%2F..%2Fx", "/./api"]) {
      const r = await raw(url, `${P}/spy/proxy${p}`);
      assert.equal(r.status, 400, p);
      assert.equal(json(r.text).reason, "BadRequest");
      assert.equal(json(r.text).details?.causes?.[0]?.field, "path");
    }
    assert.equal(seen.length, 0, "nothing reached the member");
    for (const [p, want] of [
      ["/@169.254.169.254/latest", "/%40169.254.169.254/latest"],
      ["//169.254.169.254/latest", "/169.254.169.254/latest"],
      ["/http://169.254.169.254/latest", "/http:/169.254.169.254/latest"],
    ]) {
      const r = await raw(url, `${P}/spy/proxy${p}`);
      assert.equal(r.status, 200, p);
      assert.equal(JSON.parse(r.text).path, want, p);
    }
    // a cluster whose endpoint breaks the member rules is never connected to
    const far = await raw(url, `${P}/far/proxy/api`);
    assert.equal(far.status, 503);
    assert.match(json(far.text).message ?? "", /cluster far cannot be reached through the proxy: spec.apiEndpoint is http to a host that is not loopback/);
    const meta = await raw(url, `${P}/meta/proxy/latest/meta-data`);
    assert.equal(meta.status, 503);
    assert.match(json(meta.text).message ?? "", /link-local/);
  });

  test("a Pull cluster without its agent's tunnel answers 503 saying why; an unknown cluster 404; a member that is down 503", async () => {
    const pull = await raw(url, `${P}/member3/proxy/api/v1/pods`);
    assert.equal(pull.status, 503);
    assert.equal(json(pull.text).message, "cluster member3 is in Pull mode and its flotilla-agent has no tunnel to this gateway replica: the agent is not connected, or its tunnel is held by another gateway replica");
    const none = await raw(url, `${P}/nope/proxy/api/v1/pods`);
    assert.equal(none.status, 404);
    assert.equal(json(none.text).reason, "NotFound");
    await sim.setFault("member2", { mode: "unreachable" });
    try {
      const down = await raw(url, `${P}/member2/proxy/api/v1/pods`);
      assert.equal(down.status, 503);
      assert.equal(json(down.text).message, "cluster member2 did not answer through the proxy: connection refused");
    } finally {
      await sim.setFault("member2", { mode: "healthy" });
    }
  });

  test("a watch streams each event as the member sends it, and closing it closes the member's watch", async () => {
    const c = sim.cluster("member1");
    const before = c.watches.size;
    const u = new URL(url);
    const lines: Array<{ type: string; object: KubeObject }> = [];
    let buf = "";
    const req = http.request({ hostname: u.hostname, port: u.port, path: `${P}/member1/proxy/apis/apps/v1/namespaces/default/deployments?watch=true`, headers: { authorization: `Bearer ${TOKENS.admin}` } });
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => (req.on("response", resolve), req.on("error", reject), req.end()));
    assert.equal(res.statusCode, 200);
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        lines.push(JSON.parse(buf.slice(0, i)));
        buf = buf.slice(i + 1);
      }
    });
    await eventually(() => lines.some((l) => l.type === "ADDED" && l.object.metadata.name === "web"), { timeoutMs: 5000, message: "the existing deployment" });
    assert.equal(c.watches.size, before + 1);
    // a change made on the member while the watch is open arrives at once, not at the end
    const r = await fetch(`${c.url}/apis/apps/v1/namespaces/default/deployments`, { method: "POST", headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" }, body: JSON.stringify(deployment("late")) });
    assert.equal(r.status, 201);
    await eventually(() => lines.some((l) => l.type === "ADDED" && l.object.metadata.name === "late"), { timeoutMs: 5000, message: "the new deployment streams" });
    req.destroy();
    await eventually(() => c.watches.size === before, { timeoutMs: 5000, message: "the member's watch is closed" });
  });

  test("stopping the gateway ends its proxied watches at once instead of waiting for the clients", async () => {
    const own = buildGateway({ ...testGatewayDeps(store), proxy: { allowHttp: "loopback", timeoutMs: 2000 } });
    const base = (await own.start({ host: "127.0.0.1", port: 0 })).url;
    const r = await fetch(`${base}${P}/member1/proxy/apis/apps/v1/namespaces/default/deployments?watch=true`, { headers: { authorization: `Bearer ${TOKENS.admin}` } });
    assert.equal(r.status, 200);
    const ended = r.text().then(() => true, () => true);
    const t0 = Date.now();
    await own.stop();
    const took = Date.now() - t0;
    assert.equal(await Promise.race([ended, new Promise((res) => setTimeout(() => res(false), 5000))]), true, "the proxied watch ended");
    assert.ok(took < 3000, `stop() took ${took} ms`);
  });
});
