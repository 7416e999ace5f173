// ObjectService over the Connect protocol and gRPC-Web on the REST port, beside gRPC: the same
// methods and the same guard (authenticated first, RBAC, the same codes and k8s-status Status on
// errors), called with @connectrpc/connect-node's Connect and gRPC-Web transports; the CORS
// allow-list covers it too.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ObjectService } from "@flotilla/proto";
import { ObjectStore } from "@flotilla/store";
import { freshDatabase } from "@flotilla/testkit";
import { TOKENS, testGatewayDeps } from "../access.test-support.js";
import { buildGateway, type Gateway } from "../app.js";

const PORTAL = "https://portal.example.com";
const CONFIGMAPS = { apiVersion: "v1", kind: "ConfigMap", namespace: "default" };
const UNKNOWN = { apiVersion: "x", kind: "y", namespace: "default", name: "z" };
const auth = (token: string = TOKENS.admin) => ({ headers: { authorization: `Bearer ${token}` } });

/** The code and Kubernetes Status a call failed with. */
async function failure(p: Promise<unknown>): Promise<{ code: Code; reason?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    const ce = ConnectError.from(e);
    const s = ce.metadata.get("k8s-status");
    return { code: ce.code, reason: s ? (JSON.parse(s) as { reason?: string }).reason : undefined, message: ce.rawMessage };
  }
  throw new Error("the call succeeded");
}

describe("ObjectService over Connect and gRPC-Web", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let gw: Gateway;
  let url: string;
  before(async () => {
    db = await freshDatabase();
    gw = buildGateway({ ...testGatewayDeps(new ObjectStore(db.sql)), cors: { allowedOrigins: [PORTAL] } });
    ({ url } = await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 }));
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });

  for (const [protocol, transport] of [
    ["Connect", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
    ["gRPC-Web", () => createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" })],
  ] as [string, () => Transport][]) {
    describe(protocol, () => {
      let client: Client<typeof ObjectService>;
      before(() => {
        client = createClient(ObjectService, transport());
      });

      test("an authenticated call is answered: create, get, list", async () => {
        const name = `cm-${protocol.toLowerCase().replace(/\W/g, "")}`;
        const created = await client.create({ object: { object: { case: "template", value: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { a: "1" } } } } }, auth());
        assert.equal(created.object.case, "template");
        const got = await client.get({ key: { ...CONFIGMAPS, name } }, auth());
        assert.deepEqual((got.object.value as { data?: unknown }).data, { a: "1" });
        const list = await client.list({ key: CONFIGMAPS }, auth());
        assert.ok(list.items.some((o) => (o.object.value as { metadata?: { name?: string } }).metadata?.name === name));
        assert.ok(list.resourceVersion);
      });

      test("an anonymous or bogus-token call is Unauthenticated, before its arguments are read", async () => {
        for (const opts of [{}, auth("bogus")]) {
          const f = await failure(client.list({ key: CONFIGMAPS }, opts));
          assert.equal(f.code, Code.Unauthenticated, JSON.stringify(f));
          assert.equal(f.reason, "Unauthorized");
          assert.equal((await failure(client.get({ key: UNKNOWN }, opts))).code, Code.Unauthenticated, "no unknown-kind answer to an anonymous caller");
        }
        const watch = client.watch({ key: CONFIGMAPS }, {});
        assert.equal((await failure((async () => { for await (const _ of watch) void _; })())).code, Code.Unauthenticated, "an anonymous Watch too");
      });

      test("errors carry the gRPC front's codes and Kubernetes Status: InvalidArgument, NotFound, PermissionDenied", async () => {
        const unknown = await failure(client.get({ key: UNKNOWN }, auth()));
        assert.equal(unknown.code, Code.InvalidArgument);
        assert.match(unknown.message, /unknown kind "y" in "x"/);
        const missing = await failure(client.get({ key: { ...CONFIGMAPS, name: "nope" } }, auth()));
        assert.deepEqual([missing.code, missing.reason], [Code.NotFound, "NotFound"]);
        const denied = await failure(client.list({ key: CONFIGMAPS }, auth(TOKENS.viewer)));
        assert.deepEqual([denied.code, denied.reason], [Code.PermissionDenied, "Forbidden"]);
      });

      test("Watch streams the events of the kind", async () => {
        const ac = new AbortController();
        const name = `watched-${protocol.toLowerCase().replace(/\W/g, "")}`;
        const events = client.watch({ key: CONFIGMAPS }, { ...auth(), signal: ac.signal });
        const seen = (async () => {
          for await (const e of events) if ((e.object?.object.value as { metadata?: { name?: string } }).metadata?.name === name) return e.type;
          return undefined;
        })();
        await new Promise((r) => setTimeout(r, 300));
        await client.create({ object: { object: { case: "template", value: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } } } } }, auth());
        assert.equal(await seen, "ADDED");
        ac.abort();
      });
    });
  }

  test("an open Connect Watch ends when the gateway stops, so the stop does not wait for the client", async () => {
    const db2 = await freshDatabase();
    const gw2 = buildGateway(testGatewayDeps(new ObjectStore(db2.sql)));
    const { url: url2 } = await gw2.start({ host: "127.0.0.1", port: 0 });
    try {
      const client = createClient(ObjectService, createConnectTransport({ baseUrl: url2, httpVersion: "1.1" }));
      const events = client.watch({ key: CONFIGMAPS }, auth());
      const ended = (async () => {
        try {
          for await (const _ of events) void _;
        } catch {
          // ended by the server
        }
      })();
      await new Promise((r) => setTimeout(r, 300));
      const started = Date.now();
      await gw2.stop();
      await ended;
      assert.ok(Date.now() - started < 5000, `stopped in ${Date.now() - started} ms`);
    } finally {
      await db2.drop();
    }
  });

  test("the REST server's CORS covers the Connect procedures: a listed origin's preflight is answered, its calls carry its headers", async () => {
    const path = `${url}/${ObjectService.typeName}/List`;
    const pre = await fetch(path, { method: "OPTIONS", headers: { origin: PORTAL, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type,connect-protocol-version" } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), PORTAL);
    const call = await fetch(path, { method: "POST", headers: { origin: PORTAL, "content-type": "application/json", authorization: `Bearer ${TOKENS.admin}` }, body: JSON.stringify({ key: CONFIGMAPS }) });
    assert.equal(call.status, 200, await call.clone().text());
    assert.equal(call.headers.get("access-control-allow-origin"), PORTAL);
    assert.ok(Array.isArray(((await call.json()) as { items?: unknown[] }).items));
    const other = await fetch(path, { method: "POST", headers: { origin: "https://evil.example.com", "content-type": "application/json" }, body: JSON.stringify({ key: CONFIGMAPS }) });
    assert.equal(other.status, 401, "Connect's unauthenticated");
    assert.equal(other.headers.get("access-control-allow-origin"), null);
  });
});
