import { test } from "node:test";
import assert from "node:assert/strict";
import { ScalarType, type DescMessage } from "@bufbuild/protobuf";
import { CORE, InvalidError, KARMADA, decodeTyped, dropUnknownFields, schemaFor, type ResourceType } from "@flotilla/api";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pp = (spec: Json = {}, metadata: Json = { name: "p", namespace: "default" }): Json => ({
  apiVersion: "policy.karmada.io/v1alpha1",
  kind: "PropagationPolicy",
  metadata,
  spec,
});

// ---- successful decoding: [case, resource type, input, expected output] ----
const ok: Array<[string, ResourceType, Json, Json]> = [
  [
    "a policy keeps its JSON field names and drops implicit zero values",
    KARMADA.propagationPolicy,
    pp({ resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "", namespace: "" }], propagateDeps: false, placement: { spreadConstraints: [{ spreadByField: "cluster", minGroups: 0 }] } }),
    pp({ resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], placement: { spreadConstraints: [{ spreadByField: "cluster" }] } }),
  ],
  [
    "apiVersion and kind are filled in when absent",
    KARMADA.propagationPolicy,
    { metadata: { name: "p", namespace: "default" } },
    { apiVersion: "policy.karmada.io/v1alpha1", kind: "PropagationPolicy", metadata: { name: "p", namespace: "default" } },
  ],
  [
    "a missing metadata decodes as an empty one",
    KARMADA.cluster,
    { spec: { syncMode: "Push" } },
    { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: {}, spec: { syncMode: "Push" } },
  ],
  [
    "explicit zeros of optional fields survive",
    KARMADA.propagationPolicy,
    pp({ priority: 0, placement: { clusterTolerations: [{ key: "k", operator: "Exists", effect: "NoExecute", tolerationSeconds: 0 }] }, preserveResourcesOnDeletion: false }),
    pp({ priority: 0, placement: { clusterTolerations: [{ key: "k", operator: "Exists", effect: "NoExecute", tolerationSeconds: 0 }] }, preserveResourcesOnDeletion: false }),
  ],
  [
    "an empty message is kept because its presence matters",
    KARMADA.propagationPolicy,
    pp({ placement: { clusterAffinity: {} } }),
    pp({ placement: { clusterAffinity: {} } }),
  ],
  [
    "null fields are treated as unset",
    KARMADA.propagationPolicy,
    pp({ placement: null, priority: null, resourceSelectors: null }, { name: "p", namespace: "default", labels: null }),
    pp({}, { name: "p", namespace: "default" }),
  ],
  [
    "timestamps are written in UTC at second precision",
    KARMADA.cluster,
    { metadata: { name: "m1", creationTimestamp: "2024-05-06T09:08:07.654+02:00" }, spec: { taints: [{ key: "k", effect: "NoExecute", timeAdded: "2024-05-06T07:00:00.5Z" }] } },
    { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1", creationTimestamp: "2024-05-06T07:08:07Z" }, spec: { taints: [{ key: "k", effect: "NoExecute", timeAdded: "2024-05-06T07:00:00Z" }] } },
  ],
  [
    "custom JSON names of cluster fields are honoured",
    KARMADA.cluster,
    { metadata: { name: "m1" }, spec: { insecureSkipTLSVerification: true, proxyURL: "http://proxy:3128", zones: ["z1"] } },
    { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: { insecureSkipTLSVerification: true, proxyURL: "http://proxy:3128", zones: ["z1"] } },
  ],
  [
    "resource model grade 0 and modeling count 0 are kept as Karmada writes them",
    KARMADA.cluster,
    { metadata: { name: "m1" }, spec: { resourceModels: [{ grade: 0, ranges: [{ name: "cpu", min: "0", max: "1" }] }] }, status: { resourceSummary: { allocatableModelings: [{ grade: 0, count: 0 }] } } },
    { apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", metadata: { name: "m1" }, spec: { resourceModels: [{ grade: 0, ranges: [{ name: "cpu", min: "0", max: "1" }] }] }, status: { resourceSummary: { allocatableModelings: [{ grade: 0, count: 0 }] } } },
  ],
  [
    "a static weight of 0 is kept so that validation can reject it",
    KARMADA.propagationPolicy,
    pp({ placement: { replicaScheduling: { weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["m1"] } }] } } } }),
    pp({ placement: { replicaScheduling: { weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ["m1"] }, weight: 0 }] } } } }),
  ],
  [
    "work manifests pass through as arbitrary JSON and ordinal 0 is kept",
    KARMADA.work,
    {
      metadata: { name: "nginx-687f7fb96f", namespace: "karmada-es-m1" },
      spec: { workload: { manifests: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx" }, spec: { replicas: 3, paused: false, selector: null, ratio: 0.5, tags: ["a", 1] } }] } },
      status: { manifestStatuses: [{ identifier: { ordinal: 0, version: "v1", kind: "Deployment", name: "nginx" }, status: { readyReplicas: 3 }, health: "Healthy" }] },
    },
    {
      apiVersion: "work.karmada.io/v1alpha1",
      kind: "Work",
      metadata: { name: "nginx-687f7fb96f", namespace: "karmada-es-m1" },
      spec: { workload: { manifests: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "nginx" }, spec: { replicas: 3, paused: false, selector: null, ratio: 0.5, tags: ["a", 1] } }] } },
      status: { manifestStatuses: [{ identifier: { ordinal: 0, version: "v1", kind: "Deployment", name: "nginx" }, status: { readyReplicas: 3 }, health: "Healthy" }] },
    },
  ],
  [
    "a binding keeps its target clusters and eviction tasks",
    KARMADA.resourceBinding,
    {
      metadata: { name: "nginx-deployment", namespace: "default" },
      spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" }, replicas: 3, clusters: [{ name: "m1", replicas: 2 }, { name: "m2", replicas: 0 }], gracefulEvictionTasks: [{ fromCluster: "m3", replicas: 0, suppressDeletion: false }] },
    },
    {
      apiVersion: "work.karmada.io/v1alpha2",
      kind: "ResourceBinding",
      metadata: { name: "nginx-deployment", namespace: "default" },
      spec: { resource: { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "nginx" }, replicas: 3, clusters: [{ name: "m1", replicas: 2 }, { name: "m2" }], gracefulEvictionTasks: [{ fromCluster: "m3", replicas: 0, suppressDeletion: false }] },
    },
  ],
];
for (const [name, rt, input, want] of ok) {
  test(name, () => assert.deepEqual(decodeTyped(rt, input), want));
}

// ---- rejected input: [case, resource type, input, expected (field, reason) pairs] ----
const bad: Array<[string, ResourceType, Json, Array<[string, string]>]> = [
  ["an unknown field is rejected with its path", KARMADA.propagationPolicy, pp({ foo: 1 }), [["spec.foo", "FieldValueUnknown"]]],
  ["a proto field name is not a JSON name", KARMADA.propagationPolicy, pp({ resource_selectors: [] }), [["spec.resource_selectors", "FieldValueUnknown"]]],
  ["a number where a string belongs names the list item field", KARMADA.propagationPolicy, pp({ resourceSelectors: [{ apiVersion: "v1", kind: 7 }] }), [["spec.resourceSelectors[0].kind", "FieldValueTypeInvalid"]]],
  ["a string where a list belongs is rejected", KARMADA.propagationPolicy, pp({ placement: { clusterAffinity: { clusterNames: "member1" } } }), [["spec.placement.clusterAffinity.clusterNames", "FieldValueTypeInvalid"]]],
  ["a null list item is rejected", KARMADA.propagationPolicy, pp({ placement: { clusterAffinity: { clusterNames: ["m1", null] } } }), [["spec.placement.clusterAffinity.clusterNames[1]", "FieldValueInvalid"]]],
  ["a list where an object belongs is rejected", KARMADA.propagationPolicy, pp({ placement: [] }), [["spec.placement", "FieldValueTypeInvalid"]]],
  ["an integer given as a string is rejected", KARMADA.propagationPolicy, pp({ placement: { spreadConstraints: [{ minGroups: "1" }] } }), [["spec.placement.spreadConstraints[0].minGroups", "FieldValueTypeInvalid"]]],
  ["a fractional integer is rejected", KARMADA.propagationPolicy, pp({ placement: { spreadConstraints: [{ maxGroups: 1.5 }] } }), [["spec.placement.spreadConstraints[0].maxGroups", "FieldValueTypeInvalid"]]],
  ["an integer beyond 32 bits is rejected", KARMADA.propagationPolicy, pp({ priority: 2 ** 31 }), [["spec.priority", "FieldValueInvalid"]]],
  ["a boolean given as a string is rejected", KARMADA.propagationPolicy, pp({ propagateDeps: "true" }), [["spec.propagateDeps", "FieldValueTypeInvalid"]]],
  ["a malformed timestamp is rejected", KARMADA.propagationPolicy, pp({}, { name: "p", namespace: "d", creationTimestamp: "yesterday" }), [["metadata.creationTimestamp", "FieldValueInvalid"]]],
  ["a date without a time is not RFC 3339", KARMADA.cluster, { metadata: { name: "m1" }, spec: { taints: [{ key: "k", effect: "NoExecute", timeAdded: "2024-05-06" }] } }, [["spec.taints[0].timeAdded", "FieldValueInvalid"]]],
  ["a label value that is not a string names its key", KARMADA.propagationPolicy, pp({}, { name: "p", namespace: "d", labels: { app: 1 } }), [["metadata.labels[app]", "FieldValueTypeInvalid"]]],
  ["a manifest that is not an object is rejected", KARMADA.work, { metadata: { name: "w", namespace: "karmada-es-m1" }, spec: { workload: { manifests: ["Deployment"] } } }, [["spec.workload.manifests[0]", "FieldValueTypeInvalid"]]],
  ["a kind of another resource is rejected", KARMADA.propagationPolicy, { ...pp(), kind: "ClusterPropagationPolicy" }, [["kind", "FieldValueInvalid"]]],
  ["an apiVersion of another group or version is rejected", KARMADA.resourceBinding, { apiVersion: "work.karmada.io/v1alpha1", metadata: { name: "b", namespace: "d" } }, [["apiVersion", "FieldValueInvalid"]]],
  ["a body that is not an object is rejected", KARMADA.cluster, [], [["", "FieldValueTypeInvalid"]]],
  [
    "every problem is reported at once",
    KARMADA.propagationPolicy,
    pp({ resourceSelectors: [{ kind: 1 }, { apiVersion: true }], placement: { bogus: 1, clusterAffinity: { exclude: [2] } } }, { name: 3, namespace: "d" }),
    [
      ["metadata.name", "FieldValueTypeInvalid"],
      ["spec.resourceSelectors[0].kind", "FieldValueTypeInvalid"],
      ["spec.resourceSelectors[1].apiVersion", "FieldValueTypeInvalid"],
      ["spec.placement.bogus", "FieldValueUnknown"],
      ["spec.placement.clusterAffinity.exclude[0]", "FieldValueTypeInvalid"],
    ],
  ],
];
for (const [name, rt, input, want] of bad) {
  test(name, () => {
    assert.throws(
      () => decodeTyped(rt, input),
      (e: unknown) => {
        assert.ok(e instanceof InvalidError);
        assert.deepEqual(e.causes.map((c) => [c.field, c.reason]), want);
        return true;
      },
    );
  });
}

test("an InvalidError from decoding names the object", () => {
  assert.throws(
    () => decodeTyped(KARMADA.cluster, { metadata: { name: "m1" }, spec: { nope: true } }),
    (e: unknown) => e instanceof InvalidError && e.ref.kind === "Cluster" && e.ref.group === "cluster.karmada.io" && e.ref.name === "m1",
  );
});

test("a resource template has no schema and cannot be decoded as a typed object", () => {
  assert.equal(schemaFor(CORE.deployment), undefined);
  assert.throws(() => decodeTyped(CORE.deployment, {}), TypeError);
});

function has64BitField(desc: DescMessage, seen = new Set<string>()): string | undefined {
  if (seen.has(desc.typeName) || desc.typeName.startsWith("google.protobuf.")) return undefined;
  seen.add(desc.typeName);
  const wide = [ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64];
  for (const f of desc.fields) {
    if (f.scalar !== undefined && wide.includes(f.scalar)) return `${desc.typeName}.${f.name}`;
    if (f.message) {
      const found = has64BitField(f.message, seen);
      if (found) return found;
    }
  }
  return undefined;
}

test("no typed schema has a 64-bit integer, which protobuf JSON would write as a string", () => {
  for (const rt of Object.values(KARMADA)) {
    const schema = schemaFor(rt);
    assert.ok(schema, `${rt.kind} has a schema`);
    assert.equal(has64BitField(schema), undefined);
  }
});

// ---- fieldValidation=Warn|Ignore: unknown fields dropped: [case, input, kept, dropped paths] ----
const drops: Array<[string, Json, Json, string[]]> = [
  ["a known object loses nothing", pp({ placement: { clusterAffinity: { clusterNames: ["m1"] } } }), pp({ placement: { clusterAffinity: { clusterNames: ["m1"] } } }), []],
  [
    "unknown fields go at every depth, in lists too, and are named by their paths",
    { ...pp({ placemnt: {}, resourceSelectors: [{ kind: "Deployment", nam: "x" }], placement: { clusterAffinity: { clusterNames: ["m1"], extra: 1 } } }), status: {} },
    pp({ resourceSelectors: [{ kind: "Deployment" }], placement: { clusterAffinity: { clusterNames: ["m1"] } } }),
    ["spec.placemnt", "spec.resourceSelectors[0].nam", "spec.placement.clusterAffinity.extra", "status"],
  ],
  ["unknown metadata fields go as well", pp({}, { name: "p", namespace: "default", managedFields: [] }), pp({}), ["metadata.managedFields"]],
  ["a value of the wrong type is left for decoding to refuse", pp({ priority: "high" }), pp({ priority: "high" }), []],
];
for (const [name, input, kept, dropped] of drops) {
  test(`dropUnknownFields: ${name}`, () => {
    const before = structuredClone(input);
    const r = dropUnknownFields(schemaFor(KARMADA.propagationPolicy)!, input);
    assert.deepEqual(r.value, kept);
    assert.deepEqual(r.dropped, dropped);
    assert.deepEqual(input, before, "the input is not changed");
  });
}
