import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { GK, bindingRefOfKey, type AnyResourceBinding, type Placement } from "@flotilla/api";
import { eventually } from "@flotilla/testkit";
import { binding, cluster } from "./fixtures.test-support.js";
import type { SchedulerApp } from "./app.js";
import { startHarness, type Harness } from "./harness.test-support.js";

// Ten clusters with room for 20 replicas of 100m each (2 cpu); bindings of 3 replicas over
// exactly 2 clusters, created at once. Nothing reports back unless a test writes the status, so
// every cluster's capacity stays what its summary said before the burst.
const CLUSTERS = Array.from({ length: 10 }, (_, i) => `m${String(i).padStart(2, "0")}`);
const ROOM = 20;
const placement: Placement = {
  spreadConstraints: [{ spreadByField: "cluster", minGroups: 2, maxGroups: 2 }],
  replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: { dynamicWeight: "AvailableReplicas" } },
};

const scheduledOk = (b: AnyResourceBinding) => !!b.status?.conditions?.some((c) => c.type === "Scheduled" && c.status === "True");

async function bindings(h: Harness, prefix: string): Promise<AnyResourceBinding[]> {
  return (await h.store.list<AnyResourceBinding>(GK.resourceBinding)).items.filter((b) => b.metadata.name!.startsWith(prefix));
}

function perCluster(bs: AnyResourceBinding[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const b of bs) for (const t of b.spec?.clusters ?? []) out.set(t.name!, (out.get(t.name!) ?? 0) + (t.replicas ?? 0));
  return out;
}

async function burst(h: Harness, prefix: string, n: number): Promise<AnyResourceBinding[]> {
  await Promise.all(Array.from({ length: n }, (_, i) => h.createBinding(binding(`${prefix}${i}`, { replicas: 3, cpu: "100m", placement }))));
  return eventually(
    async () => {
      const all = await bindings(h, prefix);
      return all.length === n && all.every(scheduledOk) ? all : undefined;
    },
    { timeoutMs: 20_000, message: "every binding of the burst scheduled" },
  );
}

const loads = (h: Harness) => Object.fromEntries([...h.app.ledger!.load(Date.now())].map(([c, l]) => [c, l.pods]));

describe("the assumed ledger: a burst is spread by what it assigned, not piled onto stale capacity", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ settings: { assumedLedger: true, assumedSettleMs: 300, concurrency: 16 } });
    for (const n of CLUSTERS) await h.createCluster(cluster(n, { cpu: "2", pods: 110 }));
  });
  after(() => h.close());

  test("no cluster is asked for more than it has room for, and the burst uses most clusters", async () => {
    const all = await burst(h, "web", 60); // 180 replicas for 200 places
    const used = perCluster(all);
    assert.equal([...used.values()].reduce((a, b) => a + b, 0), 180);
    for (const [c, n] of used) assert.ok(n <= ROOM, `${c} was asked for ${n} replicas with room for ${ROOM}: ${JSON.stringify([...used])}`);
    assert.equal(used.size, CLUSTERS.length);
    assert.deepEqual(loads(h), Object.fromEntries(used));
    // the decision shows what was assumed of the clusters it looked at
    const late = all.find((b) => b.status?.schedulingDiagnosis?.feasible?.some((f) => (f.assumedReplicas ?? 0) > 0));
    assert.ok(late, "some decision saw assumed replicas");
  });

  test("the next binding that does not fit is not scheduled instead of overcommitting", async () => {
    await h.createBinding(binding("extra", { replicas: 30, cpu: "100m", placement }));
    const b = await eventually(async () => {
      const x = await h.get("default/extra-deployment");
      return x?.status?.conditions?.some((c) => c.type === "Scheduled") ? x : undefined;
    });
    // upstream's answer when two clusters cannot hold the replicas (a spread-selection error)
    const c = b.status!.conditions!.find((x) => x.type === "Scheduled")!;
    assert.deepEqual([c.status, c.reason, c.message], ["False", "SchedulerError", "failed to select clusters: no enough resource when selecting 2 clusters"]);
    assert.equal(b.spec?.clusters, undefined);
  });

  test("replicas the members report running stop counting once settled", async () => {
    const b = await h.get("default/web0-deployment");
    const items = (b!.spec!.clusters ?? []).map((t) => ({ clusterName: t.name!, applied: true, health: "Healthy", status: { replicas: t.replicas ?? 0, readyReplicas: t.replicas ?? 0 } }));
    await h.store.mutate<AnyResourceBinding>(bindingRefOfKey("default/web0-deployment")!, (cur) => ({ ...cur, status: { ...cur.status, aggregatedStatus: items } }), { status: true });
    const before = loads(h);
    const mine = Object.fromEntries((b!.spec!.clusters ?? []).map((t) => [t.name!, t.replicas!]));
    await eventually(() => Object.entries(mine).every(([c, n]) => (loads(h)[c] ?? 0) === before[c]! - n), { timeoutMs: 5000, message: "web0's replicas settled" });
  });

  test("a restarted scheduler rebuilds the same load from the bindings", async () => {
    const before = loads(h);
    await h.restart();
    assert.deepEqual(loads(h), before);
  });

  test("deleting bindings gives their load back at once", async () => {
    // (the extra binding may have found room meanwhile: its retries see the load settle)
    for (const b of await bindings(h, "")) await h.store.delete({ gk: GK.resourceBinding, namespace: "default", name: b.metadata.name! });
    await eventually(() => Object.keys(loads(h)).length === 0, { timeoutMs: 5000, message: "no load left" });
  });
});

describe("three scheduler replicas: one leads, the others keep their ledgers warm and take over", () => {
  let h: Harness;
  const others: SchedulerApp[] = [];
  before(async () => {
    h = await startHarness({ settings: { assumedLedger: true, assumedSettleMs: 300, concurrency: 16, leaderElect: true }, relay: { maxPerMessage: 1 } });
    for (const n of CLUSTERS) await h.createCluster(cluster(n, { cpu: "2", pods: 110 }));
    others.push(await h.replica(), await h.replica());
  });
  after(() => h.close());

  const replicas = () => [h.app, ...others];
  const pods = (a: SchedulerApp) => [...a.ledger!.load(Date.now()).values()].reduce((n, l) => n + l.pods, 0);

  test("exactly one replica decides, and every replica's ledger holds the whole load", async () => {
    await eventually(() => replicas().filter((a) => a.leading).length === 1, { message: "one leader" });
    const all = await burst(h, "multi", 30); // 90 replicas over 200 places
    const used = perCluster(all);
    assert.equal([...used.values()].reduce((a, b) => a + b, 0), 90);
    for (const [c, n] of used) assert.ok(n <= ROOM, `${c} was asked for ${n} replicas with room for ${ROOM}: ${JSON.stringify([...used])}`);
    const decided = replicas().map((a) => a.metrics.writes.spec);
    assert.equal(decided.filter((n) => n > 0).length, 1, `decisions per replica: ${decided}`);
    assert.equal(replicas().find((a) => a.leading)!.metrics.writes.spec, 30);
    await eventually(() => replicas().every((a) => pods(a) === 90), { timeoutMs: 5000, message: "every replica's ledger holds all 90 replicas" });
  });

  test("when the leader stops mid-burst another replica takes over, with a ledger that already holds the load", async () => {
    const leader = replicas().find((a) => a.leading)!;
    const pending = burst(h, "next", 20); // 60 more: 150 of 200 places
    await eventually(() => leader.metrics.writes.spec > 30, { message: "the leader started on the second burst" });
    await leader.stop(); // finishes what it took, hands the rest back
    const live = replicas().filter((a) => a !== leader);
    const next = await eventually(() => live.find((a) => a.leading), { timeoutMs: 5000, message: "another replica leads" });
    assert.equal(live.filter((a) => a.leading).length, 1);
    await pending;
    const late = await burst(h, "last", 10); // 30 more, decided on the new leader's ledger: 180 of 200
    const all = [...(await bindings(h, "multi")), ...(await bindings(h, "next")), ...late];
    const used = perCluster(all);
    assert.equal([...used.values()].reduce((a, b) => a + b, 0), 180);
    for (const [c, n] of used) assert.ok(n <= ROOM, `${c} was asked for ${n} replicas with room for ${ROOM}: ${JSON.stringify([...used])}`);
    assert.ok(next.metrics.writes.spec >= 10, `the new leader decided the last burst (${next.metrics.writes.spec} decisions)`);
    assert.equal(live.find((a) => a !== next)!.metrics.writes.spec, 0, "the standby decided nothing");
  });
});
