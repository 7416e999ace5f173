// The issue's "done when", end to end with the built services as processes: the seeds' three
// members run under the simulator, join through the gateway, turn Ready with apiEnablements and
// resourceSummary; a Work posted by hand for member1 becomes a Deployment on member1 whose
// readiness shows in the Work's status; member1 unreachable turns Ready False after the threshold.
// The gateway authenticates every call: the join and the reads carry an administrator token of a
// token file made for the test; without one the join is refused (401).
// Needs `npx tsc -b services/gateway services/execution` (npm test builds first).
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfigFile, startSimulator } from "@flotilla/member-sim";
import { eventually, freshDatabase, uniqueName, NATS_URL } from "@flotilla/testkit";
import { freePort } from "../../load/lib/proc.js";
import { ProcessLogs } from "../../load/lib/logs.js";
import { adminTokenFile, bearer, launchService, loadJoinMembers } from "../../load/lib/stack.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

type Obj = { metadata: { name: string }; status?: { conditions?: { type: string; status: string; reason?: string }[]; [k: string]: unknown }; [k: string]: unknown };
const cond = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

test("the seed members join through the gateway, turn Ready, run a hand-posted Work, and member1 going away turns its Ready False", async (t) => {
  const cfg = await loadConfigFile(path.join(root, "packages/member-sim/clusters.example.yaml"));
  const sim = await startSimulator({ ...cfg, admin: { host: "127.0.0.1", port: 0 }, defaults: { ...cfg.defaults, readyDelayMs: 200 }, clusters: cfg.clusters.map((c) => ({ ...c, port: 0 })) });
  const db = await freshDatabase();
  const tokens = adminTokenFile();
  const logs = new ProcessLogs();
  const auth = bearer(tokens.token);
  const gwPort = await freePort();
  const env = { DATABASE_URL: db.url, NATS_URL, EVENTS_STREAM: uniqueName("E2E").toUpperCase(), EVENTS_PREFIX: uniqueName("e2e"), HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  const gateway = launchService("gateway", { logs, env: { ...env, PORT: String(gwPort), GRPC_PORT: "0", TOKEN_AUTH_FILE: tokens.file } });
  const execution = launchService("execution", {
    logs,
    env: {
      ...env,
      PORT: "0",
      ESTIMATOR_PORT: "0",
      CLUSTER_STATUS_UPDATE_FREQUENCY: "200ms",
      CLUSTER_FAILURE_THRESHOLD: "1s",
      CLUSTER_SUCCESS_THRESHOLD: "1s",
      CLUSTER_PROBE_TIMEOUT: "500ms",
      // the simulator serves plain http on 127.0.0.1
      MEMBER_ALLOW_HTTP: "loopback",
    },
  });
  // the services stop first: the members and the database they use go after them
  t.after(async () => {
    await Promise.all([gateway.stop(), execution.stop()]);
    await sim.close();
    await db.drop();
    tokens.remove();
  });
  const gw = `http://127.0.0.1:${gwPort}`;
  await eventually(async () => (await fetch(`${gw}/readyz`)).ok, { timeoutMs: 20_000, intervalMs: 100 });

  const joinMembers = await loadJoinMembers();
  // without a token (an empty one: not FLOTILLA_TOKEN of the environment) the gateway refuses the join
  await assert.rejects(joinMembers({ gatewayUrl: gw, adminUrl: sim.adminUrl!, token: "", log: () => {} }), /HTTP 401/);
  await assert.rejects(joinMembers({ gatewayUrl: gw, adminUrl: sim.adminUrl!, token: "not-a-token", log: () => {} }), /HTTP 401/);
  assert.deepEqual(await joinMembers({ gatewayUrl: gw, adminUrl: sim.adminUrl!, token: tokens.token, log: () => {} }), ["member1", "member2", "member3"]);
  // joining again changes nothing and does not fail
  assert.deepEqual(await joinMembers({ gatewayUrl: gw, adminUrl: sim.adminUrl!, token: tokens.token, log: () => {} }), ["member1", "member2", "member3"]);

  const getJson = async (p: string) => (await (await fetch(`${gw}${p}`, { headers: auth })).json()) as Obj & { items?: Obj[] };
  const clusters = await eventually(
    async () => {
      const l = await getJson("/apis/cluster.karmada.io/v1alpha1/clusters");
      const ok = l.items?.length === 3 && l.items.every((c) => cond(c, "Ready")?.status === "True" && (c.status?.apiEnablements as unknown[] | undefined)?.length && c.status?.resourceSummary);
      return ok ? l.items : undefined;
    },
    { timeoutMs: 30_000, message: "three Ready clusters with apiEnablements and resourceSummary" },
  );
  const m1 = clusters.find((c) => c.metadata.name === "member1")!;
  assert.deepEqual((m1 as unknown as { spec: unknown }).spec, {
    syncMode: "Push",
    apiEndpoint: sim.cluster("member1").url,
    secretRef: { namespace: "karmada-cluster", name: "member1" },
    provider: "aws",
    region: "us-east-1",
    zones: ["us-east-1a"],
  });
  assert.deepEqual((m1.metadata as { labels?: unknown }).labels, { env: "prod", tier: "gold" });
  assert.deepEqual((m1.status!.resourceSummary as { allocatable: unknown }).allocatable, { cpu: "16", "ephemeral-storage": "200Gi", memory: "64Gi", pods: "220" });
  const secretText = await (await fetch(`${gw}/api/v1/namespaces/karmada-cluster/secrets`, { headers: auth })).text();
  assert.ok(!secretText.includes("member1-token") && !secretText.includes(Buffer.from("member1-token").toString("base64")), "no token in the gateway's answer");

  // a Work posted by hand for member1
  const work = {
    apiVersion: "work.karmada.io/v1alpha1",
    kind: "Work",
    metadata: { name: "nginx-687f7fb96f", namespace: "karmada-es-member1", finalizers: ["karmada.io/execution-controller"] },
    spec: {
      workload: {
        manifests: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "nginx", namespace: "default", labels: { app: "nginx" } },
            spec: { replicas: 2, selector: { matchLabels: { app: "nginx" } }, template: { metadata: { labels: { app: "nginx" } }, spec: { containers: [{ name: "nginx", image: "nginx", resources: { requests: { cpu: "500m", memory: "256Mi" } } }] } } },
          },
        ],
      },
    },
  };
  const posted = await fetch(`${gw}/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify(work) });
  assert.equal(posted.status, 201, await posted.text());
  const done = await eventually(
    async () => {
      const w = await getJson("/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works/nginx-687f7fb96f");
      const ms = (w.status?.manifestStatuses as { health: string; status?: { readyReplicas?: number } }[] | undefined)?.[0];
      return cond(w, "Applied")?.status === "True" && ms?.health === "Healthy" && ms.status?.readyReplicas === 2 ? w : undefined;
    },
    { timeoutMs: 20_000, message: "the Work shows a Healthy Deployment with 2 ready replicas" },
  );
  assert.equal(cond(done, "Applied")?.reason, "AppliedSuccessful");
  const dep = sim.cluster("member1").get("apps/v1", "Deployment", "nginx", "default");
  assert.equal((dep?.status as { readyReplicas?: number })?.readyReplicas, 2);

  // member1 becomes unreachable: Ready False only after the 1 s failure threshold
  await sim.setFault("member1", { mode: "unreachable" });
  const down = Date.now();
  const c = await eventually(
    async () => {
      const x = await getJson("/apis/cluster.karmada.io/v1alpha1/clusters/member1");
      return cond(x, "Ready")?.status === "False" ? x : undefined;
    },
    { timeoutMs: 15_000 },
  );
  assert.equal(cond(c, "Ready")?.reason, "ClusterNotReachable");
  assert.ok(Date.now() - down >= 900, `turned False after ${Date.now() - down} ms`);
});
