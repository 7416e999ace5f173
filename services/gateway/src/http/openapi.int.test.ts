import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import { buildGateway, type Gateway } from "../app.js";
import { TOKENS, bearer, testGatewayDeps } from "../access.test-support.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const PP = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";
const policy = (name: string, placement: Json) => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name },
  spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }], placement },
});

describe("OpenAPI discovery (/openapi/v3) and fieldValidation", () => {
  let db: TestDatabase;
  let gw: Gateway;
  before(async () => {
    db = await freshDatabase();
    gw = buildGateway(testGatewayDeps(new ObjectStore(db.sql)));
    // started: the default roles (flotilla:authenticated reads discovery and OpenAPI) are written then
    await gw.start({ host: "127.0.0.1", port: 0 });
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });
  const get = (url: string, headers: Record<string, string> = {}, token: string = TOKENS.admin) => gw.http.inject({ method: "GET", url, headers: { ...bearer(token), ...headers } });
  const send = (method: "POST" | "PATCH" | "PUT", url: string, body: unknown, contentType = "application/json") =>
    gw.http.inject({ method, url, payload: JSON.stringify(body), headers: { ...bearer(), "content-type": contentType } });

  test("the index names each group-version's document by its hash, which serves it for good", async () => {
    const res = await get("/openapi/v3");
    assert.equal(res.statusCode, 200);
    const index = res.json();
    assert.ok(index.paths["api/v1"] && index.paths["apis/apps/v1"] && index.paths["apis/work.karmada.io/v1alpha2"]);
    const url: string = index.paths["apis/policy.karmada.io/v1alpha1"].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/apis\/policy\.karmada\.io\/v1alpha1\?hash=[0-9A-F]{128}$/);

    const doc = await get(url);
    assert.equal(doc.statusCode, 200);
    assert.equal(doc.headers["cache-control"], "public, immutable, max-age=31536000");
    assert.equal(doc.headers.etag, `"${url.split("hash=")[1]}"`);
    const d = doc.json();
    assert.match(d.openapi, /^3\.0/);
    const pp = d.components.schemas["io.karmada.policy.v1alpha1.PropagationPolicy"];
    assert.deepEqual(pp["x-kubernetes-group-version-kind"], [{ group: "policy.karmada.io", kind: "PropagationPolicy", version: "v1alpha1" }]);
    assert.match(d.components.schemas["io.karmada.policy.v1alpha1.Placement"].properties.clusterAffinity.description, /clusters the resources may be scheduled to/);
    const patch = d.paths["/apis/policy.karmada.io/v1alpha1/namespaces/{namespace}/propagationpolicies/{name}"].patch;
    assert.deepEqual(patch["x-kubernetes-group-version-kind"], { group: "policy.karmada.io", kind: "PropagationPolicy", version: "v1alpha1" });
    assert.ok(patch.parameters.some((p: Json) => p.name === "fieldValidation" && p.in === "query"));
    assert.equal(d.components.schemas["io.k8s.api.apps.v1.Deployment"], undefined, "a document holds its own group-version's kinds");

    const apps = (await get(index.paths["apis/apps/v1"].serverRelativeURL)).json();
    const dep = apps.components.schemas["io.k8s.api.apps.v1.Deployment"];
    assert.equal(dep["x-kubernetes-preserve-unknown-fields"], true);
    assert.deepEqual(dep["x-kubernetes-group-version-kind"], [{ group: "apps", kind: "Deployment", version: "v1" }]);
  });

  test("without a hash the document is revalidated by its ETag; an old hash is sent to the current one; an unknown group-version is a 404 Status", async () => {
    const first = await get("/openapi/v3/apis/cluster.karmada.io/v1alpha1");
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers["cache-control"], "no-cache, private");
    const etag = String(first.headers.etag);
    const again = await get("/openapi/v3/apis/cluster.karmada.io/v1alpha1", { "if-none-match": etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, "");
    const index = await get("/openapi/v3", { "if-none-match": String((await get("/openapi/v3")).headers.etag) });
    assert.equal(index.statusCode, 304);
    const stale = await get("/openapi/v3/apis/cluster.karmada.io/v1alpha1?hash=0123");
    assert.equal(stale.statusCode, 301);
    assert.equal(stale.headers.location, `/openapi/v3/apis/cluster.karmada.io/v1alpha1?hash=${etag.slice(1, -1)}`);
    const missing = await get("/openapi/v3/apis/nothing.example.com/v1");
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().kind, "Status");
  });

  test("any authenticated user may read the documents; without a token it is a 401", async () => {
    assert.equal((await get("/openapi/v3", {}, TOKENS.nobody)).statusCode, 200);
    assert.equal((await get("/openapi/v3/api/v1", {}, TOKENS.nobody)).statusCode, 200);
    assert.equal((await gw.http.inject({ method: "GET", url: "/openapi/v3" })).statusCode, 401);
  });

  test("fieldValidation: Strict (and no value) refuses an unknown field naming it, Warn drops it with a Warning, Ignore drops it silently", async () => {
    const typo = (name: string) => policy(name, { clusterAfinity: { clusterNames: ["member1"] }, clusterAffinity: { clusterNames: ["member2"] } });
    for (const q of ["", "?fieldValidation=Strict"]) {
      const res = await send("POST", `${PP}${q}`, typo("strict"));
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(
        res.json().details.causes.map((c: Json) => c.field),
        ["spec.placement.clusterAfinity"],
      );
      assert.equal(res.json().details.kind, "PropagationPolicy");
    }
    const warned = await send("POST", `${PP}?fieldValidation=Warn`, typo("warned"));
    assert.equal(warned.statusCode, 201, warned.body);
    assert.deepEqual(warned.headers.warning, ['299 - "unknown field \\"spec.placement.clusterAfinity\\""']);
    assert.deepEqual(warned.json().spec.placement.clusterAffinity, { clusterNames: ["member2"] });
    assert.equal(warned.json().spec.placement.clusterAfinity, undefined);
    const ignored = await send("POST", `${PP}?fieldValidation=Ignore`, typo("ignored"));
    assert.equal(ignored.statusCode, 201, ignored.body);
    assert.equal(ignored.headers.warning, undefined);
    // a patch is checked as the object it produces; wrong types are refused whatever the directive
    const patched = await send("PATCH", `${PP}/warned?fieldValidation=Warn`, { spec: { placement: { spreadConstraint: [] } }, metadata: { labels: { a: "b" } } }, "application/merge-patch+json");
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.headers.warning, ['299 - "unknown field \\"spec.placement.spreadConstraint\\""']);
    assert.equal(patched.json().metadata.labels.a, "b");
    const wrongType = await send("PATCH", `${PP}/warned?fieldValidation=Ignore`, { spec: { priority: "high" } }, "application/merge-patch+json");
    assert.equal(wrongType.statusCode, 422);
    assert.equal(wrongType.json().details.causes[0].field, "spec.priority");
  });

  test("fieldValidation: a value kube-apiserver does not know is a 422 naming the parameter, and nothing is written", async () => {
    const res = await send("POST", `${PP}?fieldValidation=strict`, policy("lower", {}));
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().details.causes[0].field, "fieldValidation");
    assert.equal((await get(`${PP}/lower`)).statusCode, 404);
    const put = await send("PUT", `${PP}/lower?fieldValidation=yes`, policy("lower", {}));
    assert.equal(put.statusCode, 422);
    assert.equal(put.json().details.kind, "UpdateOptions");
  });

  test("fieldValidation: a built-in kind keeps every field, so Strict finds none unknown", async () => {
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1" }, extra: { kept: true } };
    const res = await send("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", cm);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().extra, { kept: true });
  });
});
