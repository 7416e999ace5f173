// A burst of Deployments over a fleet of small clusters, through the whole stack (every service a
// process, 20 simulated members): capacity is read from the members' reports, which lag the burst,
// so without the scheduler's assumed ledger every binding of the burst picks the same few clusters
// and their pods stay Pending. With it, the burst spreads and every pod runs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, eventually, type TestDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../../load/lib/logs.js";
import { clusterPods, type ClusterPods } from "../../load/lib/members.js";
import { deleteStream, gatewayFetch, isolatedEnv, joinAndWaitReady, startServices, startSimulatorProcess, type Services, type SimulatorProcess } from "../../load/lib/stack.js";
import { pool } from "../../load/lib/stats.js";

const CLUSTERS = 20;
const DEPLOYMENTS = 120;
const REPLICAS = 3;
// each member: one node of 2 cpu = 20 pods of 100m; the fleet has room for 400, the burst asks for 360
const NODE_CPU = "2";

describe("a burst of Deployments over 20 clusters leaves no pod Pending", () => {
  let db: TestDatabase;
  let sim: SimulatorProcess;
  let services: Services;
  let stream: string;
  const logs = new ProcessLogs();

  before(async () => {
    db = await freshDatabase();
    const env = {
      ...isolatedEnv(db, "BURST"),
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn",
      DATABASE_POOL_SIZE: "4",
      // capacity reports as often as the defaults: the burst is over before the next one
      CLUSTER_STATUS_UPDATE_FREQUENCY: "10s",
      CLUSTER_FAILURE_THRESHOLD: "30s",
      CLUSTER_SUCCESS_THRESHOLD: "1s",
    };
    stream = env.EVENTS_STREAM;
    sim = await startSimulatorProcess({ count: CLUSTERS, readyDelayMs: 100, nodes: 1, nodeCpu: NODE_CPU, nodeMemory: "64Gi", nodePods: 110, logs });
    services = await startServices({ env, logs, readyTimeoutMs: 60_000 });
    await joinAndWaitReady({ gatewayUrl: services.gatewayUrl, token: services.token, adminUrl: sim.adminUrl, sql: db.sql, count: CLUSTERS, timeoutMs: 120_000 });
  });

  after(async () => {
    await services?.stop();
    await sim?.stop();
    await db?.drop();
    if (stream) await deleteStream(stream);
  });

  test("every pod runs, on most of the fleet, and no cluster is asked for more than it holds", async () => {
    const post = async (path: string, body: unknown) => {
      const r = await gatewayFetch(services, path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
    };
    await post("/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies", {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "ClusterPropagationPolicy",
      metadata: { name: "burst" },
      spec: {
        resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }],
        placement: {
          spreadConstraints: [{ spreadByField: "cluster", minGroups: 2, maxGroups: 2 }],
          replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
        },
      },
    });
    await pool(DEPLOYMENTS, 16, (i) =>
      post("/apis/apps/v1/namespaces/burst/deployments", {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: `app-${i}`, namespace: "burst", labels: { app: `app-${i}` } },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: `app-${i}` } },
          template: { metadata: { labels: { app: `app-${i}` } }, spec: { containers: [{ name: "app", image: "nginx", resources: { requests: { cpu: "100m", memory: "64Mi" } } }] } },
        },
      }),
    );
    let pods: ClusterPods[] = [];
    try {
      await eventually(
        async () => {
          pods = await clusterPods(sim.adminUrl);
          return pods.reduce((n, c) => n + c.running + c.pending, 0) === DEPLOYMENTS * REPLICAS;
        },
        { timeoutMs: 90_000, intervalMs: 500, message: `${DEPLOYMENTS * REPLICAS} pods on the members` },
      );
    } catch (e) {
      console.error(logs.tail(20_000));
      throw e;
    }
    const pending = pods.reduce((n, c) => n + c.pending, 0);
    const used = pods.filter((c) => c.running + c.pending > 0);
    const over = pods.filter((c) => (c.requested.cpu ?? 0) > (c.allocatable.cpu ?? 0)).map((c) => `${c.name}: ${c.requested.cpu}m of ${c.allocatable.cpu}m`);
    assert.deepEqual(over, [], "no cluster was asked for more cpu than it has");
    assert.equal(pending, 0, `pods Pending: ${pods.filter((c) => c.pending).map((c) => `${c.name}:${c.pending}`).join(" ")}`);
    assert.ok(used.length >= 15, `the burst used ${used.length} of ${CLUSTERS} clusters`);
  });
});
