// The policy API's Done-when examples end to end (gateway, services, simulated members): an
// OverridePolicy that rewrites the image registry for member1 only shows on member1's copy and not
// on member2's; a Deployment with propagateDeps brings its ConfigMap and Secret to exactly its
// clusters, and they follow it through the seed's Divided failover walk-through (member1 fails,
// the replica moves to member2, member1 returns and keeps nothing).
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "@flotilla/testkit";
import { RB, clustersOf, dividedPolicy, nginx, startStack, tasksOf, type Obj } from "../failover/harness.js";

test("an OverridePolicy for member1 only, and propagateDeps through the Divided failover walk-through", async (t) => {
  const s = await startStack();
  t.after(() => s.close());
  try {
    await s.post("/api/v1/namespaces/default/configmaps", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "nginx-conf" }, data: { "nginx.conf": "events {}" } });
    await s.post("/api/v1/namespaces/default/secrets", { apiVersion: "v1", kind: "Secret", metadata: { name: "nginx-tls" }, stringData: { "tls.key": "k" } });
    const dep = nginx(3) as Obj & { spec: { template: { spec: Record<string, unknown> } } };
    dep.spec.template.spec.volumes = [
      { name: "conf", configMap: { name: "nginx-conf" } },
      { name: "tls", secret: { secretName: "nginx-tls" } },
    ];
    await s.post("/apis/apps/v1/namespaces/default/deployments", dep);
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/overridepolicies", {
      apiVersion: "policy.karmada.io/v1alpha1",
      kind: "OverridePolicy",
      metadata: { name: "nginx-registry", namespace: "default" },
      spec: {
        resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }],
        overrideRules: [{ targetCluster: { clusterNames: ["member1"] }, overriders: { imageOverrider: [{ component: "Registry", operator: "add", value: "registry.example.com" }] } }],
      },
    });
    await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", { ...dividedPolicy, spec: { ...dividedPolicy.spec, propagateDeps: true } });

    const m = (name: string) => s.sim.cluster(name);
    const image = (c: string) => ((m(c).get("apps/v1", "Deployment", "nginx", "default") as Obj | undefined)?.spec?.template as { spec?: { containers?: { image?: string }[] } } | undefined)?.spec?.containers?.[0]?.image;
    const has = (c: string, kind: "ConfigMap" | "Secret", name: string) => m(c).get("v1", kind, name, "default") !== undefined;
    const deps = (c: string) => has(c, "ConfigMap", "nginx-conf") && has(c, "Secret", "nginx-tls");
    const none = (c: string) => !has(c, "ConfigMap", "nginx-conf") && !has(c, "Secret", "nginx-tls");

    await eventually(() => image("member1") !== undefined && image("member2") !== undefined, { timeoutMs: 30_000, message: "nginx on member1 and member2" });
    assert.equal(image("member1"), "registry.example.com/nginx", "member1's copy has the overridden registry");
    assert.equal(image("member2"), "nginx", "member2's copy is the template's");
    await eventually(() => deps("member1") && deps("member2"), { timeoutMs: 30_000, message: "the ConfigMap and Secret follow nginx to member1 and member2" });
    assert.ok(none("member3"), "and nowhere else");

    // the seed's failover: member1 goes away, nginx moves to member2:3, its dependencies stay there
    await s.sim.setFault("member1", { mode: "unreachable" });
    await eventually(async () => {
      const b = await s.get(RB("nginx-deployment"));
      return b && clustersOf(b).member2 === 3 && tasksOf(b).length === 0 ? b : undefined;
    }, { timeoutMs: 45_000, message: "nginx on member2:3 and the eviction task dropped" });
    assert.ok(deps("member2"), "the dependencies stay where nginx runs");
    // the ConfigMap's attached binding: required by nginx's binding, on nginx's clusters
    const requiredOn = async () => ((await s.get(RB("nginx-conf-configmap")))?.spec?.requiredBy as { name: string; clusters?: { name: string }[] }[] | undefined)?.flatMap((r) => (r.clusters ?? []).map((c) => `${r.name}@${c.name}`));
    await eventually(async () => JSON.stringify(await requiredOn()) === JSON.stringify(["nginx-deployment@member2"]), { timeoutMs: 20_000, message: "the ConfigMap's attached binding follows nginx to member2 only" });

    // member1 returns: nginx and its dependencies are gone from it, member2 keeps all, the image there is still the template's
    await s.sim.setFault("member1", { mode: "healthy" });
    await eventually(() => image("member1") === undefined && none("member1"), { timeoutMs: 30_000, message: "member1 keeps neither nginx nor its dependencies" });
    assert.ok(deps("member2"));
    assert.equal(image("member2"), "nginx");
  } catch (e) {
    console.error(s.logs());
    throw e;
  }
});
