// BINDING_UPDATE_DEBOUNCE against the real Postgres and NATS: a replica count and a weight change
// written in two steps are scheduled once, with no placement in between; a failover while an
// update waits is scheduled at once. Every version of the binding is recorded from the store's
// watch (the outbox), so an intermediate placement cannot slip by between two reads.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { bindingRefOfKey, gracefulEvictCluster, type AnyResourceBinding, type Placement } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { eventually, sleep } from "@flotilla/testkit";
import { binding, cluster, placements } from "./fixtures.test-support.js";
import { scheduledCondition, startHarness, targets, type Harness } from "./harness.test-support.js";

const DEBOUNCE_MS = 4000;

/** Static weights over member1 and member2. */
function weighted(w1: number, w2: number): Placement {
  const p = placements.seed();
  p.replicaScheduling!.weightPreference!.staticWeightList = [
    { targetCluster: { clusterNames: ["member1"] }, weight: w1 },
    { targetCluster: { clusterNames: ["member2"] }, weight: w2 },
  ];
  return p;
}

const scheduled = (b: AnyResourceBinding) => scheduledCondition(b)?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation;

interface Placed {
  at: number;
  rv: string;
  clusters: string;
}

/** Records every change of the binding's `spec.clusters` after the version `from`, as the store's watch delivers them. */
function recordPlacements(store: ObjectStore, key: string, from: AnyResourceBinding): { placed: Placed[]; stop(): Promise<void> } {
  const ref = bindingRefOfKey(key)!;
  const placed: Placed[] = [];
  const abort = new AbortController();
  let failure: unknown;
  let last = targets(from).join();
  const done = (async () => {
    const events = await store.watch<AnyResourceBinding>(ref.gk, { resourceVersion: from.metadata.resourceVersion, namespace: ref.namespace || undefined, signal: abort.signal });
    for await (const e of events) {
      if (e.object.metadata.name !== ref.name) continue;
      const now = targets(e.object).join();
      if (now !== last) placed.push({ at: Date.now(), rv: e.object.metadata.resourceVersion!, clusters: now });
      last = now;
    }
  })().catch((e: unknown) => {
    // once stopped, the end of the watch is no failure
    if (!abort.signal.aborted) failure = e;
  });
  return {
    placed,
    async stop() {
      abort.abort();
      await done;
      if (failure) throw failure;
    },
  };
}

async function update(h: Harness, key: string, f: (b: AnyResourceBinding) => AnyResourceBinding): Promise<void> {
  await h.store.mutate<AnyResourceBinding>(bindingRefOfKey(key)!, f);
}

describe("with BINDING_UPDATE_DEBOUNCE", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ settings: { bindingUpdateDebounceMs: DEBOUNCE_MS } });
    for (const n of ["member1", "member2", "member3"]) await h.createCluster(cluster(n));
  });
  after(() => h.close());

  test("a ClusterResourceBinding scaled 2→4 and re-weighted 1:1→1:3 in two steps is placed once, on member1:1 member2:3, a debounce after the first step", async () => {
    const key = "crd-deployment";
    await h.createBinding(binding("crd", { namespace: "", replicas: 2, placement: weighted(1, 1) }));
    const first = await h.until(key, scheduled);
    assert.equal(first.kind, "ClusterResourceBinding");
    assert.deepEqual(targets(first), ["member1:1", "member2:1"], "a first schedule is not delayed");

    const rec = recordPlacements(h.store, key, first);
    try {
      const t0 = Date.now();
      await update(h, key, (b) => ({ ...b, spec: { ...b.spec, replicas: 4 } }));
      // the policy's half lands a moment later: scheduled at once, 4 with 1:1 would be member1:2 member2:2
      await sleep(500);
      // when the wait began is on the binding (every replica, and a restarted one, counts from it)
      const pending = (await h.get(key))?.metadata.annotations?.["scheduling.flotilla.io/update-pending-since"];
      assert.ok(pending && Math.abs(Date.parse(pending) - t0) < 400, `the wait's start recorded on the binding (${pending}, first step at ${new Date(t0).toISOString()})`);
      await update(h, key, (b) => ({ ...b, spec: { ...b.spec, placement: weighted(1, 3) } }));
      const b = await h.until(key, (x) => scheduled(x) && targets(x).join() === "member1:1,member2:3", DEBOUNCE_MS + 10_000);
      // whatever else would have been written comes within the debounce after the last step
      await sleep(1000);
      assert.deepEqual(rec.placed.map((p) => p.clusters), ["member1:1,member2:3"], "one placement, nothing in between");
      const waited = rec.placed[0].at - t0;
      assert.ok(waited >= DEBOUNCE_MS, `placed ${waited} ms after the first step, not before the debounce (${DEBOUNCE_MS} ms)`);
      assert.equal(b.status?.schedulingDiagnosis?.trigger, "placementChanged");
      assert.equal(b.metadata.annotations?.["scheduling.flotilla.io/update-pending-since"], undefined, "the record goes with the decision");
      assert.ok(h.app.metrics.debounced >= 2, `the passes of both steps waited (${h.app.metrics.debounced})`);
    } finally {
      await rec.stop();
    }
  });

  test("an eviction while a scale-up waits is scheduled at once, taking the new replica count along, and nothing is written when the wait ends", async () => {
    const key = "default/web-deployment";
    await h.createBinding(binding("web", { replicas: 2, placement: weighted(1, 1) }));
    const first = await h.until(key, scheduled);
    assert.deepEqual(targets(first), ["member1:1", "member2:1"]);

    const rec = recordPlacements(h.store, key, first);
    try {
      const t0 = Date.now();
      await update(h, key, (b) => ({ ...b, spec: { ...b.spec, replicas: 4 } }));
      await sleep(300);
      assert.deepEqual(targets(await h.get(key)), ["member1:1", "member2:1"], "the scale-up waits");
      // the taint manager evicts member1 into a graceful-eviction task
      await update(h, key, (b) => {
        const spec = structuredClone(b.spec!);
        gracefulEvictCluster(spec, "member1", { purgeMode: "Gracefully", message: "cluster member1 not ready" });
        return { ...b, spec };
      });
      const evicted = await h.until(key, (x) => scheduled(x) && targets(x).join() === "member2:4", DEBOUNCE_MS);
      // seen by a read at once; at most this long after the scale-up (the watch may report it later)
      const took = Date.now() - t0;
      await eventually(() => rec.placed.some((p) => p.clusters === "member2:4"), { message: "the watch reports the reschedule" });
      assert.ok(took < DEBOUNCE_MS, `rescheduled ${took} ms after the scale-up, inside the debounce`);
      assert.equal(evicted.status?.schedulingDiagnosis?.trigger, "replicasChanged");
      const spec = h.app.metrics.writes.spec;
      // past the end of the scale-up's wait: its timer finds nothing left to do
      await sleep(Math.max(0, t0 + DEBOUNCE_MS + 1000 - Date.now()));
      assert.deepEqual(rec.placed.map((p) => p.clusters), ["member2:1", "member2:4"], "the eviction (the taint manager's write), then its reschedule, and nothing after");
      assert.equal(h.app.metrics.writes.spec, spec, "no spec write when the wait ended");
    } finally {
      await rec.stop();
    }
  });
});

describe("without BINDING_UPDATE_DEBOUNCE (the default)", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    for (const n of ["member1", "member2"]) await h.createCluster(cluster(n));
  });
  after(() => h.close());

  test("the same two steps place the intermediate member1:2 member2:2 first (what the debounce is for)", async () => {
    const key = "crd-deployment";
    await h.createBinding(binding("crd", { namespace: "", replicas: 2, placement: weighted(1, 1) }));
    const first = await h.until(key, scheduled);
    const rec = recordPlacements(h.store, key, first);
    try {
      await update(h, key, (b) => ({ ...b, spec: { ...b.spec, replicas: 4 } }));
      await h.until(key, (x) => scheduled(x) && x.spec?.replicas === 4);
      await update(h, key, (b) => ({ ...b, spec: { ...b.spec, placement: weighted(1, 3) } }));
      await h.until(key, (x) => scheduled(x) && targets(x).join() === "member1:1,member2:3");
      // the watch may report the last placement a moment after a read sees it
      await eventually(() => rec.placed.some((p) => p.clusters === "member1:1,member2:3"), { message: "the watch reports the second placement" });
      assert.deepEqual(rec.placed.map((p) => p.clusters), ["member1:2,member2:2", "member1:1,member2:3"]);
      assert.equal(h.app.metrics.debounced, 0);
    } finally {
      await rec.stop();
    }
  });
});
