// Which policy a template follows, and when, end to end through the gateway, the services and the
// simulator: a Lazy policy's change waits for the template's next change; with POLICY_PREEMPTION
// a higher-priority policy with `preemption: Always` takes a claimed template over.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, sleep } from "@flotilla/testkit";
import { DEPLOY, RB, clustersOf, nginx, nginxPolicy, startStack, type Obj } from "../failover/harness.js";
import { bearer } from "../../load/lib/stack.js";

const PP = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";
const on = (cluster: string) => ({ clusterAffinity: { clusterNames: [cluster] }, replicaScheduling: { replicaSchedulingType: "Duplicated" } });

test("activationPreference Lazy and policy preemption", async (t) => {
  const s = await startStack({ env: { POLICY_PREEMPTION: "true" } });
  t.after(() => s.close());
  const patch = async (p: string, body: unknown) => {
    const r = await fetch(`${s.gw}${p}`, { method: "PATCH", headers: { "content-type": "application/merge-patch+json", ...bearer(s.token) }, body: JSON.stringify(body) });
    assert.equal(r.status, 200, await r.text());
  };
  const running = (cluster: string, name: string) => (s.sim.cluster(cluster).get("apps/v1", "Deployment", name, "default") as Obj | undefined)?.status?.readyReplicas === 1;
  const placed = async (name: string) => Object.keys(clustersOf(await s.get(RB(`${name}-deployment`)))).join(",");
  try {
    // Lazy: nginx on member1; the policy moves to member2 but nginx stays until nginx itself changes
    await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(1));
    await s.post(PP, nginxPolicy(on("member1"), { activationPreference: "Lazy" }));
    await eventually(() => running("member1", "nginx"), { timeoutMs: 30_000, message: "nginx running on member1" });
    await patch(`${PP}/nginx-propagation`, { spec: { placement: on("member2") } });
    await sleep(3000);
    assert.equal(await placed("nginx"), "member1", "a Lazy policy's change waits");
    assert.ok(running("member1", "nginx") && !s.sim.cluster("member2").get("apps/v1", "Deployment", "nginx", "default"));
    await patch(DEPLOY("nginx"), { metadata: { labels: { app: "nginx", rollout: "2" } } });
    await eventually(async () => (await placed("nginx")) === "member2" && running("member2", "nginx"), { timeoutMs: 30_000, message: "nginx moves to member2 with its own change" });
    await eventually(() => !s.sim.cluster("member1").get("apps/v1", "Deployment", "nginx", "default"), { timeoutMs: 30_000, message: "and leaves member1" });

    // preemption: web follows a low-priority policy (member1) until a higher one with preemption: Always claims it (member3)
    const web = { ...nginx(1), metadata: { name: "web", namespace: "default", labels: { app: "web" } } } as Obj;
    await s.post("/apis/apps/v1/namespaces/default/deployments", web);
    const webPolicy = (name: string, cluster: string, spec: Record<string, unknown>) => ({ ...nginxPolicy(on(cluster), spec), metadata: { name, namespace: "default" }, spec: { ...nginxPolicy(on(cluster), spec).spec, resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }] } });
    await s.post(PP, webPolicy("web-low", "member1", { priority: 1 }));
    await eventually(() => running("member1", "web"), { timeoutMs: 30_000, message: "web running on member1" });
    await s.post(PP, webPolicy("web-high", "member3", { priority: 10, preemption: "Always" }));
    await eventually(async () => (await placed("web")) === "member3" && running("member3", "web"), { timeoutMs: 30_000, message: "the higher-priority policy takes web over" });
    const rb = await s.get(RB("web-deployment"));
    assert.equal((rb?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.["propagationpolicy.karmada.io/name"], "web-high");
  } catch (e) {
    console.error(s.logs());
    throw e;
  }
});
