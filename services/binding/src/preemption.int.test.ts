import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyPropagationPolicy, AnyResourceBinding, KubeObject } from "@flotilla/api";
import { listEventsFor } from "@flotilla/store";
import { eventually } from "@flotilla/testkit";
import { RB, admit, nginxDeployment, nginxPropagation, setup, sleep, type Env } from "./int.test-support.js";

const PP = "policy.karmada.io/PropagationPolicy";
const CPP = "policy.karmada.io/ClusterPropagationPolicy";
const DEPLOY = "apps/Deployment";
const NGINX = { gk: DEPLOY, namespace: "default", name: "nginx" };
const NGINX_RB = { gk: RB, namespace: "default", name: "nginx-deployment" };

const policy = (name: string, clusters: string[], o: { priority?: number; preemption?: "Always" | "Never" } = {}): KubeObject => {
  const p = nginxPropagation({ name, clusters });
  return { ...p, spec: { ...p.spec, ...(o.priority !== undefined ? { priority: o.priority } : {}), ...(o.preemption ? { preemption: o.preemption } : {}) } };
};
const claimedBy = async (env: Env) => {
  const a = (await env.store.get<KubeObject>(NGINX))?.metadata.annotations;
  return a?.["propagationpolicy.karmada.io/name"] ?? a?.["clusterpropagationpolicy.karmada.io/name"];
};
const placedOn = (b: AnyResourceBinding | undefined) => b?.spec?.placement?.clusterAffinity?.clusterNames;

test("with PolicyPreemption on, a higher-priority policy with preemption Always takes a claimed template over, its binding follows, an Event says so; lowering a policy's priority lets another take over", async () => {
  const env = await setup({ settings: { policyPreemption: true } });
  try {
    await env.store.create(admit(policy("low", ["member1"], { priority: 1 })));
    await env.store.create(nginxDeployment());
    await eventually(async () => placedOn(await env.store.get<AnyResourceBinding>(NGINX_RB))?.[0] === "member1", { message: "claimed by low" });

    // preemption Never with a higher priority changes nothing
    await env.store.create(admit(policy("never", ["member3"], { priority: 9, preemption: "Never" })));
    await sleep(500);
    assert.equal(await claimedBy(env), "low");

    await env.store.create(admit(policy("high", ["member2"], { priority: 5, preemption: "Always" })));
    const rb = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return placedOn(b)?.[0] === "member2" ? b : undefined;
    }, { message: "binding follows the preempting policy" });
    const high = (await env.store.get<AnyPropagationPolicy>({ gk: PP, namespace: "default", name: "high" }))!;
    assert.equal(rb.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"], high.metadata.labels?.["propagationpolicy.karmada.io/permanent-id"]);
    assert.equal(rb.metadata.annotations?.["propagationpolicy.karmada.io/name"], "high");
    assert.equal(await claimedBy(env), "high");
    const events = await eventually(async () => {
      const es = await listEventsFor(env.store, (await env.store.get<KubeObject>(NGINX))!);
      return es.some((e) => e.reason === "PreemptPolicySucceed") ? es : undefined;
    });
    assert.equal(events.find((e) => e.reason === "PreemptPolicySucceed")?.message, "Propagation policy(default/high) preempted propagation policy(default/low) successfully");

    // an Always policy of priority 3 cannot take over from high (5) until high drops to 2
    await env.store.create(admit(policy("mid", ["member3"], { priority: 3, preemption: "Always" })));
    await sleep(500);
    assert.equal(await claimedBy(env), "high");
    await env.store.mutate<AnyPropagationPolicy>({ gk: PP, namespace: "default", name: "high" }, (cur) => ({ ...cur, spec: { ...cur.spec, priority: 2 } }));
    await eventually(async () => placedOn(await env.store.get<AnyResourceBinding>(NGINX_RB))?.[0] === "member3", { message: "mid takes over once high is deprioritized" });
    assert.equal(await claimedBy(env), "mid");
  } finally {
    await env.close();
  }
});

test("with PolicyPreemption on, a PropagationPolicy with preemption Always takes over from a ClusterPropagationPolicy of any priority", async () => {
  const env = await setup({ settings: { policyPreemption: true } });
  try {
    const c = policy("cluster-wide", ["member1"], { priority: 100 });
    await env.store.create(admit({ ...c, kind: "ClusterPropagationPolicy", metadata: { name: "cluster-wide" } }));
    await env.store.create(nginxDeployment());
    await eventually(async () => placedOn(await env.store.get<AnyResourceBinding>(NGINX_RB))?.[0] === "member1", { message: "claimed by the CPP" });
    await env.store.create(admit(policy("ns-local", ["member2"], { priority: 0, preemption: "Always" })));
    const rb = await eventually(async () => {
      const b = await env.store.get<AnyResourceBinding>(NGINX_RB);
      return placedOn(b)?.[0] === "member2" ? b : undefined;
    });
    assert.equal(rb.metadata.labels?.["clusterpropagationpolicy.karmada.io/permanent-id"], undefined, "the CPP claim is gone from the binding");
    const t = (await env.store.get<KubeObject>(NGINX))!;
    assert.equal(t.metadata.annotations?.["clusterpropagationpolicy.karmada.io/name"], undefined, "and from the template");
    assert.equal(t.metadata.annotations?.["propagationpolicy.karmada.io/name"], "ns-local");
    assert.ok(await env.store.get({ gk: CPP, namespace: "", name: "cluster-wide" }), "the CPP stays");
  } finally {
    await env.close();
  }
});

test("with the PolicyPreemption gate off (the default, as upstream), preemption Always takes nothing over", async () => {
  const env = await setup();
  try {
    await env.store.create(admit(policy("low", ["member1"], { priority: 1 })));
    await env.store.create(nginxDeployment());
    await eventually(async () => placedOn(await env.store.get<AnyResourceBinding>(NGINX_RB))?.[0] === "member1");
    await env.store.create(admit(policy("high", ["member2"], { priority: 5, preemption: "Always" })));
    await sleep(800);
    assert.equal(await claimedBy(env), "low");
    assert.equal(placedOn(await env.store.get<AnyResourceBinding>(NGINX_RB))?.[0], "member1");
  } finally {
    await env.close();
  }
});
