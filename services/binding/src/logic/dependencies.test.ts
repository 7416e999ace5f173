import assert from "node:assert/strict";
import test from "node:test";
import type { KubeObject } from "@flotilla/api";
import { dependedByLabel, dependenciesOf, inheritedPolicy, requiredClusters, snapshotOf, withRequiredBy, attachedBindingName } from "./dependencies.js";

const pod = {
  serviceAccountName: "runner",
  imagePullSecrets: [{ name: "registry" }],
  initContainers: [{ name: "init", envFrom: [{ configMapRef: { name: "init-env" } }] }],
  containers: [
    {
      name: "app",
      envFrom: [{ secretRef: { name: "app-secret-env" } }],
      env: [
        { name: "A", valueFrom: { configMapKeyRef: { name: "settings", key: "a" } } },
        { name: "B", valueFrom: { secretKeyRef: { name: "password", key: "b" } } },
        { name: "C", value: "plain" },
      ],
    },
  ],
  volumes: [
    { name: "conf", configMap: { name: "settings" } },
    { name: "cert", secret: { secretName: "tls" } },
    { name: "data", persistentVolumeClaim: { claimName: "data" } },
    { name: "mix", projected: { sources: [{ configMap: { name: "projected-cm" } }, { secret: { name: "projected-secret" } }, { serviceAccountToken: { path: "t" } }] } },
    { name: "csi", csi: { driver: "x", nodePublishSecretRef: { name: "csi-secret" } } },
    { name: "rbd", rbd: { image: "i", secretRef: { name: "rbd-secret" } } },
    { name: "az", azureFile: { secretName: "azure-secret", shareName: "s" } },
    { name: "tmp", emptyDir: {} },
  ],
};

const want = [
  ["ConfigMap", "init-env"],
  ["ConfigMap", "projected-cm"],
  ["ConfigMap", "settings"],
  ["Secret", "app-secret-env"],
  ["Secret", "azure-secret"],
  ["Secret", "csi-secret"],
  ["Secret", "password"],
  ["Secret", "projected-secret"],
  ["Secret", "rbd-secret"],
  ["Secret", "registry"],
  ["Secret", "tls"],
  ["ServiceAccount", "runner"],
  ["PersistentVolumeClaim", "data"],
].map(([kind, name]) => ({ apiVersion: "v1", kind, namespace: "ns", name }));

const workload = (apiVersion: string, kind: string, spec: unknown): KubeObject => ({ apiVersion, kind, metadata: { name: "w", namespace: "ns" }, spec } as KubeObject);
const template = { template: { spec: pod } };

const kinds: Array<[string, KubeObject]> = [
  ["a Deployment's pod template", workload("apps/v1", "Deployment", template)],
  ["a StatefulSet's pod template (no claim templates)", workload("apps/v1", "StatefulSet", template)],
  ["a DaemonSet's pod template", workload("apps/v1", "DaemonSet", template)],
  ["a ReplicaSet's pod template", workload("apps/v1", "ReplicaSet", template)],
  ["a Job's pod template", workload("batch/v1", "Job", template)],
  ["a CronJob's job template", workload("batch/v1", "CronJob", { jobTemplate: { spec: template } })],
  ["a Pod's own spec", workload("v1", "Pod", pod)],
];
for (const [what, t] of kinds) {
  test(`the dependencies of ${what} are its ConfigMaps, Secrets, ServiceAccount and PVCs in that order`, () => assert.deepEqual(dependenciesOf(t), want));
}

const cases: Array<[string, KubeObject, Array<[string, string]> | undefined]> = [
  ["a kind without the hook has no dependency interpreter", workload("v1", "ConfigMap", undefined), undefined],
  ["a Service has no dependency interpreter", workload("v1", "Service", { ports: [] }), undefined],
  ["a Deployment without a pod template has no dependencies", workload("apps/v1", "Deployment", {}), []],
  ["the default ServiceAccount is not a dependency", workload("apps/v1", "Deployment", { template: { spec: { serviceAccountName: "default", containers: [] } } }), []],
  ["empty names are skipped", workload("apps/v1", "Deployment", { template: { spec: { imagePullSecrets: [{ name: "" }], volumes: [{ name: "v", configMap: {} }] } } }), []],
  [
    "a name used twice is one dependency",
    workload("apps/v1", "Deployment", { template: { spec: { containers: [{ env: [{ valueFrom: { configMapKeyRef: { name: "c" } } }] }], volumes: [{ configMap: { name: "c" } }] } } }),
    [["ConfigMap", "c"]],
  ],
  [
    "a StatefulSet drops the PVCs its volumeClaimTemplates create",
    workload("apps/v1", "StatefulSet", {
      volumeClaimTemplates: [{ metadata: { name: "www" } }],
      template: { spec: { volumes: [{ persistentVolumeClaim: { claimName: "www" } }, { persistentVolumeClaim: { claimName: "shared" } }] } },
    }),
    [["PersistentVolumeClaim", "shared"]],
  ],
  [
    "a Deployment keeps a PVC named like a claim template (only StatefulSets have them)",
    workload("apps/v1", "Deployment", { volumeClaimTemplates: [{ metadata: { name: "www" } }], template: { spec: { volumes: [{ persistentVolumeClaim: { claimName: "www" } }] } } }),
    [["PersistentVolumeClaim", "www"]],
  ],
  [
    "an Ingress depends on the Secrets of its TLS entries, each once, entries without one skipped",
    workload("networking.k8s.io/v1", "Ingress", { tls: [{ hosts: ["a"], secretName: "a-tls" }, { hosts: ["b"] }, { secretName: "a-tls" }, { secretName: "b-tls" }] }),
    [
      ["Secret", "a-tls"],
      ["Secret", "b-tls"],
    ],
  ],
];
for (const [what, t, refs] of cases) {
  test(what, () => assert.deepEqual(dependenciesOf(t), refs?.map(([kind, name]) => ({ apiVersion: "v1", kind, namespace: "ns", name }))));
}

test("the depended-by label hashes namespace/name as upstream (test/test-binding → depended-by-5dbb6dc9c8)", () => {
  assert.equal(dependedByLabel("test", "test-binding"), "resourcebinding.karmada.io/depended-by-5dbb6dc9c8");
});

test("an attached binding is named like any binding of its object", () => {
  assert.equal(attachedBindingName({ kind: "ConfigMap", name: "Settings" }), "settings-configmap");
});

test("a parent's snapshot keeps its clusters' names only, sorted and deduplicated", () => {
  assert.deepEqual(snapshotOf("ns", "web-deployment", [{ name: "m2", replicas: 2 }, { name: "m1", replicas: 1 }, { name: "m2" }]), {
    namespace: "ns",
    name: "web-deployment",
    clusters: [{ name: "m1" }, { name: "m2" }],
  });
});

const a = snapshotOf("ns", "a-deployment", [{ name: "m1" }]);
const b = snapshotOf("ns", "b-deployment", [{ name: "m2" }]);
const requiredByCases: Array<[string, Parameters<typeof withRequiredBy>, ReturnType<typeof withRequiredBy>]> = [
  ["the first parent is the only entry", [undefined, "ns", "a-deployment", a], [a]],
  ["another parent is added, sorted by namespace/name", [[b], "ns", "a-deployment", a], [a, b]],
  ["a parent that moved replaces its own entry", [[a, b], "ns", "a-deployment", snapshotOf("ns", "a-deployment", [{ name: "m3" }])], [snapshotOf("ns", "a-deployment", [{ name: "m3" }]), b]],
  ["a parent that goes is removed", [[a, b], "ns", "a-deployment", undefined], [b]],
  ["removing a parent that is not listed changes nothing", [[b], "ns", "a-deployment", undefined], [b]],
];
for (const [what, args, expected] of requiredByCases) test(`requiredBy: ${what}`, () => assert.deepEqual(withRequiredBy(...args), expected));

test("an attached binding's clusters are the union of its requiredBy clusters", () => {
  assert.deepEqual(requiredClusters([snapshotOf("ns", "a", [{ name: "m2" }, { name: "m1" }]), snapshotOf("ns", "b", [{ name: "m3" }, { name: "m1" }])]), ["m1", "m2", "m3"]);
  assert.deepEqual(requiredClusters([]), []);
});

const policyCases: Array<[string, Parameters<typeof inheritedPolicy>[0], ReturnType<typeof inheritedPolicy>]> = [
  ["no parents leave both unset", [], { conflict: false }],
  ["one Abort parent gives Abort, no preservation", [{ conflictResolution: "Abort" }], { conflictResolution: "Abort", preserveResourcesOnDeletion: false, conflict: false }],
  ["any Overwrite parent gives Overwrite, and the mix is a conflict", [{ conflictResolution: "Abort" }, { conflictResolution: "Overwrite" }], { conflictResolution: "Overwrite", preserveResourcesOnDeletion: false, conflict: true }],
  ["any preserving parent preserves", [{ preserveResourcesOnDeletion: true }, { preserveResourcesOnDeletion: true }], { conflictResolution: "Abort", preserveResourcesOnDeletion: true, conflict: false }],
];
for (const [what, parents, expected] of policyCases) test(`inherited policy: ${what}`, () => assert.deepEqual(inheritedPolicy(parents), expected));
