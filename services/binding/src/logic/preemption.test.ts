import { test } from "node:test";
import assert from "node:assert/strict";
import type { AnyPropagationPolicy, KubeObject, ResourceSelector } from "@flotilla/api";
import type { Claim } from "./claim.js";
import { mayPreempt, preemptedMessage, preemptor } from "./preemption.js";

const nginx: KubeObject = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx", namespace: "default", labels: { app: "nginx" } } };
const byName: ResourceSelector = { apiVersion: "apps/v1", kind: "Deployment", name: "nginx" };
const byKind: ResourceSelector = { apiVersion: "apps/v1", kind: "Deployment" };

type Opts = { priority?: number; preemption?: string; ns?: string; selectors?: ResourceSelector[]; deleting?: boolean };
const meta = (name: string, o: Opts, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), ...(o.deleting ? { deletionTimestamp: "2024-01-01T00:00:00Z" } : {}) });
const spec = (o: Opts) => ({ resourceSelectors: o.selectors ?? [byName], ...(o.priority !== undefined ? { priority: o.priority } : {}), ...(o.preemption ? { preemption: o.preemption } : {}) });
const pp = (name: string, o: Opts = {}): AnyPropagationPolicy => ({ apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: meta(name, o, o.ns ?? "default"), spec: spec(o) });
const cpp = (name: string, o: Opts = {}): AnyPropagationPolicy => ({ apiVersion: "policy.karmada.io/v1alpha1", kind: "ClusterPropagationPolicy", metadata: meta(name, o), spec: spec(o) });
const claimOfPolicy = (p: AnyPropagationPolicy): Claim => ({
  kind: p.kind as Claim["kind"],
  namespace: p.kind === "PropagationPolicy" ? (p.metadata.namespace ?? "") : "",
  name: p.metadata.name ?? "",
  id: "id",
});

test("who may take a template over from the policy that claims it", () => {
  const cases: [string, AnyPropagationPolicy, AnyPropagationPolicy | undefined, boolean][] = [
    ["a higher-priority PP with preemption Always takes over from a PP", pp("high", { priority: 5, preemption: "Always" }), pp("low", { priority: 1 }), true],
    ["preemption Never never takes over", pp("high", { priority: 5, preemption: "Never" }), pp("low", { priority: 1 }), false],
    ["no preemption set means Never", pp("high", { priority: 5 }), pp("low", { priority: 1 }), false],
    ["an equal priority is not enough", pp("same", { priority: 1, preemption: "Always" }), pp("low", { priority: 1 }), false],
    ["a lower priority is not enough", pp("lower", { priority: 0, preemption: "Always" }), pp("low", { priority: 1 }), false],
    ["a PP takes over from any CPP, whatever its priority", pp("pp", { priority: 0, preemption: "Always" }), cpp("cpp", { priority: 100 }), true],
    ["a CPP never takes over from a PP", cpp("cpp", { priority: 100, preemption: "Always" }), pp("pp", { priority: 0 }), false],
    ["a higher-priority CPP takes over from a CPP", cpp("high", { priority: 2, preemption: "Always" }), cpp("low", { priority: 1 }), true],
    ["a CPP of equal priority does not", cpp("same", { priority: 1, preemption: "Always" }), cpp("low", { priority: 1 }), false],
    ["a policy does not preempt itself", pp("low", { priority: 9, preemption: "Always" }), pp("low", { priority: 1 }), false],
    ["a PP of the same name in another namespace is another policy", pp("low", { priority: 9, preemption: "Always", ns: "other" }), pp("low", { priority: 1 }), true],
    ["a policy being deleted does not take over", pp("high", { priority: 5, preemption: "Always", deleting: true }), pp("low", { priority: 1 }), false],
    ["a claim whose policy is gone is released, not preempted", pp("high", { priority: 5, preemption: "Always" }), undefined, false],
    ["a negative priority is still lower", pp("zero", { priority: 0, preemption: "Always" }), pp("neg", { priority: -1 }), true],
  ];
  for (const [name, p, claiming, want] of cases) {
    const claim = claimOfPolicy(claiming ?? pp("low"));
    assert.equal(mayPreempt(p, claim, claiming), want, name);
  }
});

test("the policy that takes a claimed template over", () => {
  const low = pp("low", { priority: 1 });
  const cases: { name: string; claiming: AnyPropagationPolicy; candidates: AnyPropagationPolicy[]; want: string | undefined }[] = [
    { name: "none when no candidate preempts", claiming: low, candidates: [low, pp("other", { priority: 5 })], want: undefined },
    { name: "the highest priority of the preempting PPs", claiming: low, candidates: [low, pp("p5", { priority: 5, preemption: "Always" }), pp("p9", { priority: 9, preemption: "Always" })], want: "PropagationPolicy/p9" },
    { name: "at equal priority the smaller name", claiming: low, candidates: [pp("b", { priority: 5, preemption: "Always" }), pp("a", { priority: 5, preemption: "Always" })], want: "PropagationPolicy/a" },
    { name: "a PP before a CPP of higher priority (claimed by a CPP)", claiming: cpp("c0", { priority: 0 }), candidates: [cpp("c9", { priority: 9, preemption: "Always" }), pp("p0", { priority: 0, preemption: "Always" })], want: "PropagationPolicy/p0" },
    { name: "a higher CPP when no PP preempts (claimed by a CPP)", claiming: cpp("c0", { priority: 0 }), candidates: [cpp("c9", { priority: 9, preemption: "Always" }), pp("p0", { priority: 0 })], want: "ClusterPropagationPolicy/c9" },
    { name: "only selectors with a name count", claiming: low, candidates: [pp("kind", { priority: 9, preemption: "Always", selectors: [byKind] })], want: undefined },
    { name: "a selector naming another template does not count", claiming: low, candidates: [pp("web", { priority: 9, preemption: "Always", selectors: [{ ...byName, name: "web" }] })], want: undefined },
    { name: "a PP of another namespace does not count", claiming: low, candidates: [pp("far", { priority: 9, preemption: "Always", ns: "other" })], want: undefined },
  ];
  for (const c of cases) {
    const got = preemptor(nginx, claimOfPolicy(c.claiming), c.claiming, c.candidates);
    assert.equal(got ? `${got.kind}/${got.metadata.name}` : undefined, c.want, c.name);
  }
});

test("a cluster-scoped template can only be taken over by a CPP", () => {
  const ns: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } };
  const sel: ResourceSelector = { apiVersion: "v1", kind: "Namespace", name: "team" };
  const low = cpp("low", { priority: 1, selectors: [sel] });
  const got = preemptor(ns, claimOfPolicy(low), low, [pp("pp", { priority: 9, preemption: "Always", selectors: [sel] }), cpp("high", { priority: 2, preemption: "Always", selectors: [sel] })]);
  assert.equal(got?.metadata.name, "high");
});

test("the Event message names both policies as upstream does", () => {
  assert.equal(preemptedMessage(pp("high"), claimOfPolicy(pp("low"))), "Propagation policy(default/high) preempted propagation policy(default/low) successfully");
  assert.equal(preemptedMessage(pp("high"), claimOfPolicy(cpp("c"))), "Propagation policy(default/high) preempted cluster propagation policy(c) successfully");
  assert.equal(preemptedMessage(cpp("high"), claimOfPolicy(cpp("c"))), "Cluster propagation policy(high) preempted cluster propagation policy(c) successfully");
});
