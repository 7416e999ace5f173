import { test } from "node:test";
import assert from "node:assert/strict";
import { CORE, InvalidError, KARMADA, quantityErrors, storedTemplateErrors, validateObject, workloadErrors, type KubeObject } from "@flotilla/api";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pod = (containers: Json[] = [{ name: "c", image: "nginx", resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: 1 } } }], more: Json = {}): Json => ({
  metadata: { labels: { app: "a" } },
  spec: { containers, ...more },
});
const deployment = (spec: Json = {}): Json => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "default" }, spec: { replicas: 2, selector: { matchLabels: { app: "a" } }, template: pod(), ...spec } });
const job = (spec: Json = {}): Json => ({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j", namespace: "default" }, spec: { parallelism: 2, completions: 4, template: pod(), ...spec } });
const cronJob = (jobSpec: Json): Json => ({ apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "c", namespace: "default" }, spec: { schedule: "* * * * *", jobTemplate: { spec: jobSpec } } });

// ---- [case, template, fields of the errors] ----
const cases: Array<[string, Json, string[]]> = [
  ["a Deployment with requests, limits and a selector is valid", deployment(), []],
  ["quantities may be numbers", deployment({ template: pod([{ name: "c", resources: { requests: { cpu: 0.5, memory: 67108864 } } }]) }), []],
  ["a Deployment without spec, counts or template is valid (the member defaults them)", { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" } }, []],
  ["null fields count as unset", deployment({ replicas: null, selector: null, template: { spec: { containers: [{ name: "c", resources: null }] } } }), []],
  ["a cpu request of true is refused", deployment({ template: pod([{ name: "c", resources: { requests: { cpu: true } } }]) }), ["spec.template.spec.containers[0].resources.requests[cpu]"]],
  ["a cpu request of [] is refused", deployment({ template: pod([{ name: "c", resources: { requests: { cpu: [] } } }]) }), ["spec.template.spec.containers[0].resources.requests[cpu]"]],
  ["a cpu request of {} is refused", deployment({ template: pod([{ name: "c", resources: { requests: { cpu: {} } } }]) }), ["spec.template.spec.containers[0].resources.requests[cpu]"]],
  ["a request that is no quantity is refused", deployment({ template: pod([{ name: "c", resources: { requests: { memory: "lots" } } }]) }), ["spec.template.spec.containers[0].resources.requests[memory]"]],
  ["a negative limit is refused", deployment({ template: pod([{ name: "c", resources: { limits: { cpu: "-1" } } }]) }), ["spec.template.spec.containers[0].resources.limits[cpu]"]],
  ["a quantity too big for a number is refused", deployment({ template: pod([{ name: "c", resources: { limits: { cpu: "1e400" } } }]) }), ["spec.template.spec.containers[0].resources.limits[cpu]"]],
  ["init containers and the overhead are checked too", deployment({ template: pod(undefined, { initContainers: [{ name: "i", resources: { requests: { cpu: false } } }], overhead: { cpu: "x" } }) }), ["spec.template.spec.initContainers[0].resources.requests[cpu]", "spec.template.spec.overhead[cpu]"]],
  ["containers that are not a list are refused", deployment({ template: { spec: { containers: { name: "c" } } } }), ["spec.template.spec.containers"]],
  ["a container that is not an object is refused", deployment({ template: { spec: { containers: ["c", null] } } }), ["spec.template.spec.containers[0]", "spec.template.spec.containers[1]"]],
  ["requests that are not a map are refused", deployment({ template: pod([{ name: "c", resources: { requests: ["1"] } }]) }), ["spec.template.spec.containers[0].resources.requests"]],
  ["negative replicas are refused", deployment({ replicas: -1 }), ["spec.replicas"]],
  ["replicas as a string are refused", deployment({ replicas: "3" }), ["spec.replicas"]],
  ["fractional replicas are refused", deployment({ replicas: 1.5 }), ["spec.replicas"]],
  ["replicas beyond int32 are refused", deployment({ replicas: 2 ** 31 }), ["spec.replicas"]],
  ["a selector label that is not a string is refused", deployment({ selector: { matchLabels: { app: 1 } } }), ["spec.selector.matchLabels[app]"]],
  ["a selector with an unknown operator is refused", deployment({ selector: { matchExpressions: [{ key: "app", operator: "Like", values: ["a"] }] } }), ["spec.selector.matchExpressions[0].operator"]],
  ["a selector with an unknown field is refused", deployment({ selector: { matchLabel: { app: "a" } } }), ["spec.selector.matchLabel"]],
  ["template labels that are not strings are refused", deployment({ template: { metadata: { labels: { app: 1 } }, spec: { containers: [] } } }), ["spec.template.metadata.labels[app]"]],
  ["a nodeSelector value that is not a string is refused", deployment({ template: pod(undefined, { nodeSelector: { zone: 1 } }) }), ["spec.template.spec.nodeSelector[zone]"]],
  ["a toleration of the wrong shape is refused", deployment({ template: pod(undefined, { tolerations: [{ key: 1 }] }) }), ["spec.template.spec.tolerations[0].key"]],
  ["a required node affinity that is not an object is refused", deployment({ template: pod(undefined, { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] } } }) }), ["spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"]],
  ["a spec that is not an object is refused", { ...deployment(), spec: [] }, ["spec"]],
  ["a StatefulSet is checked like a Deployment", { ...deployment({ replicas: -2 }), kind: "StatefulSet" }, ["spec.replicas"]],
  ["a ReplicaSet is checked like a Deployment", { ...deployment({ replicas: "x" }), kind: "ReplicaSet" }, ["spec.replicas"]],
  ["a DaemonSet has no replicas to check but a pod template", { ...deployment({ replicas: "ignored", template: pod([{ resources: { requests: { cpu: true } } }]) }), kind: "DaemonSet" }, ["spec.template.spec.containers[0].resources.requests[cpu]"]],
  ["a Job's parallelism and completions are non-negative integers", job({ parallelism: -1, completions: "2" }), ["spec.parallelism", "spec.completions"]],
  ["a CronJob's job template is checked like a Job", cronJob({ parallelism: 1.5, template: pod([{ resources: { limits: { memory: {} } } }]) }), ["spec.jobTemplate.spec.parallelism", "spec.jobTemplate.spec.template.spec.containers[0].resources.limits[memory]"]],
  ["a CronJob whose job template is not an object is refused", { ...cronJob({}), spec: { jobTemplate: "x" } }, ["spec.jobTemplate"]],
  ["a Pod's spec is a pod spec", { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ resources: { requests: { cpu: null } } }] } }, ["spec.containers[0].resources.requests[cpu]"]],
  ["kinds that are not workloads are not looked at", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, spec: { replicas: -1 } }, []],
  ["a Deployment of another group is not looked at", { ...deployment({ replicas: -1 }), apiVersion: "example.com/v1" }, []],
];

for (const [name, obj, fields] of cases) {
  test(name, () => assert.deepEqual(workloadErrors(obj).map((e) => e.field), fields));
}

test("quantityErrors accepts what Kubernetes writes and names the reason otherwise", () => {
  for (const q of ["100m", "1.5", "128Mi", "1G", "2e3", 3, 0, "0"]) assert.deepEqual(quantityErrors(q, "q"), [], String(q));
  assert.equal(quantityErrors(true, "q")[0]!.reason, "FieldValueTypeInvalid");
  assert.match(quantityErrors("1x", "q")[0]!.message, /regular expression/);
  for (const q of ["1Gi ", " 100m", "1 Gi"]) assert.equal(quantityErrors(q, "q")[0]?.reason, "FieldValueInvalid", `${JSON.stringify(q)} has surrounding or inner whitespace`);
  assert.match(quantityErrors("-5", "q")[0]!.message, /greater than or equal to 0/);
});

test("a Work's manifests are checked as templates, with the manifest's place in the field", () => {
  const work: KubeObject = { apiVersion: "work.karmada.io/v1alpha1", kind: "Work", metadata: { name: "w", namespace: "karmada-es-m1" }, spec: { workload: { manifests: [deployment({ replicas: -1 })] } } };
  assert.throws(() => validateObject(KARMADA.work, work), (e: unknown) => e instanceof InvalidError && e.causes.some((c) => c.field === "spec.workload.manifests[0].spec.replicas"));
});

test("a template's metadata fields of the wrong JSON type are refused before the values are looked at", () => {
  const bad: Array<[Json, string]> = [
    [{ name: true }, "metadata.name"],
    [{ name: "x", labels: [] }, "metadata.labels"],
    [{ name: "x", labels: { a: 1 } }, "metadata.labels[a]"],
    [{ name: "x", generateName: 5 }, "metadata.generateName"],
    [{ name: "x", finalizers: "f" }, "metadata.finalizers"],
    [{ name: "x", ownerReferences: [{ uid: 1 }] }, "metadata.ownerReferences[0].uid"],
    [{ name: "x", creationTimestamp: "yesterday" }, "metadata.creationTimestamp"],
  ];
  for (const [metadata, field] of bad) {
    assert.throws(
      () => validateObject(CORE.configMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { namespace: "default", ...metadata } }),
      (e: unknown) => e instanceof InvalidError && e.causes.some((c) => c.field === field),
      field,
    );
  }
  // fields Kubernetes has and Flotilla does not read are left alone
  validateObject(CORE.configMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "default", managedFields: [{ manager: "kubectl" }], selfLink: "/x", creationTimestamp: null } as Json });
});

test("a stored template is checked like the gateway checks it: the types of its metadata and the workload fields controllers read", () => {
  const cases: Array<[string, Json, string[]]> = [
    ["a valid Deployment as the store returns it is readable", { ...deployment(), metadata: { name: "d", namespace: "default", uid: "u", resourceVersion: "12", generation: 1, creationTimestamp: "2024-01-01T00:00:00Z", managedFields: [{}] } }, []],
    ["a ConfigMap is only checked for its metadata", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "b" } }, []],
    ["a cpu request of true is named", deployment({ template: pod([{ name: "c", resources: { requests: { cpu: true } } }]) }), ["spec.template.spec.containers[0].resources.requests[cpu]"]],
    ["labels that are a list are named", { ...deployment(), metadata: { name: "d", labels: [] } }, ["metadata.labels"]],
    ["an annotation that is not a string is named", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", annotations: { a: 1 } } }, ["metadata.annotations[a]"]],
    ["metadata that is not an object is named", { apiVersion: "v1", kind: "ConfigMap", metadata: "x" }, ["metadata"]],
  ];
  for (const [name, t, fields] of cases) {
    assert.deepEqual(
      storedTemplateErrors(t).map((e) => e.field),
      fields,
      name,
    );
  }
});
