// CORS for browser portals on other origins: off by default; with an allow-list, a listed origin's
// preflight is answered without authentication, its requests (authenticated as always) carry
// Access-Control-Allow-Origin echoing it and Allow-Credentials; any other origin gets no CORS header.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase } from "@flotilla/testkit";
import { bearer, testGatewayDeps } from "../access.test-support.js";
import { buildGateway, type Gateway } from "../app.js";
import { CORS_MAX_AGE_SECONDS, parseAllowedOrigins } from "./cors.js";

const PORTAL = "https://portal.example.com";
const OTHER = "https://evil.example.com";
const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";
const CORS_HEADERS = ["access-control-allow-origin", "access-control-allow-credentials", "access-control-allow-methods", "access-control-allow-headers", "access-control-expose-headers", "access-control-max-age"];
const corsHeadersOf = (h: Record<string, unknown>) => Object.keys(h).filter((k) => CORS_HEADERS.includes(k));
const preflight = (origin: string, method = "GET", headers = "authorization,content-type") => ({ "access-control-request-method": method, "access-control-request-headers": headers, origin });

describe("CORS", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let on: Gateway;
  let off: Gateway;
  before(async () => {
    db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    on = buildGateway({ ...testGatewayDeps(store), cors: { allowedOrigins: [PORTAL, "http://127.0.0.1:5173"] } });
    off = buildGateway(testGatewayDeps(store));
    await Promise.all([on.http.ready(), off.http.ready()]);
  });
  after(async () => {
    await on.http.close();
    await off.http.close();
    await db.drop();
  });

  test("a listed origin's preflight is answered 204 without a token: methods, headers incl. authorization and content-type, max-age, credentials", async () => {
    const r = await on.http.inject({ method: "OPTIONS", url: DEPLOY, headers: preflight(PORTAL, "POST") });
    assert.equal(r.statusCode, 204, r.body);
    assert.equal(r.headers["access-control-allow-origin"], PORTAL);
    assert.equal(r.headers["access-control-allow-credentials"], "true");
    const methods = String(r.headers["access-control-allow-methods"]).split(/,\s*/);
    for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE"]) assert.ok(methods.includes(m), `${m} in ${methods}`);
    const allowed = String(r.headers["access-control-allow-headers"]).toLowerCase().split(/,\s*/);
    for (const h of ["authorization", "content-type", "connect-protocol-version", "x-grpc-web"]) assert.ok(allowed.includes(h), `${h} in ${allowed}`);
    assert.equal(r.headers["access-control-max-age"], String(CORS_MAX_AGE_SECONDS));
    assert.match(String(r.headers.vary), /Origin/i);
  });

  test("a listed origin's request is authenticated as always, and its answers (a 401 included) carry its CORS headers", async () => {
    const ok = await on.http.inject({ method: "GET", url: DEPLOY, headers: { origin: PORTAL, ...bearer() } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.headers["access-control-allow-origin"], PORTAL);
    assert.equal(ok.headers["access-control-allow-credentials"], "true");
    assert.match(String(ok.headers["access-control-expose-headers"]), /retry-after/i);
    assert.match(String(ok.headers.vary), /Origin/i);
    const anonymous = await on.http.inject({ method: "GET", url: DEPLOY, headers: { origin: PORTAL } });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.headers["access-control-allow-origin"], PORTAL, "the portal's script can read the 401");
    const second = await on.http.inject({ method: "GET", url: DEPLOY, headers: { origin: "http://127.0.0.1:5173", ...bearer() } });
    assert.equal(second.headers["access-control-allow-origin"], "http://127.0.0.1:5173", "the listed origin itself, never a list or *");
  });

  test("an unlisted origin gets no CORS header: its preflight is not answered for it, its request is served as to any client without CORS", async () => {
    const pre = await on.http.inject({ method: "OPTIONS", url: DEPLOY, headers: preflight(OTHER) });
    assert.notEqual(pre.statusCode, 204);
    assert.deepEqual(corsHeadersOf(pre.headers), []);
    const get = await on.http.inject({ method: "GET", url: DEPLOY, headers: { origin: OTHER, ...bearer() } });
    assert.equal(get.statusCode, 200);
    assert.deepEqual(corsHeadersOf(get.headers), [], "the browser blocks the answer");
    assert.match(String(get.headers.vary), /Origin/i, "a cache keeps answers per origin");
    for (const origin of [`${PORTAL}/`, "https://portal.example.com.evil.com", "null", PORTAL.toUpperCase()]) {
      const r = await on.http.inject({ method: "OPTIONS", url: DEPLOY, headers: preflight(origin) });
      assert.deepEqual(corsHeadersOf(r.headers), [], `${origin}: exact match only`);
    }
    const none = await on.http.inject({ method: "GET", url: DEPLOY, headers: bearer() });
    assert.deepEqual(corsHeadersOf(none.headers), [], "no Origin, no CORS headers");
  });

  test("off by default: no CORS headers for any origin, and a preflight is one more anonymous request (401)", async () => {
    const pre = await off.http.inject({ method: "OPTIONS", url: DEPLOY, headers: preflight(PORTAL) });
    assert.equal(pre.statusCode, 401);
    assert.deepEqual(corsHeadersOf(pre.headers), []);
    const get = await off.http.inject({ method: "GET", url: DEPLOY, headers: { origin: PORTAL, ...bearer() } });
    assert.equal(get.statusCode, 200);
    assert.deepEqual(corsHeadersOf(get.headers), []);
  });

  test("CORS_ALLOWED_ORIGINS takes exact origins only", () => {
    assert.deepEqual(parseAllowedOrigins(""), []);
    assert.deepEqual(parseAllowedOrigins(` ${PORTAL}, http://localhost:3000 ,${PORTAL}`), [PORTAL, "http://localhost:3000"]);
    for (const bad of ["*", `${PORTAL}/`, `${PORTAL}/portal`, "portal.example.com", "ftp://x.example.com", "https://*.example.com"]) assert.throws(() => parseAllowedOrigins(bad), /not an origin/, bad);
  });
});
