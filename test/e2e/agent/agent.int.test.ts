// flotilla-agent against a real gateway (buildGateway on a fresh database, no other service) and
// a simulated member: it registers its Cluster in Pull mode, renews its Lease, applies the Works
// of karmada-es-<member> and reports their status and the cluster's, with only the rights of
// examples/agent-rbac.yaml and a ServiceAccount token (both from scripts/register-agent.mjs, as
// `npm start` does), and resumes its watch when the gateway comes back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ExecutionControllerFinalizer, type Cluster, type KubeObject, type Work } from "@flotilla/api";
import { buildAgent, type Agent } from "@flotilla/agent";
import { buildGateway, ensureSigningKey, RbacAuthorizer, ServiceAccountTokens, TokenFileAuthenticator, unionAuthenticator, type Gateway } from "@flotilla/gateway";
import { createLogger } from "@flotilla/log";
import { startSimulator } from "@flotilla/member-sim";
import { ObjectStore } from "@flotilla/store";
import { eventually, freshDatabase } from "@flotilla/testkit";
import { FAST_AGENT } from "./settings.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const log = createLogger({ name: "agent-test", level: process.env.LOG_LEVEL ?? "silent" });
const ADMIN = "admin-token";
const TOKEN_FILE = `${ADMIN},admin,admin-uid,"system:masters"`;
const ISSUER = "https://flotilla.test";

type RegisterAgent = (o: { gatewayUrl: string; member: string; tokenFile: string; token: string }) => Promise<string>;
const loadRegisterAgent = async () => ((await import(path.join(root, "scripts/register-agent.mjs"))) as { registerAgent: RegisterAgent }).registerAgent;


const condition = (o: { status?: unknown } | undefined, type: string) =>
  ((o?.status as { conditions?: { type: string; status: string; reason?: string; lastHeartbeatTime?: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type);

function deployment(name: string, replicas: number): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.25", resources: { requests: { cpu: "100m", memory: "64Mi" } } }] } } },
  };
}

test("flotilla-agent registers member3 in Pull mode, renews its lease, applies its Works and reports status, with only its own rights, and resumes after a gateway restart", async (t) => {
  const db = await freshDatabase();
  const store = new ObjectStore(db.sql);
  const dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-agent-"));
  const keyFile = path.join(dir, "sa.key");
  await ensureSigningKey(keyFile);
  const sim = await startSimulator({ admin: false, defaults: { readyDelayMs: 50 }, clusters: [{ name: "member3" }, { name: "member1" }] });
  // service account tokens as `npm start` has them (TokenRequest), besides the admin's token file
  const newGateway = async () => {
    const sa = await ServiceAccountTokens.fromFile(store, keyFile, ISSUER, { audiences: [ISSUER], defaultSeconds: 3600, maxSeconds: 86400 });
    return buildGateway({
      store,
      log,
      settings: { notReadyTolerationSeconds: 300, unreachableTolerationSeconds: 300 },
      ready: async () => true,
      access: { authenticator: unionAuthenticator(new TokenFileAuthenticator(TOKEN_FILE), sa), authorizer: new RbacAuthorizer(store), serviceAccounts: sa },
    });
  };
  let gw: Gateway = await newGateway();
  const { url } = await gw.start({ host: "127.0.0.1", port: 0 });
  let agent: Agent | undefined;
  t.after(async () => {
    await agent?.stop();
    await gw.stop();
    await sim.close();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });
  const call = async (method: string, p: string, token: string, body?: string, type = "application/json") => {
    const r = await fetch(`${url}${p}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": type } : {}) }, body });
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };

  // the administrator gives the agent its identity and rights (examples/agent-rbac.yaml) and a token
  const tokenFile = path.join(dir, "agent.token");
  const registerAgent = await loadRegisterAgent();
  assert.equal(await registerAgent({ gatewayUrl: url, member: "member3", tokenFile, token: ADMIN }), "flotilla-agent-member3");
  // again: idempotent
  await registerAgent({ gatewayUrl: url, member: "member3", tokenFile, token: ADMIN });
  const AGENT = (await readFile(tokenFile, "utf8")).trim();
  await call("POST", "/api/v1/namespaces", ADMIN, JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "karmada-es-member1" } }));

  const m3 = sim.cluster("member3");
  let agentUrl: string | undefined;
  const start = async () => {
    const a = buildAgent({ settings: { ...FAST_AGENT, GATEWAY_URL: url }, log, member: { server: m3.url, token: m3.token }, token: () => AGENT });
    agentUrl = (await a.start({ port: 0 })).url;
    return a;
  };
  agent = await start();

  // registered in Pull mode, Ready with a heartbeat, version, API enablements and resource summary
  const cluster = await eventually(async () => {
    const c = (await call("GET", "/apis/cluster.karmada.io/v1alpha1/clusters/member3", ADMIN)).body as unknown as Cluster;
    return condition(c, "Ready")?.status === "True" && c.status?.resourceSummary ? c : undefined;
  }, { timeoutMs: 15_000, message: "member3 registered and Ready" });
  assert.equal(cluster.spec?.syncMode, "Pull");
  assert.ok(condition(cluster, "Ready")?.lastHeartbeatTime);
  assert.match(String(cluster.status?.kubernetesVersion), /^v1\./);
  assert.ok((cluster.status?.apiEnablements ?? []).some((e) => e.groupVersion === "apps/v1"));
  assert.ok(cluster.status?.resourceSummary?.allocatable?.cpu);
  // the heartbeat keeps moving (the taint-manager's health monitor watches it)
  const beat = condition(cluster, "Ready")!.lastHeartbeatTime;
  await eventually(async () => condition((await call("GET", "/apis/cluster.karmada.io/v1alpha1/clusters/member3", ADMIN)).body, "Ready")?.lastHeartbeatTime !== beat, { message: "heartbeat renewed" });
  // registering again changes nothing
  assert.equal(await agent.heartbeat.register(), "unchanged");
  // its /metrics says so
  const metrics = await eventually(async () => {
    const text = await (await fetch(`${agentUrl}/metrics`)).text();
    return /^flotilla_agent_status_reports_total\{outcome="ok"\} [1-9]/m.test(text) ? text : undefined;
  }, { message: "status reports counted on the agent's /metrics" });
  assert.match(metrics, /^flotilla_agent_registered 1$/m);
  assert.match(metrics, /^flotilla_agent_lease_renewals_total\{outcome="ok"\} [1-9]/m);

  // the lease karmada-cluster/member3 is renewed
  const leaseOf = async () => (await call("GET", "/apis/coordination.k8s.io/v1/namespaces/karmada-cluster/leases/member3", ADMIN)).body as { spec?: { renewTime?: string; holderIdentity?: string; leaseDurationSeconds?: number } };
  const l1 = await eventually(async () => (await leaseOf()).spec?.renewTime ? leaseOf() : undefined, { message: "lease created" });
  assert.equal(l1.spec?.holderIdentity, "member3");
  assert.equal(l1.spec?.leaseDurationSeconds, 4);
  await eventually(async () => (await leaseOf()).spec?.renewTime !== l1.spec?.renewTime, { message: "lease renewed" });

  // its identity reaches its own objects only
  assert.equal((await call("GET", "/apis/cluster.karmada.io/v1alpha1/clusters/member1", AGENT)).status, 403);
  assert.equal((await call("GET", "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works", AGENT)).status, 403);
  assert.equal((await call("GET", "/api/v1/namespaces/karmada-cluster/secrets", AGENT)).status, 403);

  // a Work in karmada-es-member3 is applied to the member, with the finalizer and the status
  const work = (name: string, manifests: KubeObject[]) =>
    store.create<Work>({ apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { name, namespace: "karmada-es-member3" }, spec: { workload: { manifests: manifests as never } } });
  const getWork = (name: string) => store.get<Work>({ gk: "work.karmada.io/Work", namespace: "karmada-es-member3", name });
  await work("web-1", [deployment("web", 2)]);
  await eventually(() => m3.get("apps/v1", "Deployment", "web", "default")?.spec?.replicas === 2, { message: "web on member3" });
  const applied = await eventually(async () => {
    const w = await getWork("web-1");
    const ms = (w?.status as { manifestStatuses?: { health: string }[] } | undefined)?.manifestStatuses;
    return condition(w, "Applied")?.status === "True" && ms?.[0]?.health === "Healthy" ? w : undefined;
  }, { message: "web-1 Applied and Healthy" });
  assert.ok(applied.metadata.finalizers?.includes(ExecutionControllerFinalizer));

  // the gateway goes away; a Work written meanwhile is applied once it is back, the watch resumed, not relisted
  const lists = agent.works.lists;
  const port = Number(new URL(url).port);
  // cut every connection (the agent's watch included) as a crash would, then stop
  const stopping = gw.stop();
  gw.http.server.closeAllConnections();
  await stopping;
  await work("api-1", [deployment("api", 1)]);
  await new Promise((r) => setTimeout(r, 500));
  gw = await newGateway();
  await gw.start({ host: "127.0.0.1", port });
  await eventually(() => m3.get("apps/v1", "Deployment", "api", "default")?.spec?.replicas === 1, { timeoutMs: 15_000, message: "api on member3 after the gateway restart" });
  assert.equal(agent.works.lists, lists, "the watch resumed from its resourceVersion");

  // a deleted Work: its object leaves the member, then the finalizer is released
  assert.equal((await call("DELETE", "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member3/works/web-1", ADMIN)).status, 200);
  await eventually(async () => !m3.get("apps/v1", "Deployment", "web", "default") && !(await getWork("web-1")), { message: "web removed and web-1 gone" });

  // a restarted agent (fresh memory) finds everything in place
  await agent.stop();
  agent = await start();
  assert.equal(await agent.heartbeat.register(), "unchanged");
});
