// Authentication before anything else, on both fronts: an anonymous caller learns nothing from the
// arguments it sends (no 400, no INVALID_ARGUMENT naming kinds), a gRPC Watch is refused at once and
// counts under the REST watch cap, and failed authentications are throttled per address across both.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { CreateRequestSchema, DeleteRequestSchema, GetRequestSchema, HistoryRequestSchema, ListRequestSchema, ObjectService, UpdateRequestSchema, WatchRequestSchema } from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { ObjectStore } from "@flotilla/store";
import { eventually, freshDatabase } from "@flotilla/testkit";
import { TOKENS, bearer, grpcAuth, testGatewayDeps } from "./access.test-support.js";
import { buildGateway } from "./app.js";
import type { LimitSettings } from "./http/auth.js";

type Client = grpc.Client & Record<string, (...a: unknown[]) => unknown>;
type Answer = { code: grpc.status; details: string; status?: { reason?: string; details?: { retryAfterSeconds?: number } } };

const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";
const CONFIGMAPS = { apiVersion: "v1", kind: "ConfigMap", namespace: "default" };
/** A kind nobody serves: with a token it is INVALID_ARGUMENT `unknown kind "y" in "x"`; without, nothing but UNAUTHENTICATED. */
const UNKNOWN = { apiVersion: "x", kind: "y", namespace: "default", name: "z" };
const anonymous = () => new grpc.Metadata();

/** A gateway with both fronts listening, and gRPC clients for it (one sends raw bytes as the request). */
async function startGateway(limits: LimitSettings) {
  const db = await freshDatabase();
  const gw = buildGateway({ ...testGatewayDeps(new ObjectStore(db.sql)), limits });
  const { url, grpcAddress } = (await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 })) as { url: string; grpcAddress: string };
  const def = grpcServiceDefinition(ObjectService);
  const client = new (grpc.makeGenericClientConstructor(def, "ObjectService"))(grpcAddress, grpc.credentials.createInsecure()) as Client;
  const rawDef = Object.fromEntries(Object.entries(def).map(([n, m]) => [n, { ...m, requestSerialize: (b: Buffer) => b }]));
  const raw = new (grpc.makeGenericClientConstructor(rawDef, "ObjectService"))(grpcAddress, grpc.credentials.createInsecure()) as Client;
  return {
    gw,
    url,
    client,
    raw,
    async stop() {
      client.close();
      raw.close();
      await gw.stop();
      await db.drop();
    },
  };
}

function answerOf(e: grpc.ServiceError | null): Answer {
  if (!e) return { code: grpc.status.OK, details: "" };
  const s = e.metadata?.get("k8s-status")[0];
  return { code: e.code, details: e.details, status: s === undefined ? undefined : JSON.parse(String(s)) };
}

function unary(c: Client, method: string, req: unknown, md: grpc.Metadata): Promise<Answer> {
  return new Promise((resolve) =>
    (c[method] as (r: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void).call(c, req, md, { deadline: new Date(Date.now() + 5000) }, (e) => resolve(answerOf(e))),
  );
}

/** A Watch stream, and how it ended: its status (DEADLINE_EXCEEDED after `deadlineMs` if it is held open) and when. */
function watch(c: Client, key: Record<string, string>, md: grpc.Metadata, deadlineMs = 5000) {
  const started = Date.now();
  const stream = (c.watch as (r: unknown, md: grpc.Metadata, o: grpc.CallOptions) => grpc.ClientReadableStream<unknown>).call(c, create(WatchRequestSchema, { key }), md, { deadline: new Date(started + deadlineMs) });
  const ended = new Promise<Answer & { afterMs: number }>((resolve) => {
    stream.on("data", () => {});
    stream.on("error", (e: grpc.ServiceError) => resolve({ ...answerOf(e), afterMs: Date.now() - started }));
    stream.on("status", (s: grpc.StatusObject) => {
      if (s.code === grpc.status.OK) resolve({ code: s.code, details: s.details, afterMs: Date.now() - started });
    });
  });
  return { stream, ended };
}

/** The status a WebSocket upgrade request is answered with. */
function upgrade(url: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { headers: { ...headers, connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" } });
    req.on("response", (r) => (r.resume(), resolve(r.statusCode ?? 0)));
    req.on("upgrade", (r, socket) => (socket.destroy(), resolve(r.statusCode ?? 0)));
    req.on("error", reject);
    req.end();
  });
}

describe("authentication before arguments, on both fronts", () => {
  let g: Awaited<ReturnType<typeof startGateway>>;
  before(async () => {
    g = await startGateway({ ratePerSecond: 0, burst: 0, watchesPerUser: 1, failedAuthPerSecond: 1000 });
  });
  after(() => g.stop());

  test("an anonymous or bogus gRPC call gets UNAUTHENTICATED whatever it sends, and learns no kind; with a token the same call is INVALID_ARGUMENT", async () => {
    const withToken = await unary(g.client, "get", create(GetRequestSchema, { key: UNKNOWN }), grpcAuth());
    assert.equal(grpc.status[withToken.code], "INVALID_ARGUMENT");
    assert.match(withToken.details, /unknown kind "y" in "x"/);
    const object = { object: { case: "template", value: { apiVersion: "x", kind: "y", metadata: { name: "z", namespace: "default" } } } };
    const calls: Array<[string, Client, string, unknown]> = [
      ["get of an unknown kind", g.client, "get", create(GetRequestSchema, { key: UNKNOWN })],
      ["list of an unknown kind", g.client, "list", create(ListRequestSchema, { key: UNKNOWN })],
      ["list with a malformed label selector", g.client, "list", create(ListRequestSchema, { key: CONFIGMAPS, labelSelector: "a in (" })],
      ["delete of an unknown kind", g.client, "delete", create(DeleteRequestSchema, { key: UNKNOWN })],
      ["history of a kind without one", g.client, "history", create(HistoryRequestSchema, { key: { ...CONFIGMAPS, name: "x" } })],
      ["create of an unknown kind", g.client, "create", create(CreateRequestSchema, { object } as never)],
      ["update without an object", g.client, "update", create(UpdateRequestSchema, {})],
      ["bytes that are no message", g.raw, "get", Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])],
    ];
    for (const md of [anonymous, () => grpcAuth("bogus")]) {
      for (const [what, c, method, req] of calls) {
        const r = await unary(c, method, req, md());
        assert.equal(grpc.status[r.code], "UNAUTHENTICATED", `${what}: ${r.details}`);
        assert.doesNotMatch(r.details, /kind|selector|message/, what);
        assert.equal(r.status?.reason, "Unauthorized", what);
      }
    }
  });

  test("an anonymous gRPC Watch is refused with UNAUTHENTICATED at once and closed, whatever its key", async () => {
    for (const key of [{ ...CONFIGMAPS }, UNKNOWN]) {
      for (const md of [anonymous(), grpcAuth("bogus")]) {
        const r = await watch(g.client, key, md).ended;
        assert.equal(grpc.status[r.code], "UNAUTHENTICATED", `${JSON.stringify(key)}: ${r.details}`);
        assert.ok(r.afterMs < 2000, `answered after ${r.afterMs} ms`);
      }
    }
  });

  test("a Watch refused after authentication (no permission, an unknown kind) ends at once too", async () => {
    const denied = await watch(g.client, CONFIGMAPS, grpcAuth(TOKENS.nobody)).ended;
    assert.equal(grpc.status[denied.code], "PERMISSION_DENIED", denied.details);
    const unknown = await watch(g.client, UNKNOWN, grpcAuth()).ended;
    assert.equal(grpc.status[unknown.code], "INVALID_ARGUMENT", unknown.details);
    for (const r of [denied, unknown]) assert.ok(r.afterMs < 2000, `answered after ${r.afterMs} ms`);
  });

  test("REST authenticates before it finds a URL malformed or an upgrade unserved: 401 for an anonymous caller, the 400 for one with a token", async () => {
    for (const bad of ["%", "%zz", "%ED%A0%80"]) {
      for (const headers of [{}, bearer("bogus")]) {
        const r = await fetch(`${g.url}${DEPLOY}/${bad}`, { headers });
        const s = (await r.json()) as { kind: string; reason: string; code: number };
        assert.equal(r.status, 401, bad);
        assert.deepEqual([s.kind, s.reason, s.code], ["Status", "Unauthorized", 401]);
      }
      const r = await fetch(`${g.url}${DEPLOY}/${bad}`, { headers: bearer() });
      const s = (await r.json()) as { kind: string; reason: string; code: number };
      assert.equal(r.status, 400, bad);
      assert.deepEqual([s.kind, s.reason, s.code], ["Status", "BadRequest", 400]);
    }
    const query = await fetch(`${g.url}${DEPLOY}?labelSelector=a%00`);
    assert.equal(query.status, 401, "a malformed query too");
    // a WebSocket upgrade the gateway does not serve (kubectl exec)
    const exec = "/api/v1/namespaces/default/pods/web/exec?command=sh";
    assert.equal(await upgrade(g.url, exec), 401);
    assert.equal(await upgrade(g.url, exec, bearer("bogus")), 401);
    assert.equal(await upgrade(g.url, exec, bearer()), 400);
  });
});

describe("gRPC watches under the REST watch cap", () => {
  let g: Awaited<ReturnType<typeof startGateway>>;
  const restWatch = async () => {
    const ac = new AbortController();
    const r = await fetch(`${g.url}/api/v1/namespaces/default/configmaps?watch=true`, { headers: bearer(TOKENS.viewer), signal: ac.signal });
    return { status: r.status, close: () => ac.abort() };
  };
  before(async () => {
    g = await startGateway({ ratePerSecond: 0, burst: 0, watchesPerUser: 1, failedAuthPerSecond: 1000 });
    const binding = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "vi-views" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flotilla:view" }, subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "vi" }] };
    const r = await fetch(`${g.url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, { method: "POST", headers: { ...bearer(), "content-type": "application/json" }, body: JSON.stringify(binding) });
    assert.equal(r.status, 201);
    await eventually(async () => (await unary(g.client, "list", create(ListRequestSchema, { key: CONFIGMAPS }), grpcAuth(TOKENS.viewer))).code === grpc.status.OK, { timeoutMs: 5000, message: "vi may list" });
  });
  after(() => g.stop());

  test("an open gRPC Watch holds one of the user's watch slots: a second one, over gRPC or REST, is refused until it closes", async () => {
    const first = watch(g.client, CONFIGMAPS, grpcAuth(TOKENS.viewer), 60_000);
    // the slot is taken once the watch is authorized: a REST watch of the same user is refused then
    await eventually(async () => {
      const w = await restWatch();
      w.close();
      return w.status === 429;
    }, { timeoutMs: 5000, message: "the gRPC watch holds vi's slot" });
    const second = await watch(g.client, CONFIGMAPS, grpcAuth(TOKENS.viewer)).ended;
    assert.equal(grpc.status[second.code], "RESOURCE_EXHAUSTED", second.details);
    assert.equal(second.status?.reason, "TooManyRequests");
    assert.ok((second.status?.details?.retryAfterSeconds ?? 0) >= 1, "with retry info");
    assert.ok(second.afterMs < 2000, `answered after ${second.afterMs} ms`);
    // the administrator (system:masters) is exempt
    const admin = watch(g.client, CONFIGMAPS, grpcAuth(TOKENS.admin), 60_000);
    first.stream.cancel();
    assert.equal(grpc.status[(await first.ended).code], "CANCELLED");
    // closing it gives the slot back
    const rest = await eventually(async () => {
      const w = await restWatch();
      if (w.status === 200) return w;
      w.close();
      return undefined;
    }, { timeoutMs: 5000, message: "the slot is free again" });
    // and a REST watch's slot is one a gRPC watch needs
    const third = await watch(g.client, CONFIGMAPS, grpcAuth(TOKENS.viewer)).ended;
    assert.equal(grpc.status[third.code], "RESOURCE_EXHAUSTED", third.details);
    rest.close();
    admin.stream.cancel();
    assert.equal(grpc.status[(await admin.ended).code], "CANCELLED", "the administrator's watch was open all along");
  });
});

describe("failed authentications throttled alike on both fronts", () => {
  /** Sends `n` bogus tokens one after another: the index of the first throttled answer and the seconds until it, how many were refused (not throttled), the seconds in all. */
  async function bogusTokens(send: (token: string) => Promise<"refused" | "throttled">, n = 100) {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    let first: { index: number; seconds: number } | undefined;
    let refused = 0;
    for (let i = 0; i < n; i++) {
      if ((await send(`bogus-${i}`)) === "refused") refused++;
      else first ??= { index: i, seconds: seconds() };
    }
    return { first: first ?? { index: n, seconds: seconds() }, refused, seconds: seconds() };
  }
  const limits = { ratePerSecond: 50, burst: 200, watchesPerUser: 100, failedAuthPerSecond: 5 };
  const rest = (url: string) => async (token: string) => {
    const r = await fetch(`${url}/apis`, { headers: bearer(token) });
    assert.ok(r.status === 401 || r.status === 429, String(r.status));
    return r.status === 429 ? ("throttled" as const) : ("refused" as const);
  };
  const overGrpc = (client: Client) => async (token: string) => {
    const r = await unary(client, "get", create(GetRequestSchema, { key: { ...CONFIGMAPS, name: "x" } }), grpcAuth(token));
    assert.ok(r.code === grpc.status.UNAUTHENTICATED || r.code === grpc.status.RESOURCE_EXHAUSTED, r.details);
    return r.code === grpc.status.RESOURCE_EXHAUSTED ? ("throttled" as const) : ("refused" as const);
  };
  /** The burst is 4 × failedAuthPerSecond (20), and the bucket refills at failedAuthPerSecond while the calls are made. */
  const assertBurst = (r: Awaited<ReturnType<typeof bogusTokens>>, front: string) => {
    const { index, seconds } = r.first;
    assert.ok(index >= 20 && index <= 20 + Math.ceil(limits.failedAuthPerSecond * seconds), `${front}: first throttled answer at ${index} after ${seconds.toFixed(3)} s`);
    assert.ok(r.refused <= 20 + Math.ceil(limits.failedAuthPerSecond * r.seconds), `${front}: ${r.refused} of 100 refused without throttling in ${r.seconds.toFixed(3)} s`);
  };

  test("100 bogus tokens over gRPC are RESOURCE_EXHAUSTED after as many as REST answers 401 before its 429, from one bucket per address", async () => {
    const a = await startGateway(limits);
    const b = await startGateway(limits);
    try {
      const viaRest = await bogusTokens(rest(a.url));
      assertBurst(viaRest, "REST");
      // the same address's bucket, spent over REST, throttles its gRPC calls (RESOURCE_EXHAUSTED with retry info)
      const next = await unary(a.client, "get", create(GetRequestSchema, { key: UNKNOWN }), grpcAuth("bogus"));
      assert.equal(grpc.status[next.code], "RESOURCE_EXHAUSTED", next.details);
      assert.equal(next.status?.reason, "TooManyRequests");
      assert.ok((next.status?.details?.retryAfterSeconds ?? 0) >= 1);
      // and a malformed URL without a token is the 429 too, with Retry-After
      const url = await fetch(`${a.url}${DEPLOY}/%zz`);
      assert.equal(url.status, 429);
      assert.ok(Number(url.headers.get("retry-after")) >= 1);
      // a caller with a valid token is not held back by others' failures
      assert.equal(grpc.status[(await unary(a.client, "get", create(GetRequestSchema, { key: { ...CONFIGMAPS, name: "x" } }), grpcAuth())).code], "NOT_FOUND");

      const viaGrpc = await bogusTokens(overGrpc(b.client));
      assertBurst(viaGrpc, "gRPC");
      assert.ok(Math.abs(viaGrpc.first.index - viaRest.first.index) <= Math.ceil(limits.failedAuthPerSecond * Math.max(viaGrpc.first.seconds, viaRest.first.seconds)), `REST throttled from ${viaRest.first.index} on, gRPC from ${viaGrpc.first.index} on`);
      // spent over gRPC, the bucket throttles REST
      assert.equal((await fetch(`${b.url}/apis`, { headers: bearer("bogus") })).status, 429);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
