// What a PropagationPolicy says about the objects on the members, end to end through the gateway
// with the services as processes and the simulator's members: conflictResolution (a Deployment
// already on member1 that Karmada did not create: Abort leaves it and says so, Overwrite takes it
// over), suspension (dispatchingOnClusters keeps member2's copy back until lifted) and
// preserveResourcesOnDeletion (deleting the template leaves the member copies, released).
// Needs the builds: npm run build
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { DEPLOY, RB, WORKS, startStack, type Obj, type Stack } from "../failover/harness.js";
import { bearer } from "../../load/lib/stack.js";

const PPS = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";

const web = (image: string): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", labels: { app: "web" } } as Obj["metadata"],
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image, resources: { requests: { cpu: "100m", memory: "64Mi" } } }] } },
  },
});

const policy = (spec: Record<string, unknown>): Obj => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata: { name: "web-propagation", namespace: "default" },
  spec: {
    resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }],
    placement: { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: { replicaSchedulingType: "Duplicated" } },
    ...spec,
  },
});

async function patchPolicy(s: Stack, spec: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${s.gw}${PPS}/web-propagation`, { method: "PATCH", headers: { "content-type": "application/merge-patch+json", ...bearer(s.token) }, body: JSON.stringify({ spec }) });
  assert.equal(r.status, 200, await r.text());
}

const cond = (o: Obj | undefined, type: string) => (o?.status?.conditions as { type: string; status: string; reason?: string; message?: string }[] | undefined)?.find((c) => c.type === type);
const imageOf = (o: Obj | undefined) => o?.spec?.template?.spec?.containers?.[0]?.image as string | undefined;

test("conflictResolution Abort leaves a Deployment Karmada did not create and says why, Overwrite takes it over; suspension holds a cluster back until lifted; preserveResourcesOnDeletion keeps the member copies", async (t) => {
  const s = await startStack({ readyDelayMs: 100 });
  t.after(() => s.close());
  const member = (c: string) => s.sim.cluster(c).get("apps/v1", "Deployment", "web", "default") as Obj | undefined;
  const work = async (c: string) => (await s.list(WORKS(c))).find((w) => (w.spec?.workload?.manifests?.[0] as Obj | undefined)?.metadata?.name === "web");
  try {
    // someone else's web on member1
    const theirs = web("registry.example/web:theirs");
    s.sim.cluster("member1").create({ ...theirs, apiVersion: "apps/v1", kind: "Deployment", metadata: { ...theirs.metadata } });

    await s.post("/apis/apps/v1/namespaces/default/deployments", web("nginx:1.25"));
    await s.post(PPS, policy({ suspension: { dispatchingOnClusters: { clusterNames: ["member2"] } } }));

    // Abort (the default): member1's Work fails with upstream's message and the object is left alone
    const failed = await eventually(async () => {
      const w = await work("member1");
      return cond(w, "Applied")?.status === "False" ? w : undefined;
    }, { timeoutMs: 30_000, message: "member1's Work fails to apply" });
    assert.equal(cond(failed, "Applied")?.reason, "AppliedFailed");
    assert.equal(
      cond(failed, "Applied")?.message,
      "Failed to apply all manifests (0/1): resource(kind=Deployment, default/web) already exists in the cluster member1 and the work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this resource",
    );
    assert.equal(imageOf(member("member1")), "registry.example/web:theirs");
    assert.equal((member("member1")?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.["karmada.io/managed"], undefined);
    type Item = { clusterName: string; applied: boolean; appliedMessage?: string };
    const m1Status = await eventually(async () => {
      const b = await s.get(RB("web-deployment"));
      return ((b?.status?.aggregatedStatus ?? []) as Item[]).find((i) => i.clusterName === "member1" && i.appliedMessage);
    }, { timeoutMs: 15_000, message: "the binding reports member1's failure" });
    assert.equal(m1Status.applied, false);
    assert.match(m1Status?.appliedMessage ?? "", /Karmada will not manage this resource/);

    // suspension: member2's Work exists but is not dispatched
    const held = await eventually(async () => {
      const w = await work("member2");
      return cond(w, "Dispatching")?.status === "False" ? w : undefined;
    }, { timeoutMs: 15_000, message: "member2's Work suspended" });
    assert.equal(held.spec?.suspendDispatching, true);
    assert.equal(cond(held, "Dispatching")?.reason, "SuspendDispatching");
    assert.equal(member("member2"), undefined, "nothing dispatched to member2");

    // Overwrite: member1's object is taken over
    await patchPolicy(s, { conflictResolution: "Overwrite" });
    await eventually(() => imageOf(member("member1")) === "nginx:1.25", { timeoutMs: 20_000, message: "member1's web taken over" });
    assert.equal((member("member1")!.metadata as { labels?: Record<string, string> }).labels?.["karmada.io/managed"], "true");
    await eventually(async () => cond(await work("member1"), "Applied")?.status === "True", { timeoutMs: 15_000, message: "member1's Work applied" });

    // lifting the suspension dispatches to member2
    await patchPolicy(s, { suspension: null, preserveResourcesOnDeletion: true });
    await eventually(() => imageOf(member("member2")) === "nginx:1.25", { timeoutMs: 20_000, message: "web dispatched to member2" });
    await eventually(async () => cond(await work("member2"), "Dispatching")?.status === "True", { timeoutMs: 10_000 });
    await eventually(async () => (await work("member1"))?.spec?.preserveResourcesOnDeletion === true && (await work("member2"))?.spec?.preserveResourcesOnDeletion === true, {
      timeoutMs: 10_000,
      message: "the Works preserve their resources",
    });

    // preserveResourcesOnDeletion: deleting the template leaves both copies, without Karmada's claim
    await s.del(DEPLOY("web"));
    await eventually(async () => !(await work("member1")) && !(await work("member2")), { timeoutMs: 30_000, message: "the Works are gone" });
    for (const c of ["member1", "member2"]) {
      const kept = member(c);
      assert.equal(imageOf(kept), "nginx:1.25", `${c} keeps web`);
      const labels = (kept!.metadata as { labels?: Record<string, string> }).labels ?? {};
      const annotations = (kept!.metadata as { annotations?: Record<string, string> }).annotations ?? {};
      assert.equal(labels["karmada.io/managed"], undefined, `${c}: no longer managed`);
      assert.equal(labels["work.karmada.io/permanent-id"], undefined);
      assert.equal(annotations["work.karmada.io/name"], undefined);
    }
  } catch (e) {
    console.error(s.logs().slice(-30_000));
    throw e;
  }
});
