// A control plane stopped for longer than the health monitor's grace period comes back without
// tainting anything: its members kept running, only nobody was writing their heartbeats. The
// monitor counts the grace period from when it first sees a heartbeat, not from the heartbeat's
// own timestamp (which is old after any stop).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { eventually, freshDatabase, sleep, type TestDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../../load/lib/logs.js";
import { deleteStream, isolatedEnv, joinAndWaitReady, startServices, startSimulatorProcess, type Services, type SimulatorProcess } from "../../load/lib/stack.js";

const GRACE_S = 3;

describe("restarting the control plane after a stop longer than the health monitor's grace period", () => {
  let db: TestDatabase;
  let sim: SimulatorProcess;
  let services: Services | undefined;
  let env: Record<string, string>;
  const logs = new ProcessLogs();

  before(async () => {
    db = await freshDatabase();
    env = {
      ...isolatedEnv(db, "RESTART"),
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn",
      DATABASE_POOL_SIZE: "4",
      CLUSTER_STATUS_UPDATE_FREQUENCY: "500ms",
      CLUSTER_FAILURE_THRESHOLD: "1s",
      CLUSTER_SUCCESS_THRESHOLD: "1s",
      CLUSTER_MONITOR_GRACE_PERIOD: `${GRACE_S}s`,
      // an Unknown cluster would be tainted NoExecute at once
      FAILOVER_EVICTION_TIMEOUT: "0s",
    };
    sim = await startSimulatorProcess({ count: 3, readyDelayMs: 100, logs });
    services = await startServices({ env, logs });
    await joinAndWaitReady({ gatewayUrl: services.gatewayUrl, token: services.token, adminUrl: sim.adminUrl, sql: db.sql, count: 3, timeoutMs: 60_000 });
  });

  after(async () => {
    await services?.stop();
    await sim?.stop();
    await db?.drop();
    if (env) await deleteStream(env.EVENTS_STREAM);
  });

  const clusters = async () =>
    db.sql<{ name: string; ready: string | null; taints: number }[]>`
      SELECT name, (SELECT c->>'status' FROM jsonb_array_elements(body->'status'->'conditions') c WHERE c->>'type' = 'Ready') AS ready,
             coalesce(jsonb_array_length(body->'spec'->'taints'), 0)::int AS taints
      FROM objects WHERE gk = 'cluster.karmada.io/Cluster' ORDER BY name`;

  test("no cluster goes Unknown and none is tainted", async () => {
    await services!.stop();
    services = undefined;
    await sleep((GRACE_S * 2 + 1) * 1000);
    services = await startServices({ env, logs });
    // the old heartbeats are more than twice the grace period old; watch the clusters for longer than the grace period
    const seen: string[] = [];
    const until = Date.now() + (GRACE_S + 3) * 1000;
    while (Date.now() < until) {
      for (const c of await clusters()) if (c.ready !== "True" || c.taints > 0) seen.push(`${c.name}: Ready ${c.ready}, ${c.taints} taint(s)`);
      await sleep(200);
    }
    assert.deepEqual([...new Set(seen)], [], "every cluster stayed Ready and untainted");
    // and the heartbeats move again
    const beat = async () =>
      (
        await db.sql<{ t: string | null }[]>`
          SELECT max(c->>'lastHeartbeatTime') AS t FROM objects, jsonb_array_elements(body->'status'->'conditions') c
          WHERE gk = 'cluster.karmada.io/Cluster' AND c->>'type' = 'Ready'`
      )[0]!.t;
    const b0 = await beat();
    await eventually(async () => (await beat()) !== b0, { timeoutMs: 5000, message: "heartbeats written again" });
  });
});
