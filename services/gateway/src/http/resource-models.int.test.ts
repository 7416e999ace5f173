import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import { buildGateway, type Gateway } from "../app.js";
import { injectAsAdmin, testGatewayDeps } from "../access.test-support.js";

const CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters";
const MAX = "9223372036854775807";
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const cluster = (name: string, resourceModels?: Json[]): Json => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name },
  spec: { syncMode: "Pull", ...(resourceModels ? { resourceModels } : {}) },
});
const cpu = (grade: number, min: string, max: string) => ({ grade, ranges: [{ name: "cpu", min, max }] });

describe("Cluster resource models through the gateway", () => {
  let db: TestDatabase;
  let plain: Gateway;
  let defaulting: Gateway;
  before(async () => {
    db = await freshDatabase();
    const store = new ObjectStore(db.sql);
    const deps = testGatewayDeps(store);
    plain = buildGateway(deps);
    defaulting = buildGateway({ ...deps, settings: { ...deps.settings, clusterResourceModelingDefaults: true } });
    for (const g of [plain, defaulting]) {
      injectAsAdmin(g.http);
      await g.http.ready();
    }
  });
  after(async () => {
    for (const g of [plain, defaulting]) await g.stop();
    await db.drop();
  });
  const inject = (g: Gateway, method: string, url: string, body?: unknown) =>
    g.http.inject({ method: method as "GET", url, payload: body === undefined ? undefined : JSON.stringify(body), headers: body === undefined ? {} : { "content-type": "application/json" } });

  test("models posted out of order are stored sorted, from 0 up to MaxInt64", async () => {
    const res = await inject(plain, "POST", CLUSTERS, cluster("sorted", [cpu(2, "4", "8"), cpu(0, "1", "2"), cpu(1, "2", "4")]));
    assert.equal(res.statusCode, 201, res.body);
    const want = [cpu(0, "0", "2"), cpu(1, "2", "4"), cpu(2, "4", MAX)];
    assert.deepEqual(res.json().spec.resourceModels, want);
    assert.deepEqual((await inject(plain, "GET", `${CLUSTERS}/sorted`)).json().spec.resourceModels, want);
  });

  test("models with a gap are refused with 422 naming the minimum, and nothing is written", async () => {
    const res = await inject(plain, "POST", CLUSTERS, cluster("gap", [cpu(0, "0", "1"), cpu(1, "2", "4"), cpu(2, "4", MAX)]));
    assert.equal(res.statusCode, 422, res.body);
    const status = res.json();
    assert.equal(status.kind, "Status");
    assert.equal(status.reason, "Invalid");
    assert.deepEqual(status.details.causes.map((c: Json) => [c.field, c.reason]), [["spec.resourceModels[1].ranges[0].min", "FieldValueInvalid"]]);
    assert.match(status.details.causes[0].message, /contiguous and non-overlapping/);
    assert.equal((await inject(plain, "GET", `${CLUSTERS}/gap`)).statusCode, 404);
  });

  test("an update with an unsupported resource and a duplicate grade is refused naming both fields", async () => {
    assert.equal((await inject(plain, "POST", CLUSTERS, cluster("update"))).statusCode, 201);
    const cur = (await inject(plain, "GET", `${CLUSTERS}/update`)).json();
    const bad = { ...cur, spec: { ...cur.spec, resourceModels: [cpu(0, "0", "1"), cpu(0, "1", "2"), { grade: 3, ranges: [{ name: "pods", min: "2", max: MAX }] }] } };
    const res = await inject(plain, "PUT", `${CLUSTERS}/update`, bad);
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(res.json().details.causes.map((c: Json) => c.field), ["spec.resourceModels[1].grade", "spec.resourceModels[2].ranges[0].name"]);
  });

  test("a merge patch that adds models is standardized too", async () => {
    assert.equal((await inject(plain, "POST", CLUSTERS, cluster("patched"))).statusCode, 201);
    const res = await plain.http.inject({
      method: "PATCH",
      url: `${CLUSTERS}/patched`,
      payload: JSON.stringify({ spec: { resourceModels: [cpu(1, "16", "32"), cpu(0, "0", "16")] } }),
      headers: { "content-type": "application/merge-patch+json" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().spec.resourceModels, [cpu(0, "0", "16"), cpu(1, "16", MAX)]);
  });

  test("without CLUSTER_RESOURCE_MODELING_DEFAULTS a Cluster gets no models", async () => {
    const res = await inject(plain, "POST", CLUSTERS, cluster("plain"));
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().spec.resourceModels, undefined);
  });

  test("with CLUSTER_RESOURCE_MODELING_DEFAULTS a Cluster created without models gets the nine default grades, on create only", async () => {
    const res = await inject(defaulting, "POST", CLUSTERS, cluster("defaulted"));
    assert.equal(res.statusCode, 201, res.body);
    const models = res.json().spec.resourceModels as Json[];
    assert.deepEqual(models.map((m) => m.grade), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(models[3], { grade: 3, ranges: [{ name: "cpu", min: "4", max: "8" }, { name: "memory", min: "32Gi", max: "64Gi" }] });
    assert.deepEqual(models[8], { grade: 8, ranges: [{ name: "cpu", min: "128", max: MAX }, { name: "memory", min: "1024Gi", max: MAX }] });
    // an update that clears them is not defaulted again (upstream defaults in PrepareForCreate only)
    const cur = res.json();
    const put = await inject(defaulting, "PUT", `${CLUSTERS}/defaulted`, { ...cur, spec: { ...cur.spec, resourceModels: [] } });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().spec.resourceModels, undefined);
    // a Cluster's own models are kept
    const own = await inject(defaulting, "POST", CLUSTERS, cluster("own", [cpu(0, "0", MAX)]));
    assert.deepEqual(own.json().spec.resourceModels, [cpu(0, "0", MAX)]);
  });
});
