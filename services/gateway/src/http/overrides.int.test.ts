import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import type { KubeObject } from "@flotilla/api";
import { buildGateway, type Gateway } from "../app.js";
import { fromProtoObject, toProtoObject } from "../grpc.js";
import { injectAsAdmin, testGatewayDeps } from "../access.test-support.js";

const OP = "/apis/policy.karmada.io/v1alpha1/namespaces/default/overridepolicies";
const COP = "/apis/policy.karmada.io/v1alpha1/clusteroverridepolicies";

describe("override policies over REST and gRPC", () => {
  let db: TestDatabase;
  let gw: Gateway;
  before(async () => {
    db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    gw = buildGateway(testGatewayDeps(store));
    injectAsAdmin(gw.http);
    await gw.http.ready();
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });
  const inject = (method: string, url: string, body?: unknown, contentType = "application/json") =>
    gw.http.inject({ method: method as "GET", url, payload: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body), headers: body === undefined ? {} : { "content-type": contentType } });

  test("the example OverridePolicy posted as YAML is stored, read back and listed across namespaces", async () => {
    const yaml = await readFile(new URL("../../../../examples/nginx-override.yaml", import.meta.url), "utf8");
    const res = await inject("POST", OP, yaml, "application/yaml");
    assert.equal(res.statusCode, 201, res.body);
    const op = res.json();
    assert.equal(op.spec.resourceSelectors[0].namespace, "default", "selectors get the policy's namespace");
    assert.equal(op.spec.overrideRules[1].overriders.plaintext[0].value[0].value, "eu-west", "a plaintext value keeps its JSON");
    assert.deepEqual((await inject("GET", `${OP}/nginx-override`)).json(), op);
    const list = await inject("GET", "/apis/policy.karmada.io/v1alpha1/overridepolicies");
    assert.equal(list.json().kind, "OverridePolicyList");
    assert.deepEqual(list.json().items.map((o: KubeObject) => o.metadata.name), ["nginx-override"]);
  });

  test("a ClusterOverridePolicy is served cluster-scoped", async () => {
    const cop = { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterOverridePolicy", metadata: { name: "all-deployments" }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], overrideRules: [{ overriders: { annotationsOverrider: [{ operator: "add", value: { "example.com/owner": "platform" } }] } }] } };
    const res = await inject("POST", COP, cop);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().metadata.namespace, undefined);
    assert.equal((await inject("GET", `${COP}/all-deployments`)).statusCode, 200);
  });

  test("an invalid policy is 422 naming every bad field, as upstream's webhook", async () => {
    const res = await inject("POST", OP, {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "OverridePolicy",
      metadata: { name: "bad" },
      spec: {
        targetCluster: { clusterNames: ["member1"] },
        overrideRules: [{ overriders: { imageOverrider: [{ predicate: { path: "spec/x" }, component: "Tag", operator: "replace", value: "1" }], plaintext: [{ path: "/a", operator: "move" }] } }],
      },
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field).sort(), [
      "spec.overrideRules[0].overriders.imageOverrider[0].predicate.path",
      "spec.overrideRules[0].overriders.plaintext[0].operator",
      "spec.targetCluster",
    ]);
  });

  test("discovery lists both kinds", async () => {
    const res = await inject("GET", "/apis/policy.karmada.io/v1alpha1");
    const names = res.json().resources.map((r: { name: string }) => r.name);
    assert.ok(names.includes("overridepolicies") && names.includes("clusteroverridepolicies"), names.join(","));
  });

  test("gRPC carries an OverridePolicy as its typed message, plaintext values included", () => {
    const op: KubeObject = {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "OverridePolicy",
      metadata: { name: "p", namespace: "default" },
      spec: { overrideRules: [{ overriders: { plaintext: [{ path: "/spec/replicas", operator: "replace", value: 3 }, { path: "/metadata/annotations", operator: "add", value: { a: "b" } }] } }] },
    };
    const msg = toProtoObject(op);
    assert.equal(msg.object.case, "overridePolicy");
    assert.deepEqual(fromProtoObject(msg).object, op);
  });
});
