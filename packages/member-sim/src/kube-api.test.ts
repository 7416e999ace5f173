import { test } from "node:test";
import assert from "node:assert/strict";
import { configMap, deployment, kube, simulator } from "./test-util.js";

const one = { clusters: [{ name: "member1" }] };

test("health and version endpoints answer with the token", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  for (const p of ["/readyz", "/healthz", "/livez"]) {
    const r = await kube(c, "GET", p);
    assert.equal(r.status, 200, p);
    assert.equal(r.body, "ok");
  }
  const v = await kube(c, "GET", "/version");
  assert.equal(v.status, 200);
  assert.equal(v.body.gitVersion, "v1.29.0");
  assert.equal(v.body.major, "1");
  assert.equal(v.body.minor, "29");
});

test("every request without the right bearer token gets a 401 Status", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  for (const [path, token] of [
    ["/readyz", null],
    ["/api/v1", null],
    ["/apis/apps/v1/namespaces/default/deployments", "wrong"],
    ["/version", "member2-token"],
  ] as const) {
    const r = await kube(c, "GET", path, undefined, { token });
    assert.equal(r.status, 401, path);
    assert.deepEqual(r.body, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "Unauthorized", reason: "Unauthorized", code: 401 });
  }
});

test("discovery lists core versions, groups and resources with scope, kind and verbs", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const api = await kube(c, "GET", "/api");
  assert.equal(api.body.kind, "APIVersions");
  assert.deepEqual(api.body.versions, ["v1"]);

  const core = await kube(c, "GET", "/api/v1");
  assert.equal(core.body.kind, "APIResourceList");
  assert.equal(core.body.groupVersion, "v1");
  const byName = new Map(core.body.resources.map((r: { name: string }) => [r.name, r]));
  for (const n of ["configmaps", "secrets", "services", "serviceaccounts", "namespaces", "pods", "nodes", "persistentvolumeclaims"]) assert.ok(byName.has(n), n);
  assert.deepEqual(byName.get("configmaps"), {
    name: "configmaps",
    singularName: "configmap",
    namespaced: true,
    kind: "ConfigMap",
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    shortNames: ["cm"],
  });
  assert.equal((byName.get("namespaces") as { namespaced: boolean }).namespaced, false);
  assert.deepEqual((byName.get("nodes") as { verbs: string[] }).verbs, ["get", "list", "watch"]);

  const groups = await kube(c, "GET", "/apis");
  assert.equal(groups.body.kind, "APIGroupList");
  assert.deepEqual(
    groups.body.groups.map((g: { preferredVersion: { groupVersion: string } }) => g.preferredVersion.groupVersion),
    ["apps/v1", "batch/v1", "networking.k8s.io/v1", "autoscaling/v2", "policy/v1", "rbac.authorization.k8s.io/v1"],
  );
  const apps = await kube(c, "GET", "/apis/apps/v1");
  const d = apps.body.resources.find((r: { name: string }) => r.name === "deployments");
  assert.deepEqual([d.kind, d.namespaced], ["Deployment", true]);
  assert.ok(apps.body.resources.some((r: { name: string }) => r.name === "deployments/status"));
  const rbac = await kube(c, "GET", "/apis/rbac.authorization.k8s.io/v1");
  assert.equal(rbac.body.resources.find((r: { name: string }) => r.name === "clusterroles").namespaced, false);
  assert.equal((await kube(c, "GET", "/apis/apps")).body.kind, "APIGroup");
});

test("a cluster serves only its enabled APIs", async (t) => {
  const sim = await simulator(t, {
    clusters: [{ name: "small", apis: [{ groupVersion: "apps/v1", resources: ["deployments"] }, { groupVersion: "example.io/v1alpha1", resources: [{ name: "widgets", kind: "Widget" }] }] }],
  });
  const c = sim.cluster("small");
  assert.equal((await kube(c, "GET", "/apis/batch/v1")).status, 404);
  assert.equal((await kube(c, "GET", "/apis/apps/v1/namespaces/default/statefulsets")).status, 404);
  assert.deepEqual(
    (await kube(c, "GET", "/api/v1")).body.resources.map((r: { name: string }) => r.name),
    ["namespaces", "namespaces/status", "pods", "pods/status", "nodes", "nodes/status"],
  );
  const w = await kube(c, "POST", "/apis/example.io/v1alpha1/namespaces/default/widgets", { apiVersion: "example.io/v1alpha1", kind: "Widget", metadata: { name: "w" }, spec: { size: 3 } });
  assert.equal(w.status, 201);
  assert.equal(w.body.spec.size, 3);
});

test("create, get, list, update and delete a namespaced object", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const base = "/api/v1/namespaces/team-a/configmaps";
  const created = await kube(c, "POST", base, configMap("cm", { a: "1" }, "team-a"));
  assert.equal(created.status, 201);
  const m = created.body.metadata;
  assert.match(m.uid, /^[0-9a-f-]{36}$/);
  assert.match(m.resourceVersion, /^\d+$/);
  assert.equal(m.generation, 1);
  assert.match(m.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(m.namespace, "team-a");

  // The missing namespace was created on the way.
  assert.equal((await kube(c, "GET", "/api/v1/namespaces/team-a")).body.status.phase, "Active");

  const got = await kube(c, "GET", `${base}/cm`);
  assert.deepEqual(got.body, created.body);

  const updated = await kube(c, "PUT", `${base}/cm`, { ...got.body, data: { a: "2" } });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.data.a, "2");
  assert.equal(updated.body.metadata.generation, 2);
  assert.ok(Number(updated.body.metadata.resourceVersion) > Number(m.resourceVersion));
  assert.equal(updated.body.metadata.uid, m.uid);

  const list = await kube(c, "GET", base);
  assert.equal(list.body.kind, "ConfigMapList");
  assert.equal(list.body.apiVersion, "v1");
  assert.deepEqual(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ["cm"]);

  const del = await kube(c, "DELETE", `${base}/cm`);
  assert.equal(del.status, 200);
  assert.equal(del.body.kind, "Status");
  assert.equal(del.body.status, "Success");
  assert.equal((await kube(c, "GET", `${base}/cm`)).status, 404);
});

test("errors are Status objects: 404 NotFound, 409 AlreadyExists, 409 Conflict, 422 Invalid, 400 BadRequest", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const base = "/apis/apps/v1/namespaces/default/deployments";
  const missing = await kube(c, "GET", `${base}/nope`);
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: 'deployments.apps "nope" not found',
    reason: "NotFound",
    details: { name: "nope", group: "apps", kind: "deployments" },
    code: 404,
  });

  const first = await kube(c, "POST", base, deployment("web", 1));
  assert.equal(first.status, 201);
  const dup = await kube(c, "POST", base, deployment("web", 1));
  assert.equal(dup.status, 409);
  assert.equal(dup.body.reason, "AlreadyExists");

  const stale = { ...first.body, metadata: { ...first.body.metadata, resourceVersion: "1" }, spec: { ...first.body.spec, replicas: 2 } };
  const conflict = await kube(c, "PUT", `${base}/web`, stale);
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.reason, "Conflict");
  assert.match(conflict.body.message, /the object has been modified/);

  const putMissing = await kube(c, "PUT", `${base}/ghost`, deployment("ghost", 1));
  assert.equal(putMissing.status, 404);
  assert.equal((await kube(c, "DELETE", `${base}/ghost`)).status, 404);
  assert.equal((await kube(c, "PATCH", `${base}/ghost`, { spec: {} }, { contentType: "application/merge-patch+json" })).status, 404);

  const noName = await kube(c, "POST", "/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: {} });
  assert.equal(noName.status, 422);
  assert.equal(noName.body.reason, "Invalid");

  const wrongNs = await kube(c, "POST", "/api/v1/namespaces/default/configmaps", configMap("x", {}, "other"));
  assert.equal(wrongNs.status, 400);
  assert.equal(wrongNs.body.reason, "BadRequest");

  const badJson = await kube(c, "POST", "/api/v1/namespaces/default/configmaps", "{not json");
  assert.equal(badJson.status, 400);

  const badSelector = await kube(c, "GET", "/api/v1/configmaps?labelSelector=" + encodeURIComponent("a in (b"));
  assert.equal(badSelector.status, 400);

  assert.equal((await kube(c, "GET", "/api/v1/widgets")).status, 404);
  assert.equal((await kube(c, "GET", "/nowhere")).status, 404);
  assert.equal((await kube(c, "DELETE", "/api/v1/nodes/node-1")).status, 405);
});

test("an update without a resourceVersion is unconditional and a no-op write keeps the resourceVersion", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const base = "/api/v1/namespaces/default/configmaps";
  const created = (await kube(c, "POST", base, configMap("cm", { a: "1" }))).body;
  const { resourceVersion: _rv, ...meta } = created.metadata;
  const same = await kube(c, "PUT", `${base}/cm`, { ...created, metadata: meta });
  assert.equal(same.status, 200);
  assert.equal(same.body.metadata.resourceVersion, created.metadata.resourceVersion);
  const changed = await kube(c, "PUT", `${base}/cm`, { ...created, metadata: meta, data: { a: "3" } });
  assert.notEqual(changed.body.metadata.resourceVersion, created.metadata.resourceVersion);
});

test("generation moves on spec changes only, and status writes go through /status", async (t) => {
  const sim = await simulator(t, { clusters: [{ name: "member1", readyDelayMs: 60_000 }] });
  const c = sim.cluster("member1");
  const base = "/api/v1/namespaces/default/services";
  const svc = { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { ports: [{ port: 80 }] }, status: { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } } };
  const created = (await kube(c, "POST", base, svc)).body;
  assert.equal(created.status, undefined, "create drops status");
  const labelled = (await kube(c, "PATCH", `${base}/s`, { metadata: { labels: { a: "b" } } }, { contentType: "application/merge-patch+json" })).body;
  assert.equal(labelled.metadata.generation, 1);
  const ignored = (await kube(c, "PATCH", `${base}/s`, { status: { loadBalancer: { ingress: [{ ip: "9.9.9.9" }] } } }, { contentType: "application/merge-patch+json" })).body;
  assert.equal(ignored.status, undefined, "the main resource ignores status");
  const withStatus = await kube(c, "PATCH", `${base}/s/status`, { status: { loadBalancer: { ingress: [{ ip: "9.9.9.9" }] } } }, { contentType: "application/merge-patch+json" });
  assert.equal(withStatus.status, 200);
  assert.equal(withStatus.body.status.loadBalancer.ingress[0].ip, "9.9.9.9");
  assert.equal(withStatus.body.metadata.generation, 1);
  const spec = (await kube(c, "PATCH", `${base}/s`, { spec: { ports: [{ port: 81 }] } }, { contentType: "application/strategic-merge-patch+json" })).body;
  assert.equal(spec.metadata.generation, 2);
  assert.equal(spec.status.loadBalancer.ingress[0].ip, "9.9.9.9", "status survives a spec write");
});

test("merge patch adds, changes and removes fields and checks a resourceVersion it carries", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const base = "/api/v1/namespaces/default/configmaps";
  const created = (await kube(c, "POST", base, configMap("cm", { a: "1", b: "2" }, "default", { keep: "yes", drop: "yes" }))).body;
  const patched = await kube(c, "PATCH", `${base}/cm`, { metadata: { labels: { drop: null, add: "new" } }, data: { b: null, c: "3" } }, { contentType: "application/merge-patch+json" });
  assert.equal(patched.status, 200);
  assert.deepEqual(patched.body.metadata.labels, { keep: "yes", add: "new" });
  assert.deepEqual(patched.body.data, { a: "1", c: "3" });
  const stale = await kube(c, "PATCH", `${base}/cm`, { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { a: "x" } }, { contentType: "application/merge-patch+json" });
  assert.equal(stale.status, 409);
  const jsonPatch = await kube(c, "PATCH", `${base}/cm`, [{ op: "remove", path: "/data/a" }], { contentType: "application/json-patch+json" });
  assert.equal(jsonPatch.status, 415);
});

test("server-side apply creates a missing object and then updates it, dropping fields the manager no longer applies", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const url = "/apis/apps/v1/namespaces/shop/deployments/web?fieldManager=flotilla&force=true";
  const yaml = [
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    "  name: web",
    "  labels: { app: web, tier: front }",
    "spec:",
    "  replicas: 2",
    "  template:",
    "    spec:",
    "      containers: [{ name: main, image: 'nginx:1.25' }]",
  ].join("\n");
  const created = await kube(c, "PATCH", url, yaml, { contentType: "application/apply-patch+yaml" });
  assert.equal(created.status, 201);
  assert.equal(created.body.metadata.namespace, "shop");
  assert.equal(created.body.spec.replicas, 2);
  assert.deepEqual(created.body.metadata.labels, { app: "web", tier: "front" });

  // Another writer adds a label; the applier must keep it.
  await kube(c, "PATCH", "/apis/apps/v1/namespaces/shop/deployments/web", { metadata: { labels: { owner: "ops" } } }, { contentType: "application/merge-patch+json" });

  const again = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", labels: { app: "web" } }, spec: { replicas: 5, template: { spec: { containers: [{ name: "main", image: "nginx:1.26" }] } } } };
  const updated = await kube(c, "PATCH", url, again, { contentType: "application/apply-patch+yaml" });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.spec.replicas, 5);
  assert.equal(updated.body.spec.template.spec.containers[0].image, "nginx:1.26");
  assert.deepEqual(updated.body.metadata.labels, { app: "web", owner: "ops" });
  assert.equal(updated.body.metadata.generation, 2);
  assert.equal(updated.body.metadata.uid, created.body.metadata.uid);

  const same = await kube(c, "PATCH", url, again, { contentType: "application/apply-patch+yaml" });
  assert.equal(same.body.metadata.resourceVersion, updated.body.metadata.resourceVersion, "re-applying the same configuration writes nothing");

  const noManager = await kube(c, "PATCH", "/apis/apps/v1/namespaces/shop/deployments/web", again, { contentType: "application/apply-patch+yaml" });
  assert.equal(noManager.status, 422);
  const wrongName = await kube(c, "PATCH", "/apis/apps/v1/namespaces/shop/deployments/other?fieldManager=x", again, { contentType: "application/apply-patch+yaml" });
  assert.equal(wrongName.status, 400);
});

test("cluster-scoped objects live outside namespaces", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const role = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "reader" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] };
  const created = await kube(c, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role);
  assert.equal(created.status, 201);
  assert.equal(created.body.metadata.namespace, undefined);
  assert.equal((await kube(c, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader")).status, 200);
  assert.equal((await kube(c, "GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/clusterroles/reader")).status, 404);
  const ns = await kube(c, "POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "fresh" } });
  assert.equal(ns.status, 201);
  assert.equal((await kube(c, "DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader")).status, 200);
});

test("lists filter by label and field selectors, in one namespace or all", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  await kube(c, "POST", "/api/v1/namespaces/a/configmaps", configMap("one", {}, "a", { app: "web", tier: "front" }));
  await kube(c, "POST", "/api/v1/namespaces/a/configmaps", configMap("two", {}, "a", { app: "api" }));
  await kube(c, "POST", "/api/v1/namespaces/b/configmaps", configMap("three", {}, "b", { app: "web" }));
  const names = async (p: string) => (await kube(c, "GET", p)).body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
  assert.deepEqual(await names("/api/v1/configmaps"), ["one", "three", "two"]);
  assert.deepEqual(await names("/api/v1/namespaces/a/configmaps"), ["one", "two"]);
  assert.deepEqual(await names("/api/v1/configmaps?labelSelector=app%3Dweb"), ["one", "three"]);
  assert.deepEqual(await names("/api/v1/configmaps?labelSelector=" + encodeURIComponent("app in (web,api),!tier")), ["three", "two"]);
  assert.deepEqual(await names("/api/v1/configmaps?fieldSelector=metadata.namespace%3Db"), ["three"]);
  const deleted = await kube(c, "DELETE", "/api/v1/namespaces/a/configmaps?labelSelector=app%3Dweb");
  assert.equal(deleted.status, 200);
  assert.deepEqual(await names("/api/v1/configmaps"), ["three", "two"]);
});

test("a finalizer holds a deleted object until an update removes it", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  const base = "/api/v1/namespaces/default/configmaps";
  await kube(c, "POST", base, { ...configMap("held", {}), metadata: { name: "held", finalizers: ["example.io/hold"] } });
  const del = await kube(c, "DELETE", `${base}/held`);
  assert.equal(del.status, 200);
  assert.ok(del.body.metadata.deletionTimestamp);
  const still = await kube(c, "GET", `${base}/held`);
  assert.ok(still.body.metadata.deletionTimestamp);
  await kube(c, "PATCH", `${base}/held`, { metadata: { finalizers: null } }, { contentType: "application/merge-patch+json" });
  assert.equal((await kube(c, "GET", `${base}/held`)).status, 404);
});

test("deleting a namespace deletes what is in it", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  await kube(c, "POST", "/api/v1/namespaces/gone/configmaps", configMap("x", {}, "gone"));
  await kube(c, "POST", "/api/v1/namespaces/kept/configmaps", configMap("y", {}, "kept"));
  assert.equal((await kube(c, "DELETE", "/api/v1/namespaces/gone")).status, 200);
  assert.equal((await kube(c, "GET", "/api/v1/namespaces/gone/configmaps/x")).status, 404);
  assert.equal((await kube(c, "GET", "/api/v1/namespaces/kept/configmaps/y")).status, 200);
});

test("a watch streams the current objects and then every change", async (t) => {
  const sim = await simulator(t, one);
  const c = sim.cluster("member1");
  await kube(c, "POST", "/api/v1/namespaces/default/configmaps", configMap("before", {}));
  const ac = new AbortController();
  t.after(() => ac.abort());
  const res = await fetch(`${c.url}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5`, { headers: { authorization: `Bearer ${c.token}` }, signal: ac.signal });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const events: { type: string; object: { metadata: { name: string } } }[] = [];
  let buf = "";
  const next = async () => {
    while (!buf.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("watch ended");
      buf += Buffer.from(value).toString("utf8");
    }
    const i = buf.indexOf("\n");
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    events.push(JSON.parse(line));
  };
  await next();
  await kube(c, "POST", "/api/v1/namespaces/default/configmaps", configMap("after", {}));
  await kube(c, "POST", "/api/v1/namespaces/other/configmaps", configMap("elsewhere", {}, "other"));
  await kube(c, "DELETE", "/api/v1/namespaces/default/configmaps/before");
  await next();
  await next();
  assert.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata.name}`),
    ["ADDED before", "ADDED after", "DELETED before"],
  );
  ac.abort();
});

test("kubectl get: a Table with Kubernetes' printer columns when asked for one, for lists, single objects and watches", async (t) => {
  const sim = await simulator(t, { defaults: { readyDelayMs: 0 }, clusters: [{ name: "member1" }] });
  const c = sim.cluster("member1");
  const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
  assert.equal((await kube(c, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 2))).status, 201);
  c.flush();
  const pods = await kube(c, "GET", "/api/v1/pods", undefined, { accept });
  assert.equal(pods.body.kind, "Table");
  assert.deepEqual(
    pods.body.columnDefinitions.filter((d: { priority: number }) => d.priority === 0).map((d: { name: string }) => d.name),
    ["Name", "Ready", "Status", "Restarts", "Age"],
  );
  assert.equal(pods.body.rows.length, 2);
  assert.deepEqual(pods.body.rows[0].cells.slice(1, 4), ["1/1", "Running", "0"]);
  // each row carries the object's metadata, which kubectl reads for the NAMESPACE column of -A
  assert.equal(pods.body.rows[0].object.kind, "PartialObjectMetadata");
  assert.equal(pods.body.rows[0].object.metadata.namespace, "default");
  const one = await kube(c, "GET", "/apis/apps/v1/namespaces/default/deployments/web", undefined, { accept });
  assert.deepEqual(one.body.rows[0].cells.slice(0, 4), ["web", "2/2", 2, 2]);
  // without the Accept header: the plain objects
  assert.equal((await kube(c, "GET", "/api/v1/pods")).body.kind, "PodList");
  // a watch sends one-row Tables
  const ac = new AbortController();
  const res = await fetch(`${c.url}/apis/apps/v1/namespaces/default/deployments?watch=true`, { headers: { authorization: `Bearer ${c.token}`, accept }, signal: ac.signal });
  const reader = res.body!.getReader();
  const first = JSON.parse(new TextDecoder().decode((await reader.read()).value).split("\n")[0]!);
  ac.abort();
  assert.equal(first.type, "ADDED");
  assert.equal(first.object.kind, "Table");
  assert.equal(first.object.rows[0].cells[0], "web");
});
