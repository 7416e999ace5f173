import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { parseAllDocuments } from "yaml";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import type { KubeObject } from "@flotilla/api";
import { buildGateway, type Gateway } from "../app.js";
import { fromProtoObject, toProtoObject } from "../grpc.js";
import { TOKENS, bearer, injectAsAdmin, testGatewayDeps } from "../access.test-support.js";

const CTP = "/apis/policy.karmada.io/v1alpha1/clustertaintpolicies";

describe("ClusterTaintPolicy over REST and gRPC", () => {
  let db: TestDatabase;
  const gws: Gateway[] = [];
  let gw: Gateway;
  let strict: Gateway;
  before(async () => {
    db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    const deps = testGatewayDeps(store);
    gw = buildGateway({ ...deps, settings: { ...deps.settings, allowNoExecuteTaintPolicy: true } });
    strict = buildGateway(deps);
    // the permissive one is started, so the default roles exist and RBAC objects are followed
    await gw.start({ host: "127.0.0.1", port: 0, grpcPort: 0 });
    await strict.http.ready();
    for (const g of [gw, strict]) {
      injectAsAdmin(g.http);
      gws.push(g);
    }
  });
  after(async () => {
    for (const g of gws) await g.stop();
    await db.drop();
  });
  const inject = (g: Gateway, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    g.http.inject({
      method: method as "GET",
      url,
      payload: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      headers: { ...(body === undefined ? {} : { "content-type": typeof body === "string" ? "application/yaml" : "application/json" }), ...headers },
    });

  test("the example policies are stored cluster-scoped, read back, listed and deleted", async () => {
    const docs = parseAllDocuments(await readFile(new URL("../../../../examples/cluster-taint-policy.yaml", import.meta.url), "utf8")).map((d) => d.toJSON() as KubeObject);
    assert.equal(docs.length, 3);
    for (const d of docs) {
      const res = await inject(gw, "POST", CTP, d);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().metadata.namespace, undefined);
      assert.deepEqual(res.json().spec, d.spec, "stored as written (no defaults)");
    }
    const got = await inject(gw, "GET", `${CTP}/detect-cluster-not-ready`);
    assert.equal(got.statusCode, 200);
    assert.deepEqual(got.json().spec.taints, [{ key: "example.com/not-ready", effect: "NoSchedule" }]);
    const list = await inject(gw, "GET", CTP);
    assert.equal(list.json().kind, "ClusterTaintPolicyList");
    assert.deepEqual(list.json().items.map((o: KubeObject) => o.metadata.name).sort(), ["detect-cluster-not-ready", "evict-from-not-ready", "evict-from-unreachable"]);
    assert.equal((await inject(gw, "DELETE", `${CTP}/evict-from-unreachable`)).statusCode, 200);
    assert.equal((await inject(gw, "GET", `${CTP}/evict-from-unreachable`)).statusCode, 404);
  });

  test("a namespaced path for the kind is 404", async () => {
    assert.equal((await inject(gw, "GET", "/apis/policy.karmada.io/v1alpha1/namespaces/default/clustertaintpolicies")).statusCode, 404);
  });

  test("an invalid policy is 422 naming every bad field, nothing is stored", async () => {
    const res = await inject(gw, "POST", CTP, {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "ClusterTaintPolicy",
      metadata: { name: "bad" },
      spec: {
        addOnConditions: [{ conditionType: "Ready", operator: "Exists", statusValues: ["False"] }],
        taints: [
          { key: "k", effect: "NoSchedule" },
          { key: "k", effect: "NoSchedule", value: "v" },
          { key: "x", effect: "PreferNoExecute" },
        ],
      },
    });
    assert.equal(res.statusCode, 422, res.body);
    const body = res.json();
    assert.equal(body.kind, "Status");
    assert.equal(body.reason, "Invalid");
    assert.deepEqual(body.details.causes.map((c: { field: string }) => c.field).sort(), ["spec.addOnConditions[0].operator", "spec.taints[0]", "spec.taints[2].effect"]);
    assert.equal((await inject(gw, "GET", `${CTP}/bad`)).statusCode, 404);
  });

  test("an unknown field is 422 naming it", async () => {
    const res = await inject(gw, "POST", CTP, { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterTaintPolicy", metadata: { name: "typo" }, spec: { taint: [], taints: [{ key: "k", effect: "NoSchedule" }] } });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field), ["spec.taint"]);
  });

  test("a NoExecute policy is refused unless ALLOW_NO_EXECUTE_TAINT_POLICY is on, create and update alike", async () => {
    const p = { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterTaintPolicy", metadata: { name: "evict" }, spec: { addOnConditions: [{ conditionType: "Ready", operator: "In", statusValues: ["False"] }], taints: [{ key: "example.com/down", effect: "NoExecute" }] } };
    const refused = await inject(strict, "POST", CTP, p);
    assert.equal(refused.statusCode, 422, refused.body);
    assert.deepEqual(refused.json().details.causes.map((c: { field: string; reason: string }) => `${c.field} ${c.reason}`), ["spec.taints[0] FieldValueForbidden"]);
    assert.match(refused.json().details.causes[0].message, /NoExecute effect is not allowed/);

    const ok = { ...p, spec: { ...p.spec, taints: [{ key: "example.com/down", effect: "NoSchedule" }] } };
    const created = await inject(strict, "POST", CTP, ok);
    assert.equal(created.statusCode, 201, created.body);
    const patched = await inject(strict, "PATCH", `${CTP}/evict`, [{ op: "replace", path: "/spec/taints/0/effect", value: "NoExecute" }], { "content-type": "application/json-patch+json" });
    assert.equal(patched.statusCode, 422, patched.body);
    assert.equal((await inject(strict, "GET", `${CTP}/evict`)).json().spec.taints[0].effect, "NoSchedule", "the refused update changed nothing");
    const allowed = await inject(gw, "PATCH", `${CTP}/evict`, [{ op: "replace", path: "/spec/taints/0/effect", value: "NoExecute" }], { "content-type": "application/json-patch+json" });
    assert.equal(allowed.statusCode, 200, allowed.body);
  });

  test("discovery, the OpenAPI document and the Table printer know the kind", async () => {
    const disc = (await inject(gw, "GET", "/apis/policy.karmada.io/v1alpha1")).json();
    const r = disc.resources.find((x: { name: string }) => x.name === "clustertaintpolicies");
    assert.deepEqual({ kind: r.kind, namespaced: r.namespaced, singularName: r.singularName }, { kind: "ClusterTaintPolicy", namespaced: false, singularName: "clustertaintpolicy" });
    const openapi = await inject(gw, "GET", "/openapi.json");
    assert.equal(openapi.statusCode, 200, openapi.body);
    const doc = openapi.json();
    assert.ok(doc.paths[CTP]?.post && doc.paths[`${CTP}/{name}`]?.get, "the kind's paths are published");
    assert.ok(doc.components.schemas["io.karmada.policy.v1alpha1.ClusterTaintPolicySpec"]?.properties?.addOnConditions, "the spec's schema is published");
    const table = await inject(gw, "GET", CTP, undefined, { accept: "application/json;as=Table;g=meta.k8s.io;v=v1" });
    assert.equal(table.statusCode, 200, table.body);
    assert.deepEqual(table.json().columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Age"]);
    assert.ok(table.json().rows.some((row: { cells: string[] }) => row.cells[0] === "detect-cluster-not-ready"));
  });

  test("an editor reads cluster taint policies but cannot write them; an administrator can", async () => {
    await inject(gw, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "team-a-edit" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flotilla:edit" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "team-a" }],
    });
    const p = { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterTaintPolicy", metadata: { name: "by-editor" }, spec: { taints: [{ key: "k", effect: "NoSchedule" }] } };
    const ed = bearer(TOKENS.editor);
    // the binding reaches the authorizer through its informer
    for (let i = 0; i < 100 && (await inject(gw, "GET", CTP, undefined, ed)).statusCode !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await inject(gw, "GET", CTP, undefined, ed)).statusCode, 200);
    assert.equal((await inject(gw, "POST", CTP, p, ed)).statusCode, 403);
    assert.equal((await inject(gw, "POST", "/apis/policy.karmada.io/v1alpha1/clusteroverridepolicies", { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterOverridePolicy", metadata: { name: "by-editor" }, spec: {} }, ed)).statusCode, 201);
  });

  test("gRPC carries a ClusterTaintPolicy as its typed message", () => {
    const p: KubeObject = {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "ClusterTaintPolicy",
      metadata: { name: "p" },
      spec: {
        targetClusters: { clusterNames: ["member1"] },
        addOnConditions: [{ conditionType: "Ready", operator: "NotIn", statusValues: ["True"] }],
        removeOnConditions: [{ conditionType: "Ready", operator: "In", statusValues: ["True"] }],
        taints: [{ key: "k", value: "v", effect: "NoSchedule" }],
      },
    };
    const msg = toProtoObject(p);
    assert.equal(msg.object.case, "clusterTaintPolicy");
    assert.deepEqual(fromProtoObject(msg).object, p);
  });
});
