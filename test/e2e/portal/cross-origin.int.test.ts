// A browser portal on another origin, in a real browser: Debian's chromium driven by playwright-core
// (no browser download). A page served from a listed origin (a static server on another port) calls
// the gateway's REST API with fetch and a bearer token (CORS: the browser's preflight is answered,
// the answers carry the origin) and its typed API over the Connect protocol. The Connect protocol
// is plain HTTP (a unary call is POST application/json to /<package.Service>/<Method>), so the page
// calls it with fetch as well, no client bundle needed. A page from an unlisted origin is blocked
// by the browser on both.
// Needs `chromium` (.ci/run installs it: apt-get install chromium) and Postgres.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";
import { silentLogger } from "@flotilla/log";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase } from "@flotilla/testkit";
import { RbacAuthorizer, TokenFileAuthenticator, buildGateway } from "@flotilla/gateway";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// a developer's machine without chromium skips it, saying why; CI must have it (the test fails there)
const skip = !existsSync(CHROMIUM) && !process.env.CI ? `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)` : false;
const TOKEN = "portal-admin-token";
const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";
const LIST = "/flotilla.gateway.v1.ObjectService/List";

/** A static server answering every path with an empty page: its origin is http://127.0.0.1:<its port>. */
async function staticServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>portal</title>"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** What the page's script could read (so the browser's CORS check let it), or how the browser refused it. */
type Answer = { status: number; body: string } | { blocked: string };

/** fetch() run in the page (so under its origin and the browser's CORS rules): the answer, or how the browser refused it. */
function pageFetch(page: Page, url: string, init: { method?: string; headers?: Record<string, string>; body?: string; credentials?: "include" | "omit" }): Promise<Answer> {
  return page.evaluate(
    async ([url, init]) => {
      try {
        const r = await fetch(url, init);
        return { status: r.status, body: await r.text() };
      } catch (e) {
        return { blocked: String(e) };
      }
    },
    [url, init] as const,
  );
}

test("a portal on a listed origin calls REST (fetch + bearer token) and Connect from a real browser; an unlisted origin is blocked", { skip }, async (t) => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  const [portal, other] = [await staticServer(), await staticServer()];
  const gw = buildGateway({
    store,
    log: silentLogger(),
    settings: { notReadyTolerationSeconds: 300, unreachableTolerationSeconds: 300 },
    ready: async () => true,
    access: { authenticator: new TokenFileAuthenticator(`${TOKEN},portal-admin,portal-admin-uid,"system:masters"`), authorizer: new RbacAuthorizer(store) },
    cors: { allowedOrigins: [portal.origin] },
  });
  const { url: api } = await gw.start({ host: "127.0.0.1", port: 0 });
  t.after(async () => {
    await gw.stop();
    await Promise.all([portal.close(), other.close()]);
    await db.drop();
  });
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(portal.origin);
  const auth = { authorization: `Bearer ${TOKEN}` };

  // REST: the Authorization and JSON Content-Type headers make the browser send a preflight first
  const created = await pageFetch(page, `${api}${CONFIGMAPS}`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "from-the-portal" }, data: { color: "blue" } }),
    credentials: "include",
  });
  assert.ok("status" in created, `the browser let the portal read the answer: ${JSON.stringify(created)}`);
  assert.equal(created.status, 201, created.body);
  const list = await pageFetch(page, `${api}${CONFIGMAPS}`, { headers: auth, credentials: "include" });
  assert.ok("status" in list && list.status === 200, JSON.stringify(list));
  assert.deepEqual((JSON.parse(list.body) as { items: { metadata: { name: string } }[] }).items.map((o) => o.metadata.name), ["from-the-portal"]);
  // a request without a token is authenticated as always: the portal reads its 401
  const anonymous = await pageFetch(page, `${api}${CONFIGMAPS}`, {});
  assert.ok("status" in anonymous && anonymous.status === 401, JSON.stringify(anonymous));

  // Connect: POST application/json to /flotilla.gateway.v1.ObjectService/List
  const call = (headers: Record<string, string>) =>
    pageFetch(page, `${api}${LIST}`, { method: "POST", headers: { ...headers, "content-type": "application/json", "connect-protocol-version": "1" }, body: JSON.stringify({ key: { apiVersion: "v1", kind: "ConfigMap", namespace: "default" } }) });
  const typed = await call(auth);
  assert.ok("status" in typed && typed.status === 200, JSON.stringify(typed));
  const items = (JSON.parse(typed.body) as { items: { template?: { metadata?: { name?: string }; data?: unknown } }[] }).items;
  assert.deepEqual(items.map((o) => [o.template?.metadata?.name, o.template?.data]), [["from-the-portal", { color: "blue" }]]);
  const refused = await call({});
  assert.ok("status" in refused && refused.status === 401, JSON.stringify(refused));
  assert.equal((JSON.parse(refused.body) as { code: string }).code, "unauthenticated");

  // a page from another origin: the browser blocks both (no CORS headers for it)
  const elsewhere = await browser.newPage();
  await elsewhere.goto(other.origin);
  const restBlocked = await pageFetch(elsewhere, `${api}${CONFIGMAPS}`, { headers: auth });
  assert.ok("blocked" in restBlocked, `REST from an unlisted origin: ${JSON.stringify(restBlocked)}`);
  const connectBlocked = await pageFetch(elsewhere, `${api}${LIST}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: "{}" });
  assert.ok("blocked" in connectBlocked, `Connect from an unlisted origin: ${JSON.stringify(connectBlocked)}`);
  assert.deepEqual(errors, [], "no script error in the pages");
});
