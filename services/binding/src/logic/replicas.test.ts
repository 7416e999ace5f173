import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@flotilla/api";
import { interpretReplicas } from "./replicas.js";

const container = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ name: "c", image: "nginx", resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });
const workload = (apiVersion: string, kind: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion, kind, metadata: { name: "w", namespace: "default" }, spec });

test("replicas and requirements come from the template", () => {
  const cases: { name: string; t: KubeObject; want: ReturnType<typeof interpretReplicas> }[] = [
    {
      name: "a Deployment gives its replicas and its pod's requests",
      t: workload("apps/v1", "Deployment", { replicas: 3, template: { spec: { containers: [container({ cpu: "250m", memory: "64Mi" })] } } }),
      want: { replicas: 3, requirements: { resourceRequest: { cpu: "250m", memory: "64Mi" } } },
    },
    { name: "a Deployment without replicas has the API default of 1", t: workload("apps/v1", "Deployment", { template: { spec: { containers: [container()] } } }), want: { replicas: 1, requirements: undefined } },
    { name: "a StatefulSet gives its replicas", t: workload("apps/v1", "StatefulSet", { replicas: 2, template: { spec: {} } }), want: { replicas: 2, requirements: undefined } },
    { name: "a ReplicaSet gives its replicas", t: workload("apps/v1", "ReplicaSet", { replicas: 4, template: { spec: {} } }), want: { replicas: 4, requirements: undefined } },
    { name: "a Job gives its parallelism", t: workload("batch/v1", "Job", { parallelism: 3, template: { spec: {} } }), want: { replicas: 3, requirements: undefined } },
    { name: "a Job's parallelism is capped by its completions", t: workload("batch/v1", "Job", { parallelism: 5, completions: 2, template: { spec: {} } }), want: { replicas: 2, requirements: undefined } },
    { name: "a ConfigMap has no replicas", t: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" }, data: {} }, want: undefined },
    { name: "a DaemonSet has no replica hook", t: workload("apps/v1", "DaemonSet", { template: { spec: {} } }), want: undefined },
    {
      name: "containers add up, init containers are a floor, limits stand in for missing requests, overhead adds",
      t: workload("apps/v1", "Deployment", {
        replicas: 1,
        template: {
          spec: {
            containers: [container({ cpu: "250m" }, { memory: "128Mi" }), container({ cpu: "500m", memory: "64Mi" })],
            initContainers: [container({ cpu: "1", memory: "32Mi" })],
            overhead: { cpu: "100m" },
          },
        },
      }),
      want: { replicas: 1, requirements: { resourceRequest: { cpu: "1100m", memory: "192Mi" } } },
    },
    {
      name: "node selector, tolerations and required node affinity make the node claim",
      t: workload("apps/v1", "Deployment", {
        replicas: 2,
        template: {
          spec: {
            nodeSelector: { disk: "ssd" },
            tolerations: [{ key: "k", operator: "Exists" }],
            affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }] } } },
            containers: [container({ "nvidia.com/gpu": "1" })],
          },
        },
      }),
      want: {
        replicas: 2,
        requirements: {
          nodeClaim: {
            nodeSelector: { disk: "ssd" },
            tolerations: [{ key: "k", operator: "Exists" }],
            hardNodeAffinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }] },
          },
          resourceRequest: { "nvidia.com/gpu": "1" },
        },
      },
    },
  ];
  for (const c of cases) assert.deepEqual(interpretReplicas(c.t), c.want, c.name);
});
