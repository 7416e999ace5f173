// BINDING_UPDATE_DEBOUNCE end to end (Karmada #7805/#7810): a GitOps tool applies a Deployment's
// replica count and its PropagationPolicy's weights in two calls. With the debounce set, the
// scheduler places the pair once: 2→4 replicas plus weights 1:1→1:3 go from member1:1 member2:1
// straight to member1:1 member2:3, and neither the binding nor a member's Work ever carries the
// half-updated 2/2. A member failing while the next scale-up waits is failed over at once, not a
// debounce later. Every binding and Work version is recorded from the store's watch (the outbox),
// so an intermediate placement cannot slip by between two reads.
// Gateway, binding, scheduler, taint-manager, eviction and execution as processes, members simulated.
// Needs the builds: npx tsc -b services/gateway services/execution services/binding services/scheduler services/taint-manager services/eviction
import { test } from "node:test";
import assert from "node:assert/strict";
import { GK, type KubeObject } from "@flotilla/api";
import { ObjectStore } from "@flotilla/store";
import { eventually, sleep } from "@flotilla/testkit";
import { CLUSTER, DEPLOY, RB, clustersOf, nginx, nginxPolicy, taints, tasksOf, type Obj, type Stack, startStack } from "../failover/harness.js";
import { bearer } from "../../load/lib/stack.js";

const DEBOUNCE_MS = 15_000;
const POLICY = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies/nginx-propagation";

const weights = (w1: number, w2: number) => ({
  staticWeightList: [
    { targetCluster: { clusterNames: ["member1"] }, weight: w1 },
    { targetCluster: { clusterNames: ["member2"] }, weight: w2 },
  ],
});

const policy = nginxPolicy({
  clusterAffinity: { clusterNames: ["member1", "member2"] },
  replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted", weightPreference: weights(1, 1) },
});

async function patch(s: Stack, p: string, body: unknown): Promise<void> {
  const r = await fetch(`${s.gw}${p}`, { method: "PATCH", headers: { "content-type": "application/merge-patch+json", ...bearer(s.token) }, body: JSON.stringify(body) });
  assert.equal(r.status, 200, await r.text());
}

const placementOf = (b: Obj | undefined) =>
  Object.entries(clustersOf(b))
    .map(([n, r]) => `${n}:${r}`)
    .sort()
    .join(",");

interface Change {
  at: number;
  /** "binding" or the Work's namespace (karmada-es-<cluster>). */
  what: string;
  /** The binding's placement, or the replicas of the Deployment in the Work. */
  value: string;
}

/**
 * Records every change of nginx's binding placement and of the replicas in nginx's Works, in the
 * order written, from the watch history after `fromRv`.
 */
function record(s: Stack, fromRv: string, last: Map<string, string>): { changes: Change[]; stop(): Promise<void> } {
  const store = new ObjectStore(s.db.sql);
  const changes: Change[] = [];
  const abort = new AbortController();
  let failure: unknown;
  const done = (async () => {
    const events = await store.watch<KubeObject>([GK.resourceBinding, GK.work], { resourceVersion: fromRv, signal: abort.signal });
    for await (const e of events) {
      const o = e.object as Obj;
      let what: string;
      let value: string;
      if (o.kind === "ResourceBinding") {
        if (o.metadata.name !== "nginx-deployment") continue;
        what = "binding";
        value = placementOf(o);
      } else {
        const m = (o.spec?.workload?.manifests ?? []) as Obj[];
        const d = m.find((x) => x.kind === "Deployment" && x.metadata.name === "nginx");
        if (!d) continue;
        what = o.metadata.namespace!;
        value = e.type === "DELETED" ? "deleted" : String(d.spec?.replicas);
      }
      if (last.get(what) !== value) changes.push({ at: Date.now(), what, value });
      last.set(what, value);
    }
  })().catch((e: unknown) => {
    // once stopped, the end of the watch is no failure
    if (!abort.signal.aborted) failure = e;
  });
  return {
    changes,
    async stop() {
      abort.abort();
      await done;
      if (failure) throw failure;
    },
  };
}

test("with BINDING_UPDATE_DEBOUNCE, replicas 2→4 and weights 1:1→1:3 applied in two calls land once, and a failover during the next wait is not delayed", async (t) => {
  const s = await startStack({ env: { BINDING_UPDATE_DEBOUNCE: `${DEBOUNCE_MS}ms` } });
  t.after(() => s.close());
  let rec: ReturnType<typeof record> | undefined;
  try {
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(2));
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy);
    const first = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return placementOf(b) === "member1:1,member2:1" ? b : undefined;
    }, { timeoutMs: 30_000, message: "nginx scheduled member1:1 member2:1 (a first schedule is not delayed)" });
    const m1 = s.sim.cluster("member1");
    const m2 = s.sim.cluster("member2");
    const member = (c: typeof m1) => c.get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined;
    await eventually(() => member(m1)?.status?.readyReplicas === 1 && member(m2)?.status?.readyReplicas === 1, { timeoutMs: 30_000, message: "nginx running 1 + 1" });

    // --- the GitOps sync: the Deployment first, the policy half a second later ---
    // stopped before the stack (whose database it reads) is closed
    rec = record(s, (first as unknown as KubeObject).metadata.resourceVersion!, new Map([["binding", "member1:1,member2:1"], ["karmada-es-member1", "1"], ["karmada-es-member2", "1"]]));
    const t0 = Date.now();
    await patch(s, DEPLOY("nginx"), { spec: { replicas: 4 } });
    await sleep(500);
    await patch(s, POLICY, { spec: { placement: { replicaScheduling: { weightPreference: weights(1, 3) } } } });
    const placed = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return placementOf(b) === "member1:1,member2:3" ? b : undefined;
    }, { timeoutMs: DEBOUNCE_MS + 30_000, message: "nginx placed member1:1 member2:3" });
    await eventually(() => member(m1)?.status?.readyReplicas === 1 && member(m2)?.status?.readyReplicas === 3, { timeoutMs: 30_000, message: "nginx running 1 + 3" });
    const sync = rec.changes.splice(0);
    t.diagnostic(`after the sync (ms from the first call): ${sync.map((c) => `${c.what}=${c.value} @${c.at - t0}`).join(", ")}`);
    assert.deepEqual(
      sync.map((c) => [c.what, c.value]),
      [
        ["binding", "member1:1,member2:3"],
        ["karmada-es-member2", "3"],
      ],
      "one placement and member2's Work once to 3; member1's Work never changed (no 2/2 in between)",
    );
    const waited = sync[0].at - t0;
    assert.ok(waited >= DEBOUNCE_MS, `placed ${waited} ms after the first call: not before the debounce (${DEBOUNCE_MS} ms)`);
    const d = placed.status?.schedulingDiagnosis as { trigger?: string } | undefined;
    assert.equal(d?.trigger, "placementChanged");
    const metrics = await (await fetch(`http://127.0.0.1:${s.services.ports.get("scheduler")}/metrics`)).text();
    assert.match(metrics, /^flotilla_scheduler_debounced_total [1-9]\d*$/m);

    // --- the next scale-up waits; member1 fails meanwhile: the eviction is rescheduled at once ---
    const t1 = Date.now();
    await patch(s, DEPLOY("nginx"), { spec: { replicas: 6 } });
    await sleep(300);
    await s.sim.setFault("member1", { mode: "unreachable" });
    const moved = await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return placementOf(b) === "member2:6" ? b : undefined;
    }, { timeoutMs: DEBOUNCE_MS, message: "nginx failed over to member2:6" });
    const tookMs = Date.now() - t1;
    assert.deepEqual(tasksOf(moved), ["member1"]);
    assert.ok(taints(await s.get(CLUSTER("member1"))).some((x) => x.endsWith(":NoExecute")), "member1 tainted NoExecute");
    assert.ok(tookMs < DEBOUNCE_MS, `failed over ${tookMs} ms after the scale-up, inside the debounce (${DEBOUNCE_MS} ms)`);
    // past the end of the scale-up's wait: its timer finds the binding already scheduled
    await sleep(Math.max(0, t1 + DEBOUNCE_MS + 2000 - Date.now()));
    const failover = rec.changes.filter((c) => c.what === "binding");
    t.diagnostic(`failover (ms from the scale-up): ${failover.map((c) => `${c.value} @${c.at - t1}`).join(", ")}`);
    assert.deepEqual(
      failover.map((c) => c.value),
      ["member2:3", "member2:6"],
      "the eviction (the taint manager's write), its reschedule with the new replica count, and nothing when the wait ended",
    );
    assert.equal(placementOf(await s.get(RB("nginx-deployment"))), "member2:6");
  } catch (e) {
    console.error(s.logs());
    throw e;
  } finally {
    await rec?.stop();
  }
});
