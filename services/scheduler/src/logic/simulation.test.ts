import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidError, BadRequestError } from "@flotilla/api";
import { schedule } from "@flotilla/scheduling";
import { binding, cluster, notReadyNoSchedule, placements } from "../fixtures.test-support.js";
import { parseSimulation, simulationResponse } from "./simulation.js";

function request(o: { clusters?: unknown; binding?: unknown } = {}) {
  const rb = binding("nginx", { replicas: 3 });
  return {
    apiVersion: "scheduling.flotilla.io/v1alpha1",
    kind: "Simulation",
    spec: {
      ...("clusters" in o ? { clusters: o.clusters } : { clusters: [cluster("member1", { taints: [notReadyNoSchedule] }), cluster("member2"), cluster("member3")] }),
      binding: "binding" in o ? o.binding : { metadata: { name: rb.metadata.name, namespace: "default" }, spec: rb.spec },
    },
  };
}

function fields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvalidError) return e.causes.map((c) => c.field);
    throw e;
  }
  assert.fail("expected an InvalidError");
}

test("a simulation answers where the binding would go, why the others were left out, and the condition", () => {
  const sim = parseSimulation(request());
  const out = simulationResponse(sim, schedule({ binding: sim.binding, clusters: sim.clusters! }), new Date("2026-03-01T10:00:00Z"));
  assert.equal(out.kind, "Simulation");
  assert.deepEqual(out.spec, request().spec, "the request is echoed back");
  assert.deepEqual(out.status, {
    clusters: [{ name: "member2", replicas: 3 }],
    diagnosis: {
      member1: [{ plugin: "TaintToleration", reason: "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}" }],
      member3: [{ plugin: "ClusterAffinity", reason: "cluster(s) did not match the placement cluster affinity constraint" }],
    },
    scores: [{ name: "member2", score: 0 }],
    conditions: [{ type: "Scheduled", status: "True", reason: "Success", message: "Binding has been scheduled successfully.", lastTransitionTime: "2026-03-01T10:00:00Z" }],
  });
});

test("nothing fitting gives an empty list and upstream's FitError message", () => {
  const sim = parseSimulation(request({ clusters: [cluster("member1", { taints: [notReadyNoSchedule] }), cluster("member3")] }));
  const out = simulationResponse(sim, schedule({ binding: sim.binding, clusters: sim.clusters! }), new Date());
  const status = out.status as { clusters: unknown[]; conditions: Array<{ reason: string; message: string }> };
  assert.deepEqual(status.clusters, []);
  assert.equal(status.conditions[0].reason, "NoClusterFit");
  assert.equal(status.conditions[0].message, "0/2 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.");
});

test("without spec.clusters the caller's current clusters are used", () => {
  const sim = parseSimulation(request({ clusters: undefined }));
  assert.equal(sim.clusters, undefined);
  assert.equal(sim.binding.kind, "ResourceBinding");
});

test("a ClusterResourceBinding can be simulated too", () => {
  const crb = binding("ns-config", { namespace: "", kind: "ConfigMap", placement: placements.duplicated() });
  const sim = parseSimulation(request({ binding: { kind: "ClusterResourceBinding", metadata: { name: crb.metadata.name }, spec: crb.spec } }));
  assert.equal(sim.binding.kind, "ClusterResourceBinding");
});

test("a body that is not an object is a bad request", () => {
  assert.throws(() => parseSimulation([1, 2]), BadRequestError);
  assert.throws(() => parseSimulation("x"), BadRequestError);
});

test("every bad field is named at once", () => {
  assert.deepEqual(fields(() => parseSimulation({ kind: "Simulated", spec: {} })), ["apiVersion", "kind", "spec.binding"]);
  assert.deepEqual(fields(() => parseSimulation({ ...request(), spec: { ...request().spec, extra: 1 } })), ["spec.extra"]);
});

test("the binding must carry a spec with a resource and a placement", () => {
  assert.deepEqual(fields(() => parseSimulation(request({ binding: { metadata: { name: "x" } } }))), ["spec.binding.spec"]);
  assert.deepEqual(fields(() => parseSimulation(request({ binding: { spec: { replicas: 2 } } }))), ["spec.binding.spec.resource", "spec.binding.spec.placement"]);
  assert.deepEqual(fields(() => parseSimulation(request({ binding: { spec: { replicas: "three", placement: {} } } }))), ["spec.binding.spec.replicas"]);
  assert.deepEqual(fields(() => parseSimulation(request({ binding: { spec: { ...binding("a").spec, placement: { clusterAfinity: {} } } } }))), ["spec.binding.spec.placement.clusterAfinity"]);
});

test("inline clusters are decoded strictly and named by position", () => {
  const bad = [cluster("member1"), { ...cluster("member2"), spec: { taints: "none" } }, { ...cluster("member1") }, { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: {} }, 7];
  assert.deepEqual(fields(() => parseSimulation(request({ clusters: bad }))), [
    "spec.clusters[1].spec.taints",
    "spec.clusters[2].metadata.name",
    "spec.clusters[3].metadata.name",
    "spec.clusters[4]",
  ]);
  assert.deepEqual(fields(() => parseSimulation(request({ clusters: { member1: {} } }))), ["spec.clusters"]);
});
