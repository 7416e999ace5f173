import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { bindingKey, bindingRefOfKey, type AnyResourceBinding, type KubeObject } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { binding, cluster, placements } from "./fixtures.test-support.js";
import { scheduledCondition, startHarness, targets, type Harness } from "./harness.test-support.js";
import type { BindingStore } from "./controllers/scheduler.js";

const scheduled = (b: AnyResourceBinding) => scheduledCondition(b)?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation;

/** Runs `hook` (once) right before the scheduler's next write of that kind (a decision, or a status alone) to that binding. */
class Interposer {
  readonly spec = new Map<string, () => Promise<void>>();
  readonly status = new Map<string, () => Promise<void>>();
  wrap(store: ObjectStore): BindingStore {
    const fire = async (hooks: Map<string, () => Promise<void>>, obj: KubeObject) => {
      const key = bindingKey(obj);
      const h = hooks.get(key);
      if (h) {
        hooks.delete(key);
        await h();
      }
    };
    return {
      get: (ref) => store.get(ref),
      updateWithStatus: async (obj) => (await fire(this.spec, obj), store.updateWithStatus(obj)),
      updateStatus: async (obj) => (await fire(this.status, obj), store.updateStatus(obj)),
    };
  }
}

describe("concurrent writes to one binding", () => {
  let h: Harness;
  const hooks = new Interposer();
  before(async () => {
    h = await startHarness({ bindings: (store) => hooks.wrap(store) });
    for (const n of ["member1", "member2", "member3"]) await h.createCluster(cluster(n));
  });
  after(() => h.close());

  const mutate = (key: string, f: (b: AnyResourceBinding) => AnyResourceBinding, status = false) => h.store.mutate(bindingRefOfKey(key)!, f, { status, attempts: 1000 });

  test("an eviction task and a label written while the scheduler writes spec.clusters are kept, and the decision is made again on top of them", async () => {
    const key = "default/nginx-deployment";
    await h.createBinding(binding("nginx", { replicas: 3 }));
    await h.until(key, (b) => scheduled(b) && targets(b).join() === "member1:1,member2:2");
    const conflictsBefore = h.app.metrics.conflicts;
    hooks.spec.set(key, async () => {
      // the taint manager evicts member1 and the detector relabels, both between the scheduler's read and its write
      await mutate(key, (b) => ({
        ...b,
        metadata: { ...b.metadata, labels: { ...b.metadata.labels, team: "payments" } },
        spec: { ...b.spec, clusters: b.spec!.clusters!.filter((t) => t.name !== "member1"), gracefulEvictionTasks: [{ fromCluster: "member1", reason: "TaintUntolerated", producer: "TaintManager", replicas: 1 }] },
      }));
    });
    await mutate(key, (b) => ({ ...b, spec: { ...b.spec, replicas: 6 } }));
    const b = await h.until(key, (x) => scheduled(x) && x.spec?.replicas === 6);
    assert.deepEqual(targets(b), ["member2:6"], "member1 is being evicted, so everything goes to member2");
    assert.equal(b.metadata.labels?.team, "payments");
    assert.deepEqual(b.spec?.gracefulEvictionTasks?.map((t) => t.fromCluster), ["member1"]);
    assert.ok(h.app.metrics.conflicts > conflictsBefore, "the scheduler's first write lost and was recomputed");
  });

  test("a status written by another controller between the scheduler's read and its write is kept, and the decision still recorded", async () => {
    const key = "default/api-deployment";
    await h.createBinding(binding("api", { replicas: 3 }));
    hooks.spec.set(key, async () => {
      await mutate(key, (b) => ({ ...b, status: { ...b.status, aggregatedStatus: [{ clusterName: "member2", applied: true, health: "Healthy" }], conditions: [...(b.status?.conditions ?? []), { type: "FullyApplied", status: "False", reason: "PartiallyApplied" }] } }), true);
    });
    const b = await h.until(key, scheduled);
    assert.deepEqual(targets(b), ["member1:1", "member2:2"]);
    assert.deepEqual(b.status?.aggregatedStatus, [{ clusterName: "member2", applied: true, health: "Healthy" }]);
    assert.deepEqual(b.status?.conditions?.map((c) => c.type).sort(), ["FullyApplied", "Scheduled"]);
    assert.ok(b.status?.lastScheduledTime);
    assert.equal(b.status?.schedulingDiagnosis?.result, "Success");
  });

  test("many writers racing the scheduler lose nothing", async () => {
    const key = "default/busy-deployment";
    await h.createBinding(binding("busy", { replicas: 2, placement: placements.duplicated(["member1", "member2"]) }));
    await h.until(key, scheduled);
    const writers = Array.from({ length: 4 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 15; i++) {
          await mutate(key, (b) => ({ ...b, metadata: { ...b.metadata, labels: { ...b.metadata.labels, [`w${w}-${i}`]: "x" } } }));
          await mutate(key, (b) => ({ ...b, status: { ...b.status, aggregatedStatus: [{ clusterName: "member1", applied: true, appliedMessage: `w${w}-${i}` }] } }), true);
        }
      })(),
    );
    const scaler = (async () => {
      for (const r of [3, 5, 4, 7]) {
        await mutate(key, (b) => ({ ...b, spec: { ...b.spec, replicas: r } }));
        await new Promise((res) => setTimeout(res, 15));
      }
    })();
    await Promise.all([...writers, scaler]);
    const b = await h.until(key, (x) => scheduled(x) && targets(x).join() === "member1:7,member2:7");
    for (let w = 0; w < 4; w++) for (let i = 0; i < 15; i++) assert.equal(b.metadata.labels?.[`w${w}-${i}`], "x", `label w${w}-${i}`);
    assert.equal(b.status?.aggregatedStatus?.length, 1);
  });
});
