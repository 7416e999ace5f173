import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidError, type KubeObject } from "@flotilla/api";
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

test("a field the interpreter reads that Kubernetes would not allow is an InvalidError naming every such field, never a TypeError", () => {
  const deploy = (spec: Record<string, unknown>) => workload("apps/v1", "Deployment", spec);
  const pod = (c: unknown, more: Record<string, unknown> = {}) => ({ spec: { containers: [c], ...more } });
  const cases: { name: string; t: KubeObject; fields: string[] }[] = [
    { name: "a cpu request of true", t: deploy({ template: pod({ name: "c", resources: { requests: { cpu: true } } }) }), fields: ["spec.template.spec.containers[0].resources.requests[cpu]"] },
    { name: "a cpu request of []", t: deploy({ template: pod({ name: "c", resources: { requests: { cpu: [] } } }) }), fields: ["spec.template.spec.containers[0].resources.requests[cpu]"] },
    { name: "a cpu request of {}", t: deploy({ template: pod({ name: "c", resources: { requests: { cpu: {} } } }) }), fields: ["spec.template.spec.containers[0].resources.requests[cpu]"] },
    { name: "a memory request that is no quantity", t: deploy({ template: pod({ name: "c", resources: { requests: { memory: "lots" } } }) }), fields: ["spec.template.spec.containers[0].resources.requests[memory]"] },
    { name: "a negative limit standing in for a request", t: deploy({ template: pod({ name: "c", resources: { limits: { cpu: "-1" } } }) }), fields: ["spec.template.spec.containers[0].resources.limits[cpu]"] },
    { name: "requests that are a list", t: deploy({ template: pod({ name: "c", resources: { requests: ["1"] } }) }), fields: ["spec.template.spec.containers[0].resources.requests"] },
    { name: "a container that is null", t: deploy({ template: pod(null) }), fields: ["spec.template.spec.containers[0]"] },
    { name: "containers that are an object", t: deploy({ template: { spec: { containers: { name: "c" } } } }), fields: ["spec.template.spec.containers"] },
    { name: "an overhead that is no quantity", t: deploy({ template: pod({ name: "c" }, { overhead: { cpu: false } }) }), fields: ["spec.template.spec.overhead[cpu]"] },
    { name: "a nodeSelector value that is not a string", t: deploy({ template: pod({ name: "c" }, { nodeSelector: { zone: 1 } }) }), fields: ["spec.template.spec.nodeSelector[zone]"] },
    { name: "replicas as a string", t: deploy({ replicas: "3" }), fields: ["spec.replicas"] },
    { name: "negative replicas", t: deploy({ replicas: -1 }), fields: ["spec.replicas"] },
    { name: "fractional replicas", t: deploy({ replicas: 1.5 }), fields: ["spec.replicas"] },
    { name: "a Job's completions as a string", t: workload("batch/v1", "Job", { parallelism: 2, completions: "4" }), fields: ["spec.completions"] },
    { name: "a spec that is not an object", t: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "w" }, spec: 5 } as KubeObject, fields: ["spec"] },
    {
      name: "every bad field at once",
      t: deploy({ replicas: true, template: pod({ name: "c", resources: { requests: { cpu: true, memory: [] } } }, { initContainers: [{ name: "i", resources: { limits: { cpu: {} } } }] }) }),
      fields: [
        "spec.replicas",
        "spec.template.spec.containers[0].resources.requests[cpu]",
        "spec.template.spec.containers[0].resources.requests[memory]",
        "spec.template.spec.initContainers[0].resources.limits[cpu]",
      ],
    },
  ];
  for (const c of cases) {
    assert.throws(
      () => interpretReplicas(c.t),
      (e: unknown) => {
        assert.ok(e instanceof InvalidError, `${c.name}: ${String(e)}`);
        assert.deepEqual(
          e.causes.map((x) => x.field),
          c.fields,
          c.name,
        );
        assert.match(e.message, /^Deployment\.apps "w" is invalid: |^Job\.batch "w" is invalid: /, c.name);
        return true;
      },
      c.name,
    );
  }
  assert.throws(
    () => interpretReplicas(deploy({ template: pod({ name: "c", resources: { requests: { cpu: true } } }) })),
    { message: 'Deployment.apps "w" is invalid: spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: true: must be a quantity (a string such as "100m" or "128Mi", or a number), not boolean' },
    "the message names the field, the value and what it must be",
  );
});
