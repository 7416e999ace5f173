import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { GK, bindingRefOfKey, rfc3339, type AnyResourceBinding } from "@flotilla/api";
import { eventually } from "@flotilla/testkit";
import { binding, cluster, placements } from "./fixtures.test-support.js";
import { scheduledCondition, startHarness, targets, type Harness } from "./harness.test-support.js";

// An Unschedulable binding waits for its retry timer (here 10 minutes) only when nothing that
// could let it fit happens; the ledger's settle period (here 1 minute) is longer than any test.
const RETRY_MS = 600_000;
const SETTLE_MS = 60_000;

const scheduled = (b: AnyResourceBinding) => scheduledCondition(b)?.status === "True" && b.status?.schedulerObservedGeneration === b.metadata.generation;
const unschedulable = (b: AnyResourceBinding) => scheduledCondition(b)?.reason === "Unschedulable";
const keyOf = (name: string) => `default/${name}-deployment`;

/** What the binding service writes once the member runs the binding's replicas. */
async function reportRunning(h: Harness, key: string): Promise<void> {
  await h.store.mutate<AnyResourceBinding>(
    bindingRefOfKey(key)!,
    (cur) => ({
      ...cur,
      status: { ...cur.status, aggregatedStatus: (cur.spec?.clusters ?? []).map((t) => ({ clusterName: t.name!, applied: true, health: "Healthy", status: { replicas: t.replicas ?? 0, readyReplicas: t.replicas ?? 0 } })) },
    }),
    { status: true },
  );
}

/** What execution writes on each probe of a Ready member: the heartbeat, taken before the summary's listing. */
async function probe(h: Harness, name: string, at: Date, allocatedPods?: number): Promise<void> {
  await h.mutateCluster(name, (c) => {
    const ready = c.status!.conditions!.find((x) => x.type === "Ready")!;
    ready.lastHeartbeatTime = rfc3339(at);
    if (allocatedPods !== undefined) c.status!.resourceSummary = { ...c.status!.resourceSummary, allocated: { pods: String(allocatedPods) } };
  });
  await eventually(() => h.app.clusters.get(name)?.status?.conditions?.find((x) => x.type === "Ready")?.lastHeartbeatTime === rfc3339(at), { message: `the snapshot holds ${name}'s probe` });
}

describe("an Unschedulable binding is tried again as soon as room appears, not after its retry timer", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ settings: { assumedLedger: true, assumedSettleMs: SETTLE_MS, unschedulableRetryMs: RETRY_MS } });
  });
  after(() => h.close());

  test("a cluster whose resource summary grows schedules it at once", async () => {
    await h.createCluster(cluster("grows", { pods: 2 }));
    await h.createBinding(binding("waits", { replicas: 3, placement: placements.dynamic(["grows"]) }));
    await h.until(keyOf("waits"), unschedulable);
    await h.mutateCluster("grows", (c) => (c.status!.resourceSummary!.allocatable!.pods = "10"));
    const b = await h.until(keyOf("waits"), scheduled, 5000);
    assert.deepEqual(targets(b), ["grows:3"]);
  });

  test("a cluster whose labels change to match schedules it at once", async () => {
    await h.createCluster(cluster("labelled", { pods: 10 }));
    const placement = { ...placements.dynamic(), clusterAffinity: { labelSelector: { matchLabels: { tier: "gold" } } } };
    await h.createBinding(binding("gold", { replicas: 2, placement }));
    await h.until(keyOf("gold"), (b) => scheduledCondition(b)?.status === "False");
    await h.mutateCluster("labelled", (c) => (c.metadata.labels = { ...c.metadata.labels, tier: "gold" }));
    const b = await h.until(keyOf("gold"), scheduled, 5000);
    assert.deepEqual(targets(b), ["labelled:2"]);
  });

  test("replicas the member reports running stop counting once a later capacity report counts them, and the parked binding fits at once", async () => {
    // 7 pod slots; the heartbeat (when execution last listed the member) is a minute old
    await h.createCluster(cluster("m1", { pods: 7 }));
    await probe(h, "m1", new Date(Date.now() - 60_000));
    await h.createBinding(binding("first", { replicas: 3, placement: placements.dynamic(["m1"]) }));
    assert.deepEqual(targets(await h.until(keyOf("first"), scheduled)), ["m1:3"]);
    // the member runs them; a summary from before they ran still has all 7 slots free
    await reportRunning(h, keyOf("first"));
    await eventually(() => h.app.ledger!.load(Date.now()).get("m1") && true, { message: "first's replicas assumed on m1" });
    // the next probe's summary counts them (3 allocated, 4 free), but its heartbeat is older than
    // the report: the ledger cannot tell the summary counts them, and counts them as well
    await probe(h, "m1", new Date(Date.now() - 30_000), 3);
    await h.createBinding(binding("second", { replicas: 4, placement: placements.dynamic(["m1"]) }));
    const parked = await h.until(keyOf("second"), unschedulable);
    assert.match(scheduledCondition(parked)!.message!, /Clusters available replicas 1 are not enough to schedule/);
    // a probe after the report (the summary unchanged: only the heartbeat moves) shows 4 free
    await sleep(2100); // the heartbeat has second precision, and the ledger allows a second of clock skew
    await probe(h, "m1", new Date());
    const b = await h.until(keyOf("second"), scheduled, 5000);
    assert.deepEqual(targets(b), ["m1:4"]);
    const m1 = b.status?.schedulingDiagnosis?.feasible?.find((f) => f.name === "m1");
    assert.equal(m1?.assumedReplicas, undefined, "nothing assumed on m1 any more");
  });

  test("a binding that goes gives its load back and the parked binding fits at once", async () => {
    await h.createCluster(cluster("m2", { pods: 6 }));
    await h.createBinding(binding("holder", { replicas: 3, placement: placements.dynamic(["m2"]) }));
    await h.until(keyOf("holder"), scheduled);
    await h.createBinding(binding("blocked", { replicas: 4, placement: placements.dynamic(["m2"]) }));
    await h.until(keyOf("blocked"), unschedulable);
    await h.store.delete({ gk: GK.resourceBinding, namespace: "default", name: "holder-deployment" });
    const b = await h.until(keyOf("blocked"), scheduled, 5000);
    assert.deepEqual(targets(b), ["m2:4"]);
  });

  test("heartbeats that let nothing go re-queue nothing, a parked binding included", async () => {
    await h.createBinding(binding("huge", { replicas: 100, placement: placements.dynamic(["m1"]) }));
    await h.until(keyOf("huge"), unschedulable);
    await eventually(() => h.app.controller.snapshot().queueDepth === 0 && h.app.controller.snapshot().inFlight === 0, { message: "the scheduler is idle" });
    const reconciles = async () => [...(await h.app.registry.text()).matchAll(/^flotilla_controller_reconcile_total\{[^}]*controller="scheduler"[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    const before = await reconciles();
    assert.ok(before > 0);
    for (let i = 1; i <= 3; i++) await probe(h, "m1", new Date(Date.now() + i * 1000));
    await sleep(600);
    assert.equal(await reconciles(), before);
  });
});
