import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, eventually, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import { buildGateway, type Gateway } from "./app.js";
import { bearer, injectAsAdmin, testGatewayDeps } from "./access.test-support.js";

const POLICY_YAML = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames:
        - member1
        - member2
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - targetCluster:
              clusterNames:
                - member1
            weight: 1
          - targetCluster:
              clusterNames:
                - member2
            weight: 2
`;

const DEPLOYMENT = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "nginx", labels: { app: "nginx" } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: "nginx" } },
    template: { metadata: { labels: { app: "nginx" } }, spec: { containers: [{ name: "nginx", image: "nginx" }] } },
  },
};

const PP = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";
const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";

describe("gateway", () => {
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

  test("the seed's policy posted as YAML comes back with the default tolerations", async () => {
    const res = await inject("POST", PP, POLICY_YAML, "application/yaml");
    assert.equal(res.statusCode, 201, res.body);
    const pp = res.json();
    assert.equal(pp.metadata.namespace, "default");
    assert.deepEqual(
      pp.spec.placement.clusterTolerations.map((t: { key: string; tolerationSeconds: number; effect: string; operator: string }) => [t.key, t.operator, t.effect, t.tolerationSeconds]),
      [
        ["cluster.karmada.io/not-ready", "Exists", "NoExecute", 300],
        ["cluster.karmada.io/unreachable", "Exists", "NoExecute", 300],
      ],
    );
    assert.equal(pp.spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight, 2);
    const got = await inject("GET", `${PP}/nginx-propagation`);
    assert.deepEqual(got.json(), pp);
  });

  test("a template is stored as given and listed across namespaces with a label selector", async () => {
    const res = await inject("POST", DEPLOY, DEPLOYMENT);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().spec.template.spec.containers[0].image, "nginx");
    const list = await inject("GET", "/apis/apps/v1/deployments?labelSelector=app%3Dnginx");
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().kind, "DeploymentList");
    assert.deepEqual(list.json().items.map((d: { metadata: { name: string } }) => d.metadata.name), ["nginx"]);
    const none = await inject("GET", "/apis/apps/v1/deployments?labelSelector=app%3Dother");
    assert.deepEqual(none.json().items, []);
  });

  test("CRUD works on every Karmada kind", async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ["/apis/cluster.karmada.io/v1alpha1/clusters", { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "member1" }, spec: { apiEndpoint: "https://127.0.0.1:7101", syncMode: "Push" } }],
      ["/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies", { apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterPropagationPolicy", metadata: { name: "cpp" }, spec: { resourceSelectors: [{ apiVersion: "v1", kind: "Namespace" }] } }],
      ["/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings", { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "nginx-deployment" }, spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" }, replicas: 3 } }],
      ["/apis/work.karmada.io/v1alpha2/clusterresourcebindings", { apiVersion: "work.karmada.io/v1alpha2", kind: "ClusterResourceBinding", metadata: { name: "ns-namespace" }, spec: { resource: { apiVersion: "v1", kind: "Namespace", name: "ns" } } }],
      ["/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works", { apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { name: "nginx-687f7fb96f" }, spec: { workload: { manifests: [DEPLOYMENT] } } }],
      ["/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1" } }],
      ["/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } }],
    ];
    for (const [coll, body] of cases) {
      const name = (body.metadata as { name: string }).name;
      const c = await inject("POST", coll, body);
      assert.equal(c.statusCode, 201, `${coll}: ${c.body}`);
      const g = await inject("GET", `${coll}/${name}`);
      assert.equal(g.statusCode, 200);
      const obj = g.json();
      obj.metadata.labels = { touched: "yes" };
      const u = await inject("PUT", `${coll}/${name}`, obj);
      assert.equal(u.statusCode, 200, `${coll}: ${u.body}`);
      assert.equal(u.json().metadata.labels.touched, "yes");
      const p = await inject("PATCH", `${coll}/${name}`, { metadata: { annotations: { patched: "yes" } } }, "application/merge-patch+json");
      assert.equal(p.statusCode, 200, `${coll}: ${p.body}`);
      assert.equal(p.json().metadata.annotations.patched, "yes");
      const l = await inject("GET", coll);
      assert.ok(l.json().items.some((i: { metadata: { name: string } }) => i.metadata.name === name));
      const d = await inject("DELETE", `${coll}/${name}`);
      assert.equal(d.statusCode, 200);
      assert.equal((await inject("GET", `${coll}/${name}`)).statusCode, 404);
    }
  });

  test("a status write changes only the status, and a spec write keeps it", async () => {
    const coll = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings";
    const rb = (await inject("POST", coll, { apiVersion: "work.karmada.io/v1alpha2", kind: "ResourceBinding", metadata: { name: "s" }, spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "s" }, replicas: 1 } })).json();
    const st = await inject("PUT", `${coll}/s/status`, { ...rb, spec: { replicas: 9 }, status: { schedulerObservedGeneration: 1 } });
    assert.equal(st.statusCode, 200, st.body);
    assert.equal(st.json().spec.replicas, 1);
    assert.equal(st.json().status.schedulerObservedGeneration, 1);
    const stored = st.json() as { spec: Record<string, unknown> };
    const sp = await inject("PUT", `${coll}/s`, { ...stored, spec: { ...stored.spec, replicas: 2 }, status: {} });
    assert.equal(sp.json().status.schedulerObservedGeneration, 1);
    assert.equal(sp.json().metadata.generation, 2);
  });

  test("a stale resourceVersion is a 409 Conflict Status", async () => {
    const cur = (await inject("GET", `${PP}/nginx-propagation`)).json();
    const ok = await inject("PUT", `${PP}/nginx-propagation`, { ...cur, metadata: { ...cur.metadata, labels: { v: "2" } } });
    assert.equal(ok.statusCode, 200, ok.body);
    const stale = await inject("PUT", `${PP}/nginx-propagation`, { ...cur, metadata: { ...cur.metadata, labels: { v: "3" } } });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().kind, "Status");
    assert.equal(stale.json().reason, "Conflict");
  });

  test("error shapes: NotFound, AlreadyExists, Invalid with fields, BadRequest for malformed bodies", async () => {
    const nf = await inject("GET", `${PP}/nope`);
    assert.equal(nf.statusCode, 404);
    assert.equal(nf.json().reason, "NotFound");
    const ae = await inject("POST", PP, POLICY_YAML, "application/yaml");
    assert.equal(ae.statusCode, 409);
    assert.equal(ae.json().reason, "AlreadyExists");
    const bad = await inject("POST", PP, {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "PropagationPolicy",
      metadata: { name: "bad" },
      spec: {
        resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }],
        placement: {
          clusterAffinity: { clusterNames: ["a"] },
          clusterAffinities: [{ affinityName: "x", clusterNames: ["b"] }],
          spreadConstraints: [{ spreadByField: "cluster", minGroups: 3, maxGroups: 1 }],
        },
      },
    });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(bad.json().reason, "Invalid");
    const fields = bad.json().details.causes.map((c: { field: string }) => c.field);
    assert.ok(fields.some((f: string) => f.startsWith("spec.placement.clusterAffinit")), fields.join());
    assert.ok(fields.some((f: string) => f.startsWith("spec.placement.spreadConstraints[0]")), fields.join());
    const unknown = await inject("POST", PP, { apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "u" }, spec: { resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap" }], bogus: 1 } });
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.ok(unknown.json().details.causes.some((c: { field: string }) => c.field === "spec.bogus"), unknown.body);
    const yaml = await inject("POST", PP, "a: [unclosed", "application/yaml");
    assert.equal(yaml.statusCode, 400);
    assert.equal(yaml.json().reason, "BadRequest");
    const json = await inject("POST", PP, "{not json", "application/json");
    assert.equal(json.statusCode, 400);
    const wrongKind = await inject("POST", PP, DEPLOYMENT);
    assert.equal(wrongKind.statusCode, 400);
    const wrongNs = await inject("POST", PP, { apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "w", namespace: "other" }, spec: { resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap" }] } });
    assert.equal(wrongNs.statusCode, 400);
    assert.equal(wrongNs.json().details.causes[0].field, "metadata.namespace");
    const badPatch = await inject("PATCH", `${PP}/nginx-propagation`, { spec: { priority: "high" } }, "application/merge-patch+json");
    assert.equal(badPatch.statusCode, 422, badPatch.body);
    const unsupported = await inject("PATCH", `${PP}/nginx-propagation`, { a: 1 }, "text/plain");
    assert.equal(unsupported.statusCode, 415);
    const noRoute = await inject("GET", "/apis/nope.io/v1/things");
    assert.equal(noRoute.statusCode, 404);
    assert.equal(noRoute.json().kind, "Status");
    const count = await db.sql`SELECT count(*)::int AS n FROM objects WHERE name IN ('bad','u','w')`;
    assert.equal(count[0].n, 0, "rejected requests write nothing");
  });

  test("strategic merge patch updates a container by name, as kubectl apply sends it", async () => {
    const res = await inject(
      "PATCH",
      `${DEPLOY}/nginx`,
      { spec: { replicas: 5, template: { spec: { "$setElementOrder/containers": [{ name: "nginx" }], containers: [{ name: "nginx", image: "nginx:1.25" }] } } } },
      "application/strategic-merge-patch+json",
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().spec.replicas, 5);
    assert.deepEqual(res.json().spec.template.spec.containers, [{ name: "nginx", image: "nginx:1.25" }]);
  });

  test("discovery lists the Karmada groups and their resources", async () => {
    const apis = (await inject("GET", "/apis")).json();
    const names = apis.groups.map((g: { name: string }) => g.name);
    for (const g of ["cluster.karmada.io", "policy.karmada.io", "work.karmada.io", "apps"]) assert.ok(names.includes(g), g);
    const pol = (await inject("GET", "/apis/policy.karmada.io/v1alpha1")).json();
    assert.deepEqual(pol.resources.map((r: { name: string }) => r.name).sort(), ["clusteroverridepolicies", "clusterpropagationpolicies", "clustertaintpolicies", "overridepolicies", "propagationpolicies"]);
    const core = (await inject("GET", "/api/v1")).json();
    assert.ok(core.resources.some((r: { name: string; namespaced: boolean }) => r.name === "configmaps" && r.namespaced));
    const openapi = (await inject("GET", "/openapi.json")).json();
    assert.ok(openapi.paths["/apis/policy.karmada.io/v1alpha1/namespaces/{namespace}/propagationpolicies"]);
    assert.ok(openapi.components.schemas["io.karmada.policy.v1alpha1.Placement"]);
    assert.ok(openapi.paths["/apis/policy.karmada.io/v1alpha1/clusteroverridepolicies"]);
    assert.equal(openapi.components.schemas["io.karmada.policy.v1alpha1.PlaintextOverrider"].properties.value["x-kubernetes-preserve-unknown-fields"], true, "a plaintext value is any JSON");
  });

  test("a watch streams changes after a resourceVersion", async () => {
    const { url } = await gw.start({ host: "127.0.0.1", port: 0 });
    const list = (await inject("GET", "/api/v1/namespaces/watched/configmaps")).json();
    const ac = new AbortController();
    const res = await fetch(`${url}/api/v1/namespaces/watched/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}`, { signal: ac.signal, headers: bearer() });
    assert.equal(res.status, 200);
    await inject("POST", "/api/v1/namespaces/watched/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "w" }, data: { a: "1" } });
    await inject("DELETE", "/api/v1/namespaces/watched/configmaps/w");
    const reader = res.body!.getReader();
    let text = "";
    await eventually(async () => {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
      return text.split("\n").filter(Boolean).length >= 2;
    });
    ac.abort();
    const events = text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [["ADDED", "w"], ["DELETED", "w"]]);
    const gone = await fetch(`${url}/api/v1/configmaps?watch=true&resourceVersion=abc`, { headers: bearer() });
    assert.equal(gone.status, 422);
  });
});
