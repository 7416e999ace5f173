import { test } from "node:test";
import assert from "node:assert/strict";
import { GK, executionNamespace, type Work } from "@flotilla/api";
import type { ObjectStore } from "@flotilla/store";
import { eventually } from "@flotilla/testkit";
import { condition, configMap, deployment, harness, type Harness } from "../int.test-support.js";

interface MS {
  identifier: { kind: string; name: string };
  health: string;
  status?: Record<string, unknown>;
}
const statusesOf = (w: Work | undefined): MS[] => ((w?.status as { manifestStatuses?: MS[] } | undefined)?.manifestStatuses ?? []);
const healthOf = (w: Work | undefined, kind: string) => statusesOf(w).find((m) => m.identifier.kind === kind)?.health;
const dataOf = (o: unknown): Record<string, string> | undefined => (o as { data?: Record<string, string> } | undefined)?.data;

async function joined(h: Harness, ...names: string[]): Promise<void> {
  for (const n of names) await h.join(n);
  await eventually(async () => (await Promise.all(names.map(async (n) => condition(await h.getCluster(n), "Ready")?.status === "True"))).every(Boolean), {
    timeoutMs: 10_000,
    message: "members Ready",
  });
}

/** The Work says Applied=True and its Deployment is Healthy with `replicas` ready. */
async function healthy(h: Harness, cluster: string, work: string, replicas: number, timeoutMs = 10_000): Promise<Work> {
  return eventually(
    async () => {
      const w = await h.getWork(cluster, work);
      const dep = statusesOf(w).find((m) => m.identifier.kind === "Deployment");
      return condition(w, "Applied")?.status === "True" && dep?.health === "Healthy" && dep.status?.readyReplicas === replicas ? w : undefined;
    },
    { timeoutMs, message: `${cluster}/${work} Applied and Healthy` },
  );
}

test("a new execution service compares every Work with what its members hold and applies again what they lost or changed while it was away", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }, { name: "member2" }] });
  await joined(h, "member1", "member2");
  const members = ["member1", "member2"] as const;

  // a Duplicated Deployment: the same manifests in one Work per member
  for (const m of members) await h.work(m, "web-dup", [deployment("web", 2), configMap("web-config", { mode: "a" })]);
  for (const m of members) await healthy(h, m, "web-dup", 2);

  // the control plane goes away; meanwhile the members lose their contents (rebuilt), or drift
  await h.stopExecution();
  for (const m of members) h.sim.cluster(m).delete("apps/v1", "Deployment", "web", "default");
  h.sim.cluster("member1").delete("v1", "ConfigMap", "web-config", "default");
  h.sim.cluster("member2").patch("v1", "ConfigMap", "web-config", { data: { mode: "edited-on-the-member" } }, "default");
  for (const m of members) {
    assert.equal(h.sim.cluster(m).get("apps/v1", "Deployment", "web", "default"), undefined);
    // what the Works say is the memory of an earlier life
    const w = await h.getWork(m, "web-dup");
    assert.equal(condition(w, "Applied")?.status, "True");
    assert.equal(healthOf(w, "Deployment"), "Healthy");
  }

  // a new service on the same database: nothing wakes these Works but its own start
  const t0 = Date.now();
  await h.startAgain();
  await eventually(
    () =>
      members.every((m) => h.sim.cluster(m).get("apps/v1", "Deployment", "web", "default")?.spec?.replicas === 2) &&
      members.every((m) => dataOf(h.sim.cluster(m).get("v1", "ConfigMap", "web-config", "default"))?.mode === "a"),
    { timeoutMs: 5_000, intervalMs: 20, message: "the Deployment and ConfigMap back on every member, as the Works say" },
  );
  const backMs = Date.now() - t0;
  t.diagnostic(`back on both members ${backMs} ms after the start`);
  assert.ok(backMs < 5_000, `back within ${backMs} ms of the start`);
  for (const m of members) await healthy(h, m, "web-dup", 2);
});

test("a comparison that fails at the start (Postgres out of connections) is tried again until it succeeds: what the member lost comes back", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }, { name: "member2" }] });
  await joined(h, "member1", "member2");
  for (const m of ["member1", "member2"]) await h.work(m, "web-1", [deployment("web", 1)]);
  for (const m of ["member1", "member2"]) await healthy(h, m, "web-1", 1);

  await h.stopExecution();
  for (const m of ["member1", "member2"]) h.sim.cluster(m).delete("apps/v1", "Deployment", "web", "default");
  // member2's Works cannot be listed the first three times, as when Postgres refuses new connections
  let refusals = 3;
  const flaky = Object.create(h.store) as ObjectStore;
  flaky.list = (async (gk: string, o?: { namespace?: string }) => {
    if (gk === GK.work && o?.namespace === executionNamespace("member2") && refusals > 0) {
      refusals--;
      throw Object.assign(new Error("sorry, too many clients already"), { code: "53300" });
    }
    return h.store.list(gk, o);
  }) as ObjectStore["list"];
  await h.startAgain({ store: flaky });
  await eventually(() => ["member1", "member2"].every((m) => h.sim.cluster(m).get("apps/v1", "Deployment", "web", "default") !== undefined), {
    timeoutMs: 15_000,
    message: "the Deployment back on both members",
  });
  // the Work's own reconcile may bring the Deployment back first; the comparison keeps trying until its list goes through
  await eventually(() => refusals === 0, { timeoutMs: 15_000, message: "member2's listing retried past its three refusals" });
  assert.equal(refusals, 0, "member2's listing was refused three times before it went through");
});

test("a member that cannot be read is not reported Healthy, and what it lost is applied again within seconds of it being reachable", async (t) => {
  const h = await harness(t, { clusters: [{ name: "member1" }] });
  await joined(h, "member1");
  const m1 = h.sim.cluster("member1");
  await h.work("member1", "web-1", [deployment("web", 1)]);
  await healthy(h, "member1", "web-1", 1);

  // away: the member is rebuilt empty and is not reachable when the service starts again
  await h.stopExecution();
  m1.delete("apps/v1", "Deployment", "web", "default");
  await h.sim.setFault("member1", { mode: "unreachable" });
  await h.startAgain();

  // the member cannot be read: its Work's object is not Healthy any more (nor is the cluster Ready)
  const unknown = await eventually(
    async () => {
      const w = await h.getWork("member1", "web-1");
      return healthOf(w, "Deployment") === "Unknown" ? w : undefined;
    },
    { timeoutMs: 5_000, message: "the Deployment's health Unknown while member1 cannot be read" },
  );
  assert.notEqual(condition(await h.getCluster("member1"), "Ready")?.status, "True");
  assert.equal(statusesOf(unknown).length, 1);

  // it comes back: the Deployment is there again within seconds, and the Work says so truthfully
  await h.sim.setFault("member1", { mode: "healthy" });
  const t0 = Date.now();
  await eventually(() => m1.get("apps/v1", "Deployment", "web", "default") !== undefined, { timeoutMs: 8_000, intervalMs: 20, message: "the Deployment back on member1" });
  const backMs = Date.now() - t0;
  // Ready again takes CLUSTER_SUCCESS_THRESHOLD (1 s here); the Works follow at once
  t.diagnostic(`back on member1 ${backMs} ms after it was reachable`);
  assert.ok(backMs < 5_000, `back within ${backMs} ms of member1 being reachable`);
  await healthy(h, "member1", "web-1", 1);

  // while the service runs: the member goes away, loses its contents, and comes back
  await h.sim.setFault("member1", { mode: "unreachable" });
  await eventually(async () => healthOf(await h.getWork("member1", "web-1"), "Deployment") === "Unknown", { timeoutMs: 8_000, message: "Unknown while unreachable" });
  m1.delete("apps/v1", "Deployment", "web", "default");
  await h.sim.setFault("member1", { mode: "healthy" });
  await eventually(() => m1.get("apps/v1", "Deployment", "web", "default") !== undefined, { timeoutMs: 8_000, intervalMs: 20, message: "the Deployment back on member1 after the outage" });
  await healthy(h, "member1", "web-1", 1);
});
