import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cluster } from "@flotilla/api";
import { failed, parseNames, policySimulation } from "./simulate.js";

const placement = { clusterAffinity: { clusterNames: ["member1", "member2"] }, replicaScheduling: { replicaSchedulingType: "Divided", replicaDivisionPreference: "Weighted" } };
const pp = { apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "nginx-propagation" }, spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "nginx" }], placement } };
const cluster = (name: string): Cluster => ({ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name }, spec: { syncMode: "Push" }, status: { conditions: [{ type: "Ready", status: "True", reason: "ClusterReady", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }] } }) as Cluster;

test("policySimulation: the binding the policy's first selector gets", () => {
  assert.deepEqual(policySimulation(pp, "p.yaml", { replicas: 3, namespace: "web" }), {
    apiVersion: "scheduling.flotilla.io/v1alpha1",
    kind: "Simulation",
    metadata: { name: "simulate-nginx-propagation" },
    spec: {
      binding: {
        apiVersion: "work.karmada.io/v1alpha2",
        kind: "ResourceBinding",
        metadata: { name: "nginx-deployment", namespace: "web" },
        spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", name: "nginx", namespace: "web" }, replicas: 3, placement },
      },
    },
  });
  const cpp = { kind: "ClusterPropagationPolicy", metadata: { name: "ns" }, spec: { resourceSelectors: [{ apiVersion: "v1", kind: "Namespace" }], placement } };
  const b = (policySimulation(cpp, "p.yaml", { namespace: "default" }).spec as { binding: unknown }).binding;
  assert.deepEqual(b, { apiVersion: "work.karmada.io/v1alpha2", kind: "ClusterResourceBinding", metadata: { name: "simulated-namespace" }, spec: { resource: { apiVersion: "v1", kind: "Namespace", name: "simulated" }, replicas: 1, placement } });
});

test("policySimulation --fail: the current clusters inline, the failed ones not ready and tainted", () => {
  const sim = policySimulation(pp, "p.yaml", { fail: ["member1"], clusters: [cluster("member1"), cluster("member2")], namespace: "default" });
  const clusters = (sim.spec as { clusters: Cluster[] }).clusters;
  assert.deepEqual(clusters[1], cluster("member2"));
  assert.deepEqual(clusters[0]!.spec?.taints, [{ key: "cluster.karmada.io/not-ready", effect: "NoSchedule" }, { key: "cluster.karmada.io/not-ready", effect: "NoExecute" }]);
  assert.deepEqual(clusters[0]!.status?.conditions?.map((c) => [c.type, c.status]), [["Ready", "False"]]);
  // a taint already there is not doubled
  assert.equal(failed(failed(cluster("x"))).spec?.taints?.length, 2);
});

test("policySimulation: what it cannot simulate names the file and the field", () => {
  const cases: Array<[unknown, Parameters<typeof policySimulation>[2], RegExp]> = [
    ["text", { namespace: "d" }, /p\.yaml: expected a PropagationPolicy/],
    [{ kind: "Deployment" }, { namespace: "d" }, /kind "Deployment" cannot be simulated/],
    [{ kind: "PropagationPolicy", metadata: { name: "x" }, spec: {} }, { namespace: "d" }, /PropagationPolicy x: spec\.placement is required/],
    [{ kind: "PropagationPolicy", spec: { placement, resourceSelectors: [] } }, { namespace: "d" }, /spec\.resourceSelectors\[0\] needs apiVersion and kind/],
    [pp, { namespace: "d", replicas: -1 }, /--replicas must be a whole number/],
    [pp, { namespace: "d", replicas: 1.5 }, /--replicas must be a whole number/],
    [pp, { namespace: "d", fail: ["member9"], clusters: [cluster("member1")] }, /--fail names clusters that do not exist: member9/],
  ];
  for (const [policy, o, re] of cases) assert.throws(() => policySimulation(policy, "p.yaml", o), re);
});

test("parseNames", () => {
  assert.deepEqual(parseNames(undefined), []);
  assert.deepEqual(parseNames(" member1, ,member2 "), ["member1", "member2"]);
});
