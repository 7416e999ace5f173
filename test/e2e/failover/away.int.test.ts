// Nothing missed while away: the whole control plane is stopped, and meanwhile the members lose
// what they ran (rebuilt empty). The Works in the database still say Applied=True and Healthy —
// a memory of the earlier life. Started again, the stack compares every Work with what its
// member actually holds and puts the Duplicated Deployment back on every member within seconds.
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadConfigFile, startSimulator } from "@flotilla/member-sim";
import { eventually, freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ProcessLogs } from "../../load/lib/logs.js";
import { bearer, deleteStream, isolatedEnv, joinAndWaitReady, startServices, type Services } from "../../load/lib/stack.js";
import { KNOBS, RB, nginx, root, type Obj } from "./harness.js";

const MEMBERS = ["member1", "member2", "member3"];

describe("a stack stopped while its members lost their contents", () => {
  let db: TestDatabase;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let services: Services | undefined;
  let env: Record<string, string>;
  const logs = new ProcessLogs();

  before(async () => {
    const cfg = await loadConfigFile(path.join(root, "packages/member-sim/clusters.example.yaml"));
    sim = await startSimulator({ ...cfg, admin: { host: "127.0.0.1", port: 0 }, defaults: { ...cfg.defaults, readyDelayMs: 200 }, clusters: cfg.clusters.map((c) => ({ ...c, port: 0 })) });
    db = await freshDatabase();
    env = { ...isolatedEnv(db, "AWAY"), DATABASE_POOL_SIZE: "4", LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn", ...KNOBS };
    services = await startServices({ env, logs, readyTimeoutMs: 30_000 });
    await joinAndWaitReady({ gatewayUrl: services.gatewayUrl, token: services.token, adminUrl: sim.adminUrl!, sql: db.sql, count: cfg.clusters.length, timeoutMs: 60_000 });
  });

  after(async () => {
    await services?.stop();
    await sim?.close();
    await db?.drop();
    if (env) await deleteStream(env.EVENTS_STREAM);
  });

  const post = async (p: string, body: unknown) => {
    const r = await fetch(`${services!.gatewayUrl}${p}`, { method: "POST", headers: { "content-type": "application/json", ...bearer(services!.token) }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`POST ${p}: ${r.status} ${await r.text()}`);
  };
  const get = async (p: string): Promise<Obj | undefined> => {
    const r = await fetch(`${services!.gatewayUrl}${p}`, { headers: bearer(services!.token) });
    return r.ok ? ((await r.json()) as Obj) : undefined;
  };
  /** What the Works in the database say, per member: Applied and the Deployment's health. */
  const works = async () =>
    db.sql<{ ns: string; applied: string | null; health: string | null }[]>`
      SELECT body->'metadata'->>'namespace' AS ns,
             (SELECT c->>'status' FROM jsonb_array_elements(body->'status'->'conditions') c WHERE c->>'type' = 'Applied') AS applied,
             body->'status'->'manifestStatuses'->0->>'health' AS health
      FROM objects WHERE gk = 'work.karmada.io/Work' AND body->'metadata'->>'deletionTimestamp' IS NULL ORDER BY 1`;
  const readyOn = (m: string) => (sim.cluster(m).get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.status?.readyReplicas;

  test("started again, every member gets the Deployment back within seconds", async (t) => {
    try {
      await post("/apis/apps/v1/namespaces/default/deployments", nginx(2));
      await post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", {
        apiVersion: "policy.karmada.io/v1alpha1",
        kind: "PropagationPolicy",
        metadata: { name: "nginx-propagation", namespace: "default" },
        spec: {
          resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }],
          placement: { clusterAffinity: { clusterNames: MEMBERS }, replicaScheduling: { replicaSchedulingType: "Duplicated" } },
        },
      });
      await eventually(() => MEMBERS.every((m) => readyOn(m) === 2), { timeoutMs: 30_000, message: "nginx 2/2 on every member" });
      await eventually(async () => {
        const ws = await works();
        return ws.length === MEMBERS.length && ws.every((w) => w.applied === "True" && w.health === "Healthy");
      }, { timeoutMs: 15_000, message: "every Work Applied and Healthy" });

      await services!.stop();
      services = undefined;
      for (const m of MEMBERS) sim.cluster(m).delete("apps/v1", "Deployment", "nginx", "default");
      assert.ok(MEMBERS.every((m) => sim.cluster(m).get("apps/v1", "Deployment", "nginx", "default") === undefined));
      // what the database says is the memory of the earlier life
      assert.deepEqual(
        (await works()).map((w) => [w.applied, w.health]),
        MEMBERS.map(() => ["True", "Healthy"]),
      );

      services = await startServices({ env, logs, readyTimeoutMs: 30_000 });
      const t0 = Date.now();
      await eventually(() => MEMBERS.every((m) => sim.cluster(m).get("apps/v1", "Deployment", "nginx", "default") !== undefined), {
        timeoutMs: 10_000,
        intervalMs: 50,
        message: "nginx back on every member",
      });
      const backMs = Date.now() - t0;
      t.diagnostic(`nginx back on every member ${backMs} ms after the services were ready`);
      assert.ok(backMs < 5_000, `back within ${backMs} ms`);
      await eventually(() => MEMBERS.every((m) => readyOn(m) === 2), { timeoutMs: 15_000, message: "nginx 2/2 on every member again" });
      await eventually(async () => {
        const b = await get(RB("nginx-deployment"));
        const items = (b?.status?.aggregatedStatus ?? []) as { clusterName: string; applied: boolean; health: string }[];
        return items.length === MEMBERS.length && items.every((i) => i.applied && i.health === "Healthy");
      }, { timeoutMs: 15_000, message: "the binding's aggregated status Healthy on every member" });
    } catch (e) {
      console.error(logs.tail(30_000));
      throw e;
    }
  });
});
