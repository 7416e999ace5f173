// Move-back after recovery (Flotilla's, opt-in), end to end with every service as a process: the
// seed's Divided nginx (member1:1, member2:2) under a policy annotated
// failover.flotilla.io/move-back; member1 fails and its replica moves to member2 (member2:3);
// member1 returns, stays Ready for the (shrunk) window, and the original 1:2 split comes back
// the graceful way — member1's copy runs beside member2's three until it is ready, only then
// member2 goes to 2 — without the members ever holding fewer than 3 ready replicas.
// Needs the builds: npm run build
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, sleep } from "@flotilla/testkit";
import { CLUSTER, EVENTS, RB, clustersOf, dividedPolicy, nginx, ready, startStack, tasksOf, type Obj } from "./harness.js";

const WINDOW_S = 4;
const MOVE_BACK = "failover.flotilla.io/move-back";

test("move-back: member1 returns, stays healthy for the window, and the 1:2 split comes back without dropping below 3 ready", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  const members = ["member1", "member2", "member3"] as const;
  /** Ready replicas of nginx on the members that answer now. */
  const readyOnMembers = () =>
    members.reduce((n, m) => {
      const c = s.sim.cluster(m);
      if (c.fault?.mode === "unreachable") return n;
      return n + (((c.get("apps/v1", "Deployment", "nginx", "default")?.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0));
    }, 0);
  try {
    const policy = { ...dividedPolicy, metadata: { ...dividedPolicy.metadata, annotations: { [MOVE_BACK]: JSON.stringify({ stabilizationSeconds: WINDOW_S, maxConcurrent: 1 }) } } };
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(3));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy);
    const placed = (want: Record<string, number>) => async () => JSON.stringify(clustersOf(await s.get(RB("nginx-deployment")))) === JSON.stringify(want);
    await eventually(placed({ member1: 1, member2: 2 }), { timeoutMs: 30_000, message: "nginx on member1:1 member2:2" });
    await eventually(() => readyOnMembers() === 3, { timeoutMs: 30_000, message: "3 ready on the members" });
    assert.equal(((await s.get(RB("nginx-deployment")))?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[MOVE_BACK] !== undefined, true, "the binding carries the policy's move-back setting");

    // member1 fails: its replica moves to member2, and the placement before is recorded
    await s.sim.setFault("member1", { mode: "unreachable" });
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return JSON.stringify(clustersOf(b)) === JSON.stringify({ member2: 3 }) && tasksOf(b).length === 0;
    }, { timeoutMs: 60_000, message: "member2:3 and the eviction task dropped" });
    const evicted = await s.get(RB("nginx-deployment"));
    assert.equal((evicted?.metadata as { annotations?: Record<string, string> }).annotations?.["failover.flotilla.io/placement-before-failover"], '[{"name":"member1","replicas":1},{"name":"member2","replicas":2}]');

    // member1 returns; from here on, sample the ready replicas and every placement written
    await s.sim.setFault("member1", { mode: "healthy" });
    let minReady = Infinity;
    const placements: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        minReady = Math.min(minReady, readyOnMembers());
        const p = JSON.stringify(clustersOf(await s.get(RB("nginx-deployment"))));
        if (placements.at(-1) !== p) placements.push(p);
        await sleep(50);
      }
    })();
    const readyAt = await eventually(async () => {
      const c = await s.get(CLUSTER("member1"));
      const r = (c?.status?.conditions as { type: string; status: string; lastTransitionTime?: string }[] | undefined)?.find((x) => x.type === "Ready");
      return ready(c) === "True" && !(c?.spec?.taints ?? []).length ? Date.parse(r?.lastTransitionTime ?? "") : undefined;
    }, { timeoutMs: 30_000, message: "member1 Ready and untainted again" });
    await eventually(placed({ member1: 1, member2: 2 }), { timeoutMs: 60_000, message: "moved back to member1:1 member2:2" });
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      const a = (b?.metadata as { annotations?: Record<string, string>; labels?: Record<string, string> });
      return !a.annotations?.["failover.flotilla.io/placement-before-failover"] && !a.annotations?.["failover.flotilla.io/move-back-surge"] && !a.labels?.["failover.flotilla.io/moving-back"];
    }, { message: "the move-back record is gone" });
    await eventually(() => readyOnMembers() === 3 && s.sim.cluster("member1").get("apps/v1", "Deployment", "nginx", "default") !== undefined, { timeoutMs: 30_000, message: "3 ready again, 1 of them on member1" });
    sampling = false;
    await sampler;

    const events = (await s.list(EVENTS())).filter((e: Obj) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === "nginx-deployment");
    const started = events.find((e) => (e as { reason?: string }).reason === "MoveBackStarted") as { firstTimestamp?: string; eventTime?: string; metadata: { creationTimestamp?: string } } | undefined;
    assert.ok(started, `a MoveBackStarted event (have ${events.map((e) => (e as { reason?: string }).reason).join(", ")})`);
    assert.ok(events.some((e) => (e as { reason?: string }).reason === "MovedBack"), "a MovedBack event");
    const startedAt = Date.parse(started.firstTimestamp ?? started.eventTime ?? started.metadata.creationTimestamp ?? "");
    t.diagnostic(`member1 Ready at +0 ms, move-back started at +${startedAt - readyAt} ms (window ${WINDOW_S} s); placements after member1 returned: ${placements.join(" → ")}; fewest ready on the members: ${minReady}`);
    assert.ok(startedAt - readyAt >= WINDOW_S * 1000 - 1000, `started ${startedAt - readyAt} ms after member1 turned Ready (the window is ${WINDOW_S} s; event times have second precision)`);
    assert.deepEqual(placements, ['{"member2":3}', '{"member1":1,"member2":3}', '{"member1":1,"member2":2}'], "the surge first, then the placement before the failover");
    assert.ok(minReady >= 3, `never fewer than 3 ready on the members (fewest: ${minReady})`);
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
