import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { KubeObject } from "@flotilla/api";
import { startSimulator, type Simulator } from "@flotilla/member-sim";
import { MemberClient } from "./client.js";
import { MemberClientCache } from "./cache.js";
import { MemberInformer } from "./informer.js";
import { ApplyConflictError, KubeApiError } from "./errors.js";

const dataOf = (o: unknown): Record<string, string> | undefined => (o as { data?: Record<string, string> } | undefined)?.data;

async function sim(t: { after(fn: () => Promise<void>): void }): Promise<Simulator> {
  const s = await startSimulator({ admin: false, defaults: { readyDelayMs: 20 }, clusters: [{ name: "m1" }] });
  t.after(() => s.close());
  return s;
}

const cm = (name: string, data: Record<string, string>, extra: Partial<KubeObject["metadata"]> = {}): KubeObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns1", ...extra }, data });

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("create, get, replace, list and delete raw objects through discovery, keeping unknown fields", async (t) => {
  const s = await sim(t);
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token, name: "m1" });
  t.after(() => client.close());

  const created = await client.create({ ...cm("a", { k: "v" }), extraTopLevel: { kept: true } } as KubeObject);
  assert.equal(created.metadata.name, "a");
  assert.ok(created.metadata.uid);
  assert.deepEqual((created as { extraTopLevel?: unknown }).extraTopLevel, { kept: true });
  assert.deepEqual((await client.get(cm("a", {})))?.data, { k: "v" });
  assert.equal(await client.get(cm("missing", {})), undefined);

  const replaced = await client.replace({ ...created, data: { k: "w" } });
  assert.deepEqual(replaced.data, { k: "w" });
  await assert.rejects(client.replace({ ...created, data: { k: "x" } }), (e: KubeApiError) => e.code === 409 && e.reason === "Conflict");

  const list = await client.list("v1", "ConfigMap", { namespace: "ns1" });
  assert.deepEqual(list.items.map((i) => i.metadata.name), ["a"]);
  assert.ok(list.resourceVersion);
  assert.equal((await client.listNodes()).items.length, 3);

  assert.equal(await client.delete(cm("a", {})), true);
  assert.equal(await client.delete(cm("a", {})), false);
  await assert.rejects(client.create({ apiVersion: "example.io/v1", kind: "Nope", metadata: { name: "x" } }), (e: KubeApiError) => e.code === 404);
});

test("apply creates, skips a write when the member already carries everything, updates keeping the member's own metadata, and honours mayUpdate", async (t) => {
  const s = await sim(t);
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token });
  t.after(() => client.close());

  const first = await client.apply(cm("b", { k: "1" }, { labels: { "karmada.io/managed": "true" } }));
  assert.equal(first.action, "created");
  // the member adds its own label and a finalizer
  c.patch("v1", "ConfigMap", "b", { metadata: { labels: { member: "yes" }, finalizers: ["member/keep"] } }, "ns1");
  const again = await client.apply(cm("b", { k: "1" }, { labels: { "karmada.io/managed": "true" } }));
  assert.equal(again.action, "unchanged");
  const upd = await client.apply(cm("b", { k: "2" }, { labels: { "karmada.io/managed": "true" } }), { observed: first.object });
  assert.equal(upd.action, "updated", "a stale observed copy is re-read after the 409");
  assert.deepEqual(upd.object.data, { k: "2" });
  assert.deepEqual(upd.object.metadata.labels, { member: "yes", "karmada.io/managed": "true" });
  assert.deepEqual(upd.object.metadata.finalizers, ["member/keep"]);

  await assert.rejects(client.apply(cm("b", { k: "3" }), { mayUpdate: () => "not ours" }), (e) => e instanceof ApplyConflictError && e.message === "not ours");
  const forced = await client.apply(cm("b", { k: "2" }, { labels: { "karmada.io/managed": "true" } }), { force: true });
  assert.equal(forced.action, "updated");
});

test("health: 200 is healthy, 500 is online but unhealthy, refused is offline, and /healthz is asked when /readyz is not served", async (t) => {
  const s = await sim(t);
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token });
  t.after(() => client.close());
  assert.deepEqual((({ online, healthy, statusCode, path }) => ({ online, healthy, statusCode, path }))(await client.health()), { online: true, healthy: true, statusCode: 200, path: "/readyz" });
  await s.setFault("m1", { mode: "not-ready" });
  assert.deepEqual((({ online, healthy, statusCode }) => ({ online, healthy, statusCode }))(await client.health()), { online: true, healthy: false, statusCode: 500 });
  await s.setFault("m1", { mode: "unreachable" });
  const off = await client.health();
  assert.equal(off.online, false);
  assert.match(off.error ?? "", /ECONNREFUSED/);
  await s.setFault("m1", { mode: "healthy" });

  // an API server without /readyz (older versions): /healthz decides
  const seen: string[] = [];
  const stub = http.createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization}`);
    res.writeHead(req.url === "/healthz" ? 200 : 404).end("ok");
  });
  await new Promise<void>((r) => stub.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => stub.close(() => r())));
  const old = new MemberClient({ server: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`, token: "tok" });
  t.after(() => old.close());
  const h = await old.health();
  assert.deepEqual({ healthy: h.healthy, path: h.path }, { healthy: true, path: "/healthz" });
  assert.deepEqual(seen, ["/readyz Bearer tok", "/healthz Bearer tok"]);
});

test("a probe of a member that hangs gives up after its timeout", async (t) => {
  const s = await sim(t);
  await s.setFault("m1", { mode: "slow", latencyMs: 2000 });
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token });
  t.after(() => client.close());
  const t0 = Date.now();
  const h = await client.health({ timeoutMs: 200 });
  assert.equal(h.online, false);
  assert.match(h.error ?? "", /timed out after 200 ms/);
  assert.ok(Date.now() - t0 < 1000);
  await assert.rejects(client.version({ timeoutMs: 200 }), (e: KubeApiError) => e.unreachable && e.reason === "Timeout");
});

test("discovery lists every served group version with its resources; /version answers", async (t) => {
  const s = await sim(t);
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token });
  t.after(() => client.close());
  const d = await client.discovery();
  assert.equal(d.complete, true);
  assert.deepEqual(d.enablements.map((e) => e.groupVersion), ["apps/v1", "autoscaling/v2", "batch/v1", "networking.k8s.io/v1", "policy/v1", "rbac.authorization.k8s.io/v1", "v1"]);
  assert.ok(d.enablements.find((e) => e.groupVersion === "apps/v1")!.resources.some((r) => r.name === "deployments" && r.kind === "Deployment"));
  assert.ok(!d.enablements.some((e) => e.resources.some((r) => r.name.includes("/"))), "subresources are left out");
  assert.equal((await client.version()).gitVersion, "v1.29.0");
  assert.deepEqual(await client.resourceFor("apps/v1", "Deployment"), { name: "deployments", namespaced: true });
  assert.equal(await client.resourceFor("example.io/v1", "Widget"), undefined);
});

test("an informer lists, then follows changes of selected objects, and lists again after the member was away", async (t) => {
  const s = await sim(t);
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token });
  t.after(() => client.close());
  c.create(cm("pre", { a: "1" }, { labels: { sel: "yes" } }) as never);
  c.create(cm("other", { a: "1" }) as never);
  const events: string[] = [];
  const inf = new MemberInformer({ client, apiVersion: "v1", kind: "ConfigMap", labelSelector: "sel=yes", onChange: (type, o) => events.push(`${type} ${o.metadata.name}`), backoff: { baseMs: 50, maxMs: 200 } }).start();
  t.after(() => inf.stop());
  assert.equal(await inf.waitSynced(3000), true);
  assert.deepEqual(events, ["ADDED pre"]);

  c.create(cm("new", { a: "1" }, { labels: { sel: "yes" } }) as never);
  await waitFor(() => events.includes("ADDED new"));
  c.patch("v1", "ConfigMap", "new", { data: { a: "2" } }, "ns1");
  await waitFor(() => dataOf(inf.get("ns1", "new"))?.a === "2");
  assert.ok(events.includes("MODIFIED new"));

  await s.setFault("m1", { mode: "unreachable" });
  c.delete("v1", "ConfigMap", "pre", "ns1");
  await new Promise((r) => setTimeout(r, 200));
  await s.setFault("m1", { mode: "healthy" });
  inf.kick();
  await waitFor(() => events.includes("DELETED pre"), 5000);
  assert.equal(inf.get("ns1", "pre"), undefined);
  assert.deepEqual(inf.list().map((o) => o.metadata.name), ["new"]);
});

test("an informer asked to list again is not synced until the member answered, and a failed list leaves it unsynced until one succeeds", async (t) => {
  const s = await sim(t);
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token });
  t.after(() => client.close());
  c.create(cm("kept", { a: "1" }, { labels: { sel: "yes" } }) as never);
  const events: string[] = [];
  const listed: boolean[] = [];
  const inf = new MemberInformer({
    client,
    apiVersion: "v1",
    kind: "ConfigMap",
    labelSelector: "sel=yes",
    onChange: (type, o) => events.push(`${type} ${o.metadata.name}`),
    onListed: ({ afterFailure }) => listed.push(afterFailure),
    backoff: { baseMs: 50, maxMs: 200 },
  }).start();
  t.after(() => inf.stop());
  assert.equal(await inf.waitListed(3000), true);
  assert.deepEqual(listed, [false]);

  // the member is rebuilt without the object and no watch event says so: relist() finds it
  await s.setFault("m1", { mode: "unreachable" });
  c.delete("v1", "ConfigMap", "kept", "ns1");
  inf.relist();
  assert.equal(inf.synced, false, "the cache from before is not current");
  assert.equal(await inf.waitListed(3000), false, "one failed attempt answers the waiter");
  assert.ok(inf.lastError);
  assert.equal(inf.get("ns1", "kept")?.metadata.name, "kept", "still cached, but not synced");

  await s.setFault("m1", { mode: "healthy" });
  inf.kick();
  assert.equal(await inf.waitSynced(5000), true);
  assert.equal(inf.get("ns1", "kept"), undefined);
  assert.ok(events.includes("DELETED kept"));
  assert.equal(listed.at(-1), true, "the list after failures is reported as a reconnect");
});

test("the client cache reuses a client while endpoint and token stay, and replaces it when either changes", async (t) => {
  const invalidated: string[] = [];
  const cache = new MemberClientCache({ onInvalidate: (c) => invalidated.push(c) });
  t.after(() => cache.closeAll());
  const a = cache.get("m1", { server: "http://127.0.0.1:1", token: "t1" });
  assert.equal(cache.get("m1", { server: "http://127.0.0.1:1", token: "t1" }), a);
  const b = cache.get("m1", { server: "http://127.0.0.1:1", token: "t2" });
  assert.notEqual(b, a);
  assert.equal(a.isClosed, true);
  const c = cache.get("m1", { server: "http://127.0.0.1:2", token: "t2" });
  assert.notEqual(c, b);
  cache.drop("m1");
  assert.equal(c.isClosed, true);
  assert.deepEqual(invalidated, ["m1", "m1", "m1"]);
});

test("requests reuse kept-alive connections instead of opening one each", async (t) => {
  const s = await sim(t);
  const c = s.cluster("m1");
  const client = new MemberClient({ server: c.url, token: c.token, maxSockets: 4 });
  t.after(() => client.close());
  const sockets = new Set<unknown>();
  const agentOf = (client as unknown as { agent: http.Agent }).agent;
  const orig = agentOf.createConnection.bind(agentOf);
  (agentOf as unknown as { createConnection: typeof orig }).createConnection = ((...args: Parameters<typeof orig>) => {
    const sock = orig(...args);
    sockets.add(sock);
    return sock;
  }) as typeof orig;
  for (let i = 0; i < 50; i++) await client.get(cm(`x${i}`, {}));
  assert.ok(sockets.size <= 2, `${sockets.size} connections for 50 sequential requests`);
});

test("over https the member's CA is trusted, an unknown certificate is refused unless verification is off, and the token is sent", async (t) => {
  const { execFileSync } = await import("node:child_process");
  const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const https = await import("node:https");
  const dir = mkdtempSync(`${tmpdir()}/kube-tls-`);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", `${dir}/key.pem`, "-out", `${dir}/cert.pem`], { stdio: "ignore" });
  const cert = readFileSync(`${dir}/cert.pem`, "utf8");
  const auth: string[] = [];
  const server = https.createServer({ key: readFileSync(`${dir}/key.pem`), cert }, (req, res) => {
    auth.push(req.headers.authorization ?? "");
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ gitVersion: "v1.29.0" }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const server_ = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const trusted = new MemberClient({ server: server_, token: "t0ken", caData: Buffer.from(cert).toString("base64") });
  t.after(() => trusted.close());
  assert.equal((await trusted.version()).gitVersion, "v1.29.0");
  assert.deepEqual(auth, ["Bearer t0ken"]);

  const untrusted = new MemberClient({ server: server_, token: "t0ken" });
  t.after(() => untrusted.close());
  await assert.rejects(untrusted.version({ timeoutMs: 2000 }), (e: KubeApiError) => e.unreachable && /self.signed|certificate/i.test(e.message));

  const skip = new MemberClient({ server: server_, insecureSkipTLSVerify: true });
  t.after(() => skip.close());
  assert.equal((await skip.version()).gitVersion, "v1.29.0");
  assert.equal(auth.at(-1), "", "no token configured, none sent");
});
