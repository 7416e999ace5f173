import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readFile, writeFile, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore } from "@flotilla/store";
import { silentLogger } from "@flotilla/log";
import { buildGateway, type Gateway } from "./app.js";

const run = promisify(execFile);
const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples");

async function hasKubectl(): Promise<boolean> {
  try {
    await run("kubectl", ["version", "--client"]);
    return true;
  } catch {
    return false;
  }
}

describe("stock Kubernetes clients against the gateway", () => {
  let db: TestDatabase;
  let gw: Gateway;
  let url: string;
  before(async () => {
    db = await freshDatabase();
    gw = buildGateway({ store: new ObjectStore(db.sql), log: silentLogger(), settings: { notReadyTolerationSeconds: 300, unreachableTolerationSeconds: 300 }, ready: async () => true });
    url = (await gw.start({ host: "127.0.0.1", port: 0 })).url;
  });
  after(async () => {
    await gw.stop();
    await db.drop();
  });

  test("kubectl apply creates the seed's Deployment and policy, a second apply of an edited file updates them", async (t) => {
    if (!(await hasKubectl())) {
      if (process.env.CI) assert.fail("kubectl is required in CI (.ci/run installs Debian's kubernetes-client)");
      t.skip("kubectl not installed");
      return;
    }
    const kubectl = (...args: string[]) => run("kubectl", [`--server=${url}`, ...args], { env: { ...process.env, KUBECONFIG: "/dev/null" } });
    const first = await kubectl("apply", "--validate=false", "-f", path.join(EXAMPLES, "failover.yaml"));
    assert.match(first.stdout, /deployment.apps\/nginx created/);
    assert.match(first.stdout, /propagationpolicy.policy.karmada.io\/nginx-propagation created/);
    const dir = await mkdtemp(path.join(tmpdir(), "flotilla-"));
    const edited = (await readFile(path.join(EXAMPLES, "failover.yaml"), "utf8")).replace("replicas: 3", "replicas: 4").replace("weight: 2", "weight: 3");
    await writeFile(path.join(dir, "edited.yaml"), edited);
    const second = await kubectl("apply", "--validate=false", "-f", path.join(dir, "edited.yaml"));
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

  test("@kubernetes/client-node creates, reads, patches and deletes through the gateway", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "flotilla", server: url, skipTLSVerify: true }],
      users: [{ name: "u", token: "unused" }],
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
