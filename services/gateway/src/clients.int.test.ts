import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { readFile, writeFile, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { eventually, freshDatabase, kubectlOr, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import { injectAsAdmin, testTls, TOKENS, testGatewayDeps } from "./access.test-support.js";
import { buildGateway, type Gateway } from "./app.js";

const run = promisify(execFile);
const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples");

const CONFIGMAPS = Array.from({ length: 45 }, (_, i) => `cm-${String(i).padStart(2, "0")}`);


describe("stock Kubernetes clients against the gateway", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  let gw: Gateway;
  let url: string;
  let tls: Awaited<ReturnType<typeof testTls>>;
  /** kubectl against this gateway as the admin, over TLS. */
  const kubectl = (...args: string[]) => run("kubectl", [`--server=${url}`, `--token=${TOKENS.admin}`, `--certificate-authority=${tls.certFile}`, ...args], { env: { ...process.env, KUBECONFIG: "/dev/null" } });
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
    tls = await testTls();
    gw = buildGateway({ ...testGatewayDeps(store), tls });
    injectAsAdmin(gw.http);
    url = (await gw.start({ host: "127.0.0.1", port: 0 })).url;
    // 45 ConfigMaps and 23 Works to page through
    for (let i = 0; i < 45; i++) await store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${String(i).padStart(2, "0")}`, namespace: "paged", labels: { n: String(i % 3) } }, data: { i: String(i) } });
    for (let i = 0; i < 23; i++) {
      await store.create({ apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { name: `w-${String(i).padStart(2, "0")}`, namespace: `karmada-es-member${(i % 2) + 1}` }, spec: { workload: { manifests: [] } } });
    }
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });

  test("kubectl apply creates the seed's Deployment and policy, a second apply of an edited file updates them", async (t) => {
    if (!(await kubectlOr(t))) return;
    const first = await kubectl("apply", "-f", path.join(EXAMPLES, "failover.yaml"));
    assert.match(first.stdout, /deployment.apps\/nginx created/);
    assert.match(first.stdout, /propagationpolicy.policy.karmada.io\/nginx-propagation created/);
    const dir = await mkdtemp(path.join(tmpdir(), "flotilla-"));
    const edited = (await readFile(path.join(EXAMPLES, "failover.yaml"), "utf8")).replace("replicas: 3", "replicas: 4").replace("weight: 2", "weight: 3");
    await writeFile(path.join(dir, "edited.yaml"), edited);
    const second = await kubectl("apply", "-f", path.join(dir, "edited.yaml"));
    assert.match(second.stdout, /deployment.apps\/nginx configured/);
    assert.match(second.stdout, /nginx-propagation configured/);
    const dep = JSON.parse((await kubectl("get", "deployment", "nginx", "-n", "default", "-o", "json")).stdout);
    assert.equal(dep.spec.replicas, 4);
    const pp = JSON.parse((await kubectl("get", "propagationpolicies", "nginx-propagation", "-n", "default", "-o", "json")).stdout);
    assert.equal(pp.spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight, 3);
    assert.equal(pp.spec.placement.clusterTolerations.length, 2, "defaults survive the apply");
    const list = await kubectl("get", "propagationpolicies", "-A");
    assert.match(list.stdout, /default\s+nginx-propagation/);
  });

  test("kubectl get prints Karmada's columns (server-side Table)", async (t) => {
    if (!(await kubectlOr(t))) return;
    const c = await store.create({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "member1" }, spec: { syncMode: "Push", apiEndpoint: "https://10.0.0.1:6443" } });
    await store.updateStatus({ ...c, status: { kubernetesVersion: "v1.29.3", conditions: [{ type: "Ready", status: "True", reason: "ClusterReady", lastTransitionTime: new Date().toISOString() }] } });
    const clusters = (await kubectl("get", "clusters")).stdout.trim().split("\n").map((l) => l.trim().split(/\s+/));
    assert.deepEqual(clusters[0], ["NAME", "VERSION", "MODE", "READY", "AGE"]);
    assert.deepEqual(clusters[1]!.slice(0, 4), ["member1", "v1.29.3", "Push", "True"]);
    const wide = (await kubectl("get", "clusters", "-o", "wide")).stdout;
    assert.match(wide, /APIENDPOINT[\s\S]*https:\/\/10\.0\.0\.1:6443/);
    const works = (await kubectl("get", "works", "-n", "karmada-es-member1", "--chunk-size=5")).stdout.trim().split("\n");
    assert.deepEqual(works[0]!.trim().split(/\s+/), ["NAME", "WORKLOAD-KIND", "APPLIED", "AGE"]);
    assert.equal(works.length, 13, "12 Works of member1 over three pages, and the header");
    const pps = (await kubectl("get", "pp", "-A")).stdout.trim().split("\n")[0]!.trim().split(/\s+/);
    assert.deepEqual(pps, ["NAMESPACE", "NAME", "CONFLICT-RESOLUTION", "PRIORITY", "AGE"]);
    // kubectl get -w prints the same columns for each change
    const w = spawn("kubectl", [`--server=${url}`, `--token=${TOKENS.admin}`, `--certificate-authority=${tls.certFile}`, "get", "clusters", "-w"], { env: { ...process.env, KUBECONFIG: "/dev/null" } });
    let out = "";
    w.stdout.on("data", (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => /member1\s+v1\.29\.3\s+Push\s+True/.test(out), { timeoutMs: 10_000, message: `kubectl get -w printed: ${out}` });
      const cur = (await store.get({ gk: "cluster.karmada.io/Cluster", name: "member1" }))!;
      await store.updateStatus({ ...cur, status: { ...(cur.status as object), conditions: [{ type: "Ready", status: "False", reason: "ClusterNotReachable", lastTransitionTime: new Date().toISOString() }] } });
      await eventually(() => /member1\s+v1\.29\.3\s+Push\s+False/.test(out), { timeoutMs: 10_000, message: `kubectl get -w printed: ${out}` });
    } finally {
      w.kill();
    }
    // a single object, and -o json still gets the object itself
    assert.match((await kubectl("get", "cluster", "member1")).stdout, /member1\s+v1\.29\.3\s+Push\s+False/);
    assert.equal(JSON.parse((await kubectl("get", "cluster", "member1", "-o", "json")).stdout).spec.apiEndpoint, "https://10.0.0.1:6443");
  });

  test("kubectl get --chunk-size pages with limit and continue", async (t) => {
    if (!(await kubectlOr(t))) return;
    // -v=6 logs every request: one GET per page, each after the first with the previous page's continue
    const cms = await kubectl("get", "configmaps", "-n", "paged", "--chunk-size=10", "-o", "name", "-v=6");
    assert.deepEqual(cms.stdout.trim().split("\n"), CONFIGMAPS.map((n) => `configmap/${n}`));
    const gets = cms.stderr.split("\n").filter((l) => /GET \S+\/namespaces\/paged\/configmaps\?/.test(l));
    assert.equal(gets.length, 5, cms.stderr);
    assert.ok(gets.every((l) => l.includes("limit=10")));
    assert.equal(gets.filter((l) => l.includes("continue=")).length, 4);
    const sel = await kubectl("get", "configmaps", "-n", "paged", "-l", "n=1", "--chunk-size=4", "-o", "name");
    assert.deepEqual(sel.stdout.trim().split("\n"), CONFIGMAPS.filter((_, i) => i % 3 === 1).map((n) => `configmap/${n}`));
    const works = await kubectl("get", "works", "-A", "--chunk-size=10", "--no-headers");
    const rows = works.stdout.trim().split("\n").map((l) => l.trim().split(/\s+/).slice(0, 2).join("/"));
    const expected = Array.from({ length: 23 }, (_, i) => `karmada-es-member${(i % 2) + 1}/w-${String(i).padStart(2, "0")}`).sort();
    assert.deepEqual(rows, expected);
    const whole = await kubectl("get", "works", "-A", "--chunk-size=0", "-o", "name");
    assert.equal(whole.stdout.trim().split("\n").length, 23, "--chunk-size=0 gets the streamed whole list");
  });

  test("@kubernetes/client-node lists with limit and continue", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "flotilla", server: url, skipTLSVerify: true }],
      users: [{ name: "u", token: TOKENS.admin }],
      contexts: [{ name: "c", cluster: "flotilla", user: "u" }],
      currentContext: "c",
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const names: string[] = [];
    const remaining: Array<number | undefined> = [];
    let token: string | undefined;
    do {
      const page = await core.listNamespacedConfigMap({ namespace: "paged", limit: 20, _continue: token });
      names.push(...page.items.map((c) => c.metadata!.name!));
      remaining.push(page.metadata?.remainingItemCount);
      token = page.metadata?._continue;
    } while (token);
    assert.deepEqual(names, CONFIGMAPS);
    assert.deepEqual(remaining, [25, 5, undefined]);
    // Karmada kinds through the custom-objects client (KubernetesObjectApi.list reads an unknown
    // kind's list metadata as ObjectMeta and so drops continue, against any server)
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const works = (token?: string) =>
      custom.listClusterCustomObject({ group: "work.karmada.io", version: "v1alpha1", plural: "works", limit: 20, _continue: token }) as Promise<{ items: unknown[]; metadata: { continue?: string; remainingItemCount?: number } }>;
    const first = await works();
    assert.equal(first.items.length, 20);
    assert.equal(first.metadata.remainingItemCount, 3);
    const rest = await works(first.metadata.continue);
    assert.equal(rest.items.length, 3);
    assert.equal(rest.metadata.continue, undefined);
    const bad = await core.listNamespacedConfigMap({ namespace: "paged", limit: -1 }).then(
      () => undefined,
      (e: { code?: number; body?: string }) => e,
    );
    assert.equal(bad?.code, 422);
    assert.match(String(bad?.body), /"field":"limit"/);
  });

  test("@kubernetes/client-node creates, reads, patches and deletes through the gateway", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "flotilla", server: url, skipTLSVerify: true }],
      users: [{ name: "u", token: TOKENS.admin }],
      contexts: [{ name: "c", cluster: "flotilla", user: "u" }],
      currentContext: "c",
    });
    const api = k8s.KubernetesObjectApi.makeApiClient(kc);
    const pp = {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "PropagationPolicy",
      metadata: { name: "client-node", namespace: "team" },
      spec: { resourceSelectors: [{ apiVersion: "v1", kind: "ConfigMap", name: "cfg" }], placement: { clusterAffinity: { clusterNames: ["member1"] } } },
    };
    const created = await api.create(pp);
    assert.equal(created.metadata?.namespace, "team");
    const read = (await api.read({ apiVersion: pp.apiVersion, kind: pp.kind, metadata: { name: "client-node", namespace: "team" } })) as typeof pp & { spec: { placement: { clusterTolerations: unknown[] } } };
    assert.equal(read.spec.placement.clusterTolerations.length, 2);
    const patched = await api.patch({ ...pp, metadata: { ...pp.metadata, labels: { via: "client-node" } } }, undefined, undefined, undefined, undefined, k8s.PatchStrategy.MergePatch);
    assert.equal(patched.metadata?.labels?.via, "client-node");
    const list = await api.list("policy.karmada.io/v1alpha1", "PropagationPolicy", "team");
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ["client-node"]);
    await api.delete({ apiVersion: pp.apiVersion, kind: pp.kind, metadata: { name: "client-node", namespace: "team" } });
    await assert.rejects(api.read({ apiVersion: pp.apiVersion, kind: pp.kind, metadata: { name: "client-node", namespace: "team" } }), (e: { code?: number }) => e.code === 404);
  });
});
