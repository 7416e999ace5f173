import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import {
  HistoryRequestSchema,
  ObjectService,
  PlacementChangeListSchema,
  type PlacementChangeList,
} from "@flotilla/proto";
import { grpcServiceDefinition } from "@flotilla/proto/grpc";
import { eventually, freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import type { AnyResourceBinding } from "@flotilla/api";
import { buildGateway, type Gateway } from "../app.js";
import { TOKENS, grpcAuth, testGatewayDeps } from "../access.test-support.js";

const RBS = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings";
const CRBS = "/apis/work.karmada.io/v1alpha2/clusterresourcebindings";
const RBAC = "/apis/rbac.authorization.k8s.io/v1";

const rb = (name: string): AnyResourceBinding => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ResourceBinding",
  metadata: { name, namespace: "default" },
  spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", name, namespace: "default" }, replicas: 3 },
});
const crb = (name: string): AnyResourceBinding => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ClusterResourceBinding",
  metadata: { name },
  spec: { resource: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name } },
});
const scheduled = (trigger: string) => ({
  conditions: [{ type: "Scheduled", status: "True", reason: "Success", message: "Binding has been scheduled successfully.", lastTransitionTime: "2026-01-01T00:00:00Z" }],
  schedulingDiagnosis: { time: new Date().toISOString(), trigger, result: "Success", clustersTotal: 3 },
});

describe("placement history over REST and gRPC", () => {
  let db: TestDatabase;
  let gw: Gateway;
  let bounded: Gateway;
  let url: string;
  let boundedUrl: string;
  let grpcAddress: string;
  before(async () => {
    db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    const deps = testGatewayDeps(store);
    gw = buildGateway(deps);
    ({ url, grpcAddress } = (await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 })) as { url: string; grpcAddress: string });
    bounded = buildGateway({ ...deps, access: { ...deps.access, authorizer: deps.access.authorizer }, settings: { ...deps.settings, placementHistory: { retentionMs: 3_600_000, maxEntries: 2 } } });
    boundedUrl = (await bounded.start({ host: "127.0.0.1", port: 0 })).url;
    // a binding placed by the scheduler and then moved by the taint manager, as the services write them
    const scheduler = store.as("service:scheduler");
    const web = await store.create(rb("web"));
    const placed = await scheduler.updateWithStatus({ ...web, spec: { ...web.spec, clusters: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }] }, status: scheduled("placementChanged") });
    await store.as("service:taint-manager").update({
      ...placed,
      spec: { ...placed.spec, clusters: [{ name: "member2", replicas: 2 }], gracefulEvictionTasks: [{ fromCluster: "member1", replicas: 1, reason: "TaintUntolerated", producer: "TaintManager", message: "not tolerated", purgeMode: "Gracefully" }] },
    });
    const c = await store.create(crb("viewer"));
    await scheduler.updateWithStatus({ ...c, spec: { ...c.spec, clusters: [{ name: "member1" }] }, status: scheduled("alwaysSchedule") });
  });
  after(async () => {
    await bounded.stop();
    await gw.stop();
    await db.drop();
  });

  const call = async (method: string, path: string, o: { token?: string; body?: unknown; type?: string; base?: string } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${o.token ?? TOKENS.admin}` };
    if (o.body !== undefined) headers["content-type"] = o.type ?? "application/json";
    const r = await fetch(`${o.base ?? url}${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined, text };
  };

  test("a ResourceBinding's history is a List of its placement changes, oldest first, each with trigger, reason and writer", async () => {
    const r = await call("GET", `${RBS}/web/history`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.apiVersion, r.body.kind], ["scheduling.flotilla.io/v1alpha1", "PlacementChangeList"]);
    assert.deepEqual({ ...r.body.binding, uid: typeof r.body.binding.uid }, { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", namespace: "default", name: "web", uid: "string" });
    const items = r.body.items as Array<Record<string, unknown>>;
    assert.deepEqual(
      items.map(({ time: _t, resourceVersion: _r, ...x }) => x),
      [
        { trigger: "placementChanged", reason: "Success", message: "Binding has been scheduled successfully.", actor: { kind: "Service", name: "scheduler" }, from: [], to: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }] },
        { trigger: "eviction", reason: "TaintUntolerated", message: "not tolerated", producer: "TaintManager", actor: { kind: "Service", name: "taint-manager" }, from: [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }], to: [{ name: "member2", replicas: 2 }] },
      ],
    );
    for (const i of items) assert.match(i.time as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test("a user's edit of spec.clusters through the gateway is recorded as that user's update", async () => {
    const p = await call("PATCH", `${RBS}/web`, { body: { spec: { clusters: [{ name: "member3", replicas: 2 }] } }, type: "application/merge-patch+json" });
    assert.equal(p.status, 200, p.text);
    const last = (await call("GET", `${RBS}/web/history`)).body.items.at(-1);
    assert.deepEqual([last.trigger, last.actor, last.from, last.to, last.resourceVersion], ["update", { kind: "User", name: "admin" }, [{ name: "member2", replicas: 2 }], [{ name: "member3", replicas: 2 }], p.body.metadata.resourceVersion]);
  });

  test("a ClusterResourceBinding's history comes through the same path", async () => {
    const r = await call("GET", `${CRBS}/viewer/history`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.binding.kind, "ClusterResourceBinding");
    assert.equal(r.body.binding.namespace, undefined);
    assert.deepEqual(r.body.items.map((i: { trigger: string; to: unknown }) => [i.trigger, i.to]), [["alwaysSchedule", [{ name: "member1" }]]]);
  });

  test("?limit= gives the newest changes; the gateway's retention bounds every answer", async () => {
    const one = await call("GET", `${RBS}/web/history?limit=1`);
    assert.deepEqual(one.body.items.map((i: { trigger: string }) => i.trigger), ["update"]);
    const all = await call("GET", `${RBS}/web/history?limit=0`);
    assert.equal(all.body.items.length, 3);
    const capped = await call("GET", `${RBS}/web/history?limit=50`, { base: boundedUrl });
    assert.deepEqual(capped.body.items.map((i: { trigger: string }) => i.trigger), ["eviction", "update"], "PLACEMENT_HISTORY_MAX_ENTRIES 2");
  });

  test("bad requests are 4xx Statuses naming what is wrong", async () => {
    const cases: Array<[string, string, string, number, string, string | undefined]> = [
      ["an unknown binding", "GET", `${RBS}/nope/history`, 404, "NotFound", undefined],
      ["an unknown cluster-scoped binding", "GET", `${CRBS}/nope/history`, 404, "NotFound", undefined],
      ["a kind without history", "GET", "/apis/apps/v1/namespaces/default/deployments/web/history", 404, "NotFound", undefined],
      ["a negative limit", "GET", `${RBS}/web/history?limit=-1`, 422, "Invalid", "limit"],
      ["a limit that is no number", "GET", `${RBS}/web/history?limit=ten`, 422, "Invalid", "limit"],
      ["a watch", "GET", `${RBS}/web/history?watch=true`, 400, "BadRequest", "watch"],
      ["a write", "PUT", `${RBS}/web/history`, 405, "MethodNotAllowed", undefined],
      ["a delete", "DELETE", `${RBS}/web/history`, 405, "MethodNotAllowed", undefined],
    ];
    for (const [what, method, path, code, reason, field] of cases) {
      const r = await call(method, path, method === "PUT" ? { body: {} } : {});
      assert.equal(r.status, code, `${what}: ${r.text}`);
      assert.deepEqual([r.body.kind, r.body.reason, r.body.code], ["Status", reason, code], what);
      if (field) assert.equal(r.body.details?.causes?.[0]?.field, field, what);
    }
  });

  test("RBAC asks for get on the history subresource: flotilla:view has it, a user without a role does not", async () => {
    const denied = await call("GET", `${RBS}/web/history`, { token: TOKENS.nobody });
    assert.equal(denied.status, 403);
    assert.match(denied.body.message, /cannot get resource "resourcebindings\/history" in API group "work.karmada.io" in the namespace "default"/);
    const binding = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "vi-views" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flotilla:view" }, subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "vi" }] };
    assert.equal((await call("POST", `${RBAC}/clusterrolebindings`, { body: binding })).status, 201);
    await eventually(async () => (await call("GET", `${CRBS}/viewer/history`, { token: TOKENS.viewer })).status === 200, { timeoutMs: 5000, message: "the viewer reads the history" });
    // a role with the binding but not its history
    const role = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "rb-only" }, rules: [{ apiGroups: ["work.karmada.io"], resources: ["resourcebindings"], verbs: ["get"] }] };
    assert.equal((await call("POST", `${RBAC}/clusterroles`, { body: role })).status, 201);
    const nb = { ...binding, metadata: { name: "nobody-rb" }, roleRef: { ...binding.roleRef, name: "rb-only" }, subjects: [{ ...binding.subjects[0]!, name: "nobody" }] };
    assert.equal((await call("POST", `${RBAC}/clusterrolebindings`, { body: nb })).status, 201);
    await eventually(async () => (await call("GET", `${RBS}/web`, { token: TOKENS.nobody })).status === 200, { timeoutMs: 5000, message: "nobody reads the binding" });
    assert.equal((await call("GET", `${RBS}/web/history`, { token: TOKENS.nobody })).status, 403);
  });

  test("discovery lists the history subresources", async () => {
    const r = await call("GET", "/apis/work.karmada.io/v1alpha2");
    const names = (r.body.resources as Array<{ name: string; verbs: string[] }>).filter((x) => x.name.endsWith("/history"));
    assert.deepEqual(names.map((x) => [x.name, x.verbs]), [["resourcebindings/history", ["get"]], ["clusterresourcebindings/history", ["get"]]]);
  });

  test("gRPC ObjectService.History answers the same List, authorized the same way", async () => {
    const Client = grpc.makeGenericClientConstructor(grpcServiceDefinition(ObjectService), "ObjectService");
    const client = new Client(grpcAddress, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (...a: unknown[]) => unknown>;
    const history = (key: Record<string, string>, md: grpc.Metadata, limit = 0) =>
      new Promise<{ err: grpc.ServiceError | null; res?: PlacementChangeList }>((resolve) =>
        (client.history as (r: unknown, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r?: PlacementChangeList) => void) => void).call(client, create(HistoryRequestSchema, { key: key as never, limit: BigInt(limit) }), md, (err, res) => resolve({ err, res })),
      );
    try {
      const rbKey = { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", namespace: "default", name: "web" };
      const ok = await history(rbKey, grpcAuth());
      assert.equal(ok.err, null);
      const rest = (await call("GET", `${RBS}/web/history`)).body;
      const { metadata: _m, ...restWithoutMeta } = rest;
      // the same content (proto JSON leaves out empty lists: the first change's `from`)
      assert.deepEqual(toJson(PlacementChangeListSchema, ok.res!), toJson(PlacementChangeListSchema, fromJson(PlacementChangeListSchema, restWithoutMeta)));
      assert.deepEqual(ok.res!.items.map((i) => [i.trigger, i.from.length, i.to.length]), [["placementChanged", 0, 2], ["eviction", 2, 1], ["update", 1, 1]]);
      const c = await history({ apiVersion: "work.karmada.io/v1alpha2", kind: "ClusterResourceBinding", name: "viewer" }, grpcAuth(), 1);
      assert.deepEqual([c.err, c.res!.binding!.kind, c.res!.items.map((i) => i.trigger)], [null, "ClusterResourceBinding", ["alwaysSchedule"]]);
      assert.equal((await history({ ...rbKey, name: "nope" }, grpcAuth())).err?.code, grpc.status.NOT_FOUND);
      assert.equal((await history({ apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "web" }, grpcAuth())).err?.code, grpc.status.INVALID_ARGUMENT);
      assert.equal((await history(rbKey, grpcAuth(), -1)).err?.code, grpc.status.INVALID_ARGUMENT);
      assert.equal((await history(rbKey, grpcAuth(TOKENS.nobody))).err?.code, grpc.status.PERMISSION_DENIED);
      assert.equal((await history(rbKey, new grpc.Metadata())).err?.code, grpc.status.UNAUTHENTICATED);
    } finally {
      client.close();
    }
  });
});
