import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { freshDatabase, type TestDatabase } from "@flotilla/testkit";
import { ObjectStore, createClient, type PlacementHistoryRecord } from "@flotilla/store";
import { gracefulEvictCluster, type AnyResourceBinding } from "@flotilla/api";

const RB = "work.karmada.io/ResourceBinding";
const CRB = "work.karmada.io/ClusterResourceBinding";

const rb = (name: string, clusters?: Array<{ name: string; replicas?: number }>): AnyResourceBinding => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ResourceBinding",
  metadata: { name, namespace: "default" },
  spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", name, namespace: "default" }, replicas: 3, ...(clusters ? { clusters } : {}) },
});
const crb = (name: string): AnyResourceBinding => ({
  apiVersion: "work.karmada.io/v1alpha2",
  kind: "ClusterResourceBinding",
  metadata: { name },
  spec: { resource: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name } },
});
const decided = (trigger: string, clusters: Array<{ name: string; replicas?: number }>) => ({
  conditions: [{ type: "Scheduled", status: "True", reason: "Success", message: "Binding has been scheduled successfully.", lastTransitionTime: "2026-01-01T00:00:00Z" }],
  schedulingDiagnosis: { time: new Date().toISOString(), trigger, result: "Success", clustersTotal: 3, feasible: clusters.map((c) => ({ name: c.name, selected: true, replicas: c.replicas })) },
});
const brief = (r: PlacementHistoryRecord) => ({ actor: r.actor, from: r.from, to: r.to, cause: r.cause });

describe("placement history", () => {
  let db: TestDatabase;
  let store: ObjectStore;
  let scheduler: ObjectStore;
  let taints: ObjectStore;
  before(async () => {
    db = await freshDatabase();
    store = new ObjectStore(db.sql);
    scheduler = new ObjectStore(db.sql, { actor: "service:scheduler" });
    taints = scheduler.as("service:taint-manager");
  });
  after(async () => db.drop());
  const ref = (name: string) => ({ gk: RB, namespace: "default", name });
  const history = async (gk: string, name: string, namespace = "default") => (await store.placementHistory({ gk, namespace, name })).records.map(brief);

  test("each change of spec.clusters is recorded with its writer and what the write said, nothing else is", async () => {
    const created = await store.create(rb("web"));
    assert.deepEqual(await history(RB, "web"), [], "a binding not yet placed has no history");
    const placed = [{ name: "member1", replicas: 1 }, { name: "member2", replicas: 2 }];
    const s1 = await scheduler.updateWithStatus({ ...created, spec: { ...created.spec, clusters: placed }, status: decided("placementChanged", placed) });
    // a status write and a spec write that leave spec.clusters alone are no placement change
    const s2 = await store.updateStatus({ ...s1, status: { ...s1.status, aggregatedStatus: [{ clusterName: "member1", applied: true }] } });
    const s3 = await store.update({ ...s2, metadata: { ...s2.metadata, labels: { a: "b" } } });
    // the taint manager evicts member1 into a graceful-eviction task (a spec-only write: the scheduler's old decision is not this change's)
    const evicted = structuredClone(s3);
    gracefulEvictCluster(evicted.spec!, "member1", { purgeMode: "Gracefully", message: "taint {cluster.karmada.io/not-ready:NoExecute} is not tolerated" });
    const s4 = await taints.update(evicted);
    const moved = [{ name: "member2", replicas: 3 }];
    const s5 = await scheduler.updateWithStatus({ ...s4, spec: { ...s4.spec, clusters: moved }, status: decided("replicasChanged", moved) });
    const h = await store.placementHistory(ref("web"));
    assert.equal(h.uid, created.metadata.uid);
    assert.deepEqual(h.records.map((r) => r.resourceVersion), [s1.metadata.resourceVersion, s4.metadata.resourceVersion, s5.metadata.resourceVersion]);
    assert.ok(h.records.every((r) => r.time instanceof Date && Date.now() - r.time.getTime() < 60_000));
    assert.deepEqual(h.records.map(brief), [
      {
        actor: "service:scheduler",
        from: [],
        to: placed,
        cause: { diagnosis: { trigger: "placementChanged", result: "Success", time: s1.status!.schedulingDiagnosis!.time }, scheduled: { status: "True", reason: "Success", message: "Binding has been scheduled successfully." } },
      },
      {
        actor: "service:taint-manager",
        from: placed,
        to: [{ name: "member2", replicas: 2 }],
        cause: { addedTasks: [{ fromCluster: "member1", purgeMode: "Gracefully", replicas: 1, reason: "TaintUntolerated", message: "taint {cluster.karmada.io/not-ready:NoExecute} is not tolerated", producer: "TaintManager" }] },
      },
      {
        actor: "service:scheduler",
        from: [{ name: "member2", replicas: 2 }],
        to: moved,
        cause: { diagnosis: { trigger: "replicasChanged", result: "Success", time: s5.status!.schedulingDiagnosis!.time }, scheduled: { status: "True", reason: "Success", message: "Binding has been scheduled successfully." } },
      },
    ]);
    // the eviction controller drops the task (spec.clusters unchanged): nothing recorded
    await store.update({ ...s5, spec: { ...s5.spec, gracefulEvictionTasks: [] } });
    assert.equal((await history(RB, "web")).length, 3);
  });

  test("writes of different writers batched into one statement each carry their own writer", async () => {
    // a pool of 2 sends one batch at a time: the first write leaves alone, the next four queue behind it and share a statement
    const sql = createClient(db.url, { max: 2 });
    try {
      const base = new ObjectStore(sql);
      const names = ["b0", "b1", "b2", "b3", "b4"];
      const made = await Promise.all(names.map((n) => base.create(rb(n))));
      const writers = [base, base.as("service:scheduler"), base.as("user:alice"), base, base.as("service:taint-manager")];
      await Promise.all(made.map((o, i) => writers[i]!.update({ ...o, spec: { ...o.spec, clusters: [{ name: "member1", replicas: 3 }] } })));
      const actors = await Promise.all(names.map(async (n) => (await history(RB, n))[0]?.actor));
      assert.deepEqual(actors, [undefined, "service:scheduler", "user:alice", undefined, "service:taint-manager"]);
      const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(DISTINCT rv)::int AS n FROM placement_history WHERE name = ANY(${names.slice(1)})`;
      assert.equal(n, 1, "the last four writes were one statement (one transaction)");
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  test("a binding created with clusters starts its history; an absent and an empty list are the same placement", async () => {
    const o = await store.as("user:bob").create(rb("born-placed", [{ name: "member3", replicas: 1 }]));
    assert.deepEqual(await history(RB, "born-placed"), [{ actor: "user:bob", from: [], to: [{ name: "member3", replicas: 1 }], cause: {} }]);
    const empty = await store.create(rb("empty"));
    await store.update({ ...empty, spec: { ...empty.spec, clusters: [] } });
    assert.deepEqual(await history(RB, "empty"), []);
    assert.ok(o.metadata.uid);
  });

  test("ClusterResourceBindings are recorded through the same trigger", async () => {
    const o = await store.create(crb("viewer"));
    await scheduler.updateWithStatus({ ...o, spec: { ...o.spec, clusters: [{ name: "member1" }, { name: "member2" }] }, status: decided("alwaysSchedule", [{ name: "member1" }, { name: "member2" }]) });
    const h = await history(CRB, "viewer", "");
    assert.equal(h.length, 1);
    assert.deepEqual([h[0]!.actor, h[0]!.to, h[0]!.cause.diagnosis?.trigger], ["service:scheduler", [{ name: "member1" }, { name: "member2" }], "alwaysSchedule"]);
  });

  test("a read takes the newest `limit` changes younger than `maxAgeMs`, oldest first; an unknown binding is NotFound", async () => {
    let o = await store.create(rb("many"));
    for (let i = 1; i <= 5; i++) o = await store.update({ ...o, spec: { ...o.spec, clusters: [{ name: "member1", replicas: i }] } });
    const r = await store.placementHistory(ref("many"), { limit: 2 });
    assert.deepEqual(r.records.map((x) => x.to[0]!.replicas), [4, 5]);
    await db.sql`UPDATE placement_history SET at = now() - interval '2 hours' WHERE name = 'many' AND (new_clusters -> 0 ->> 'replicas')::int <= 3`;
    assert.deepEqual((await store.placementHistory(ref("many"), { maxAgeMs: 3_600_000 })).records.map((x) => x.to[0]!.replicas), [4, 5]);
    assert.deepEqual((await store.placementHistory(ref("many"))).records.map((x) => x.to[0]!.replicas), [1, 2, 3, 4, 5]);
    await assert.rejects(store.placementHistory(ref("no-such-binding")), { name: "NotFoundError" });
  });

  test("pruning drops changes past the retention by age and per binding by count", async () => {
    let a = await store.create(rb("prune-a"));
    for (let i = 1; i <= 4; i++) a = await store.update({ ...a, spec: { ...a.spec, clusters: [{ name: "member1", replicas: i }] } });
    let b = await store.create(rb("prune-b"));
    for (let i = 1; i <= 2; i++) b = await store.update({ ...b, spec: { ...b.spec, clusters: [{ name: "member2", replicas: i }] } });
    await db.sql`UPDATE placement_history SET at = now() - interval '10 days' WHERE name = 'prune-b' AND (new_clusters -> 0 ->> 'replicas')::int = 1`;
    const counts = async () => Object.fromEntries((await db.sql<{ name: string; n: number }[]>`SELECT name, count(*)::int AS n FROM placement_history WHERE name IN ('prune-a', 'prune-b') GROUP BY name`).map((r) => [r.name, r.n]));
    assert.deepEqual(await counts(), { "prune-a": 4, "prune-b": 2 });
    const before = (await store.placementHistory(ref("prune-a"))).records;
    const deleted = await store.prunePlacementHistory({ maxAgeMs: 7 * 24 * 3_600_000, maxPerBinding: 3 });
    assert.ok(deleted >= 2, `deleted ${deleted}`);
    assert.deepEqual(await counts(), { "prune-a": 3, "prune-b": 1 });
    assert.deepEqual((await store.placementHistory(ref("prune-a"))).records, before.slice(1), "the oldest went, the newest stay");
    assert.equal(await store.prunePlacementHistory({ maxAgeMs: 0, maxPerBinding: 0 }), 0, "no retention prunes nothing");
  });

  test("the history goes with its binding: a binding made again under the name starts empty", async () => {
    const o = await store.create(rb("gone"));
    await store.update({ ...o, spec: { ...o.spec, clusters: [{ name: "member1", replicas: 1 }] } });
    assert.equal((await history(RB, "gone")).length, 1);
    await store.delete(ref("gone"));
    const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM placement_history WHERE uid = ${o.metadata.uid!}`;
    assert.equal(n, 0);
    const again = await store.create(rb("gone"));
    const h = await store.placementHistory(ref("gone"));
    assert.deepEqual([h.uid, h.records], [again.metadata.uid, []]);
  });
});
