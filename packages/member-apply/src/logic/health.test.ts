import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
import { interpretHealth, reflectStatus } from "./health.js";

const deploy = (replicas: number | undefined, status: Record<string, unknown>, generation = 2): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", generation, annotations: { "resourcetemplate.karmada.io/generation": "7" } },
  spec: replicas === undefined ? {} : { replicas },
  status,
});

const cases: [string, KubeObject | undefined, string][] = [
  ["a Deployment whose ready and updated replicas equal the desired ones at the current generation is Healthy", deploy(3, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3 }), "Healthy"],
  ["a Deployment with fewer ready replicas than desired is Unhealthy", deploy(3, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 2 }), "Unhealthy"],
  ["a Deployment whose controller has not seen the current generation is Unhealthy", deploy(3, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3 }), "Unhealthy"],
  ["a Deployment mid-rollout (old replicas not yet replaced) is Unhealthy", deploy(3, { observedGeneration: 2, replicas: 4, updatedReplicas: 2, readyReplicas: 3 }), "Unhealthy"],
  ["a Deployment without replicas means one replica", deploy(undefined, { observedGeneration: 2, updatedReplicas: 1, readyReplicas: 1 }), "Healthy"],
  ["a Deployment scaled to zero with no status counters is Healthy", deploy(0, { observedGeneration: 2 }), "Healthy"],
  ["a fresh Deployment without status is Unhealthy", deploy(2, {}, 1), "Unhealthy"],
  ["a StatefulSet follows the same rule", { ...deploy(2, { observedGeneration: 2, updatedReplicas: 2, readyReplicas: 2 }), kind: "StatefulSet" }, "Healthy"],
  ["a ConfigMap (no health hook) is Healthy", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: {} }, "Healthy"],
  ["a ClusterIP Service is Healthy", { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { type: "ClusterIP" } }, "Healthy"],
  ["a LoadBalancer Service without an ingress is Unhealthy", { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { type: "LoadBalancer" }, status: { loadBalancer: {} } }, "Unhealthy"],
  ["a LoadBalancer Service with an ingress is Healthy", { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { type: "LoadBalancer" }, status: { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } } }, "Healthy"],
  ["a bound PersistentVolumeClaim is Healthy", { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "p" }, status: { phase: "Bound" } }, "Healthy"],
  ["a pending PersistentVolumeClaim is Unhealthy", { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "p" }, status: { phase: "Pending" } }, "Unhealthy"],
  ["a running ready Pod is Healthy", { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } }, "Healthy"],
  ["a failed Job is Unhealthy", { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, status: { conditions: [{ type: "Failed", status: "True" }] } }, "Unhealthy"],
  ["an object that is not there is Unknown", undefined, "Unknown"],
];

for (const [name, obj, want] of cases) {
  test(name, () => assert.equal(interpretHealth(obj), want));
}

test("a Deployment's reflected status keeps the replica counters, observedGeneration, generation and the template generation", () => {
  assert.deepEqual(reflectStatus(deploy(3, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, conditions: [{ type: "Available" }] })), {
    replicas: 3,
    updatedReplicas: 3,
    readyReplicas: 3,
    availableReplicas: 3,
    observedGeneration: 2,
    generation: 2,
    resourceTemplateGeneration: 7,
  });
});

test("a kind without a reflect hook reflects its whole status, and none when it has none", () => {
  assert.deepEqual(reflectStatus({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, status: { succeeded: 1 } }), { succeeded: 1 });
  assert.equal(reflectStatus({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }), undefined);
});
