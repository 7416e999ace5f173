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

  test("a plaintext value at a container's resource quantity that Kubernetes' parser refuses is 422 naming the value, on create and patch, and nothing is stored", async () => {
    const CPU = "/spec/template/spec/containers/0/resources/requests/cpu";
    const policy = (name: string, value: unknown, kind = "OverridePolicy") => ({
      apiVersion: "policy.karmada.io/v1alpha1",
      kind,
      metadata: { name },
      spec: {
        resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }],
        overrideRules: [{ overriders: { labelsOverrider: [{ operator: "add", value: { team: "web" } }] } }, { overriders: { plaintext: [{ path: CPU, operator: "replace", value }] } }],
      },
    });
    const refused = (res: { statusCode: number; body: string; json(): { reason: string; message: string; details: { causes: { field: string; message: string }[] } } }, field: string) => {
      assert.equal(res.statusCode, 422, res.body);
      const status = res.json();
      assert.equal(status.reason, "Invalid");
      assert.deepEqual(
        status.details.causes.map((c) => c.field),
        [field],
      );
      assert.match(status.details.causes[0]!.message, /quantities must match the regular expression/);
    };
    for (const value of ["1Gi ", " 100m", "1 Gi", "2\n"]) {
      refused(await inject("POST", OP, policy("spaced", value)), "spec.overrideRules[1].overriders.plaintext[0].value");
      refused(await inject("POST", COP, policy("spaced", value, "ClusterOverridePolicy")), "spec.overrideRules[1].overriders.plaintext[0].value");
    }
    assert.equal((await inject("GET", `${OP}/spaced`)).statusCode, 404, "nothing stored");
    assert.equal((await inject("GET", `${COP}/spaced`)).statusCode, 404, "nothing stored");

    const ok = await inject("POST", OP, policy("quantities", "1Gi"));
    assert.equal(ok.statusCode, 201, ok.body);
    refused(await inject("PATCH", `${OP}/quantities`, [{ op: "replace", path: "/spec/overrideRules/1/overriders/plaintext/0/value", value: "1Gi " }], "application/json-patch+json"), "spec.overrideRules[1].overriders.plaintext[0].value");
    refused(await inject("PUT", `${OP}/quantities`, { ...policy("quantities", "500m\t"), metadata: { name: "quantities", resourceVersion: ok.json().metadata.resourceVersion } }), "spec.overrideRules[1].overriders.plaintext[0].value");
    assert.equal((await inject("GET", `${OP}/quantities`)).json().spec.overrideRules[1].overriders.plaintext[0].value, "1Gi", "the stored policy is unchanged");
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
