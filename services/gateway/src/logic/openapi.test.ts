import { test } from "node:test";
import assert from "node:assert/strict";
import { CORE, KARMADA, RESOURCE_TYPES, schemaFor, type ResourceType } from "@flotilla/api";
import { PlacementSchema, ObjectMetaSchema, TargetClusterSchema, TolerationSchema } from "@flotilla/proto";
import { groupVersionDocument, groupVersionDocuments, groupVersionPath, kindSchemaName, openApiDocument, openApiIndex, schemaName, servedGroupVersions } from "./openapi.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const names: Array<[string, string, string]> = [
  ["a Karmada kind is named by its group reversed and its version", kindSchemaName(KARMADA.propagationPolicy), "io.karmada.policy.v1alpha1.PropagationPolicy"],
  ["a Cluster likewise", kindSchemaName(KARMADA.cluster), "io.karmada.cluster.v1alpha1.Cluster"],
  ["a binding is in work v1alpha2", kindSchemaName(KARMADA.resourceBinding), "io.karmada.work.v1alpha2.ResourceBinding"],
  ["a Work is in work v1alpha1", kindSchemaName(KARMADA.work), "io.karmada.work.v1alpha1.Work"],
  ["a nested Karmada type keeps its package's name", schemaName(PlacementSchema, KARMADA.work), "io.karmada.policy.v1alpha1.Placement"],
  ["a work type takes the version of the document it is in", schemaName(TargetClusterSchema, KARMADA.work), "io.karmada.work.v1alpha1.TargetCluster"],
  ["ObjectMeta is apimachinery's", schemaName(ObjectMetaSchema, KARMADA.cluster), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"],
  ["Toleration is core/v1's", schemaName(TolerationSchema, KARMADA.cluster), "io.k8s.api.core.v1.Toleration"],
  ["a built-in kind is named as Kubernetes names it", kindSchemaName(CORE.deployment), "io.k8s.api.apps.v1.Deployment"],
  ["a core kind is in io.k8s.api.core", kindSchemaName(CORE.configMap), "io.k8s.api.core.v1.ConfigMap"],
  ["a kind of a dotted group takes its first part", kindSchemaName(CORE.ingress), "io.k8s.api.networking.v1.Ingress"],
  ["CustomResourceDefinition is apiextensions-apiserver's", kindSchemaName(CORE.crd), "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"],
];
for (const [name, got, want] of names) test(`schema names: ${name}`, () => assert.equal(got, want));

const doc = (t: ResourceType): Json => groupVersionDocument(t, "0.1.0");
const schemaOf = (t: ResourceType): Json => doc(t).components.schemas[kindSchemaName(t)];

test("every served group-version has a document, listed by the index with its hash", () => {
  const docs = groupVersionDocuments("0.1.0");
  const paths = servedGroupVersions().map(groupVersionPath);
  assert.ok(paths.includes("api/v1") && paths.includes("apis/policy.karmada.io/v1alpha1") && paths.includes("apis/work.karmada.io/v1alpha2"));
  assert.deepEqual([...docs.keys()], paths);
  const index = openApiIndex(docs) as Json;
  for (const p of paths) assert.equal(index.paths[p].serverRelativeURL, `/openapi/v3/${p}?hash=${docs.get(p)!.hash}`);
  assert.match(docs.get("api/v1")!.hash, /^[0-9A-F]{128}$/);
});

test("every kind's schema carries its group-version-kind, and so does its list", () => {
  for (const t of RESOURCE_TYPES) {
    const d = doc(t);
    const gvk = { group: t.group, kind: t.kind, version: t.version };
    assert.deepEqual(d.components.schemas[kindSchemaName(t)]["x-kubernetes-group-version-kind"], [gvk], t.kind);
    assert.deepEqual(d.components.schemas[`${kindSchemaName(t)}List`]["x-kubernetes-group-version-kind"], [{ ...gvk, kind: `${t.kind}List` }], t.kind);
  }
});

test("every PATCH names its kind and takes fieldValidation (kubectl then validates on the server), without strategic merge patch", () => {
  for (const t of RESOURCE_TYPES) {
    const patches = Object.values<Json>(doc(t).paths).flatMap((p) => (p.patch ? [p.patch] : []));
    const own = patches.filter((p) => p["x-kubernetes-group-version-kind"].kind === t.kind);
    assert.equal(own.length, t.statusSubresource ? 2 : 1, t.kind);
    for (const p of own) {
      assert.ok(p.parameters.some((q: Json) => q.name === "fieldValidation" && q.in === "query"), t.kind);
      assert.deepEqual(Object.keys(p.requestBody.content).sort(), ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"]);
    }
  }
});

test("a Karmada kind's schema is the proto message's, with its doc comments as descriptions", () => {
  const pp = schemaOf(KARMADA.propagationPolicy);
  assert.match(pp.description, /PropagationPolicy says which resource templates/);
  assert.deepEqual(pp.properties.spec.allOf, [{ $ref: "#/components/schemas/io.karmada.policy.v1alpha1.PropagationSpec" }]);
  const d = doc(KARMADA.propagationPolicy);
  const spec = d.components.schemas["io.karmada.policy.v1alpha1.PropagationSpec"];
  assert.deepEqual(Object.keys(spec.properties).sort(), schemaFor(KARMADA.propagationPolicy)!.fields.find((f) => f.name === "spec")!.message!.fields.map((f) => f.jsonName).sort());
  const placement = d.components.schemas["io.karmada.policy.v1alpha1.Placement"];
  assert.match(placement.properties.clusterAffinity.description, /clusters the resources may be scheduled to/);
  assert.equal(placement.properties.clusterTolerations.items.$ref, "#/components/schemas/io.k8s.api.core.v1.Toleration");
  assert.deepEqual(d.components.schemas["io.karmada.policy.v1alpha1.PlaintextOverrider"].properties.value, { "x-kubernetes-preserve-unknown-fields": true, description: "Any JSON value (apiextensionsv1.JSON): the value added or replacing." });
});

test("every field of every Karmada kind is described", () => {
  for (const t of RESOURCE_TYPES.filter((r) => r.typed)) {
    for (const [name, s] of Object.entries<Json>(doc(t).components.schemas)) {
      if (!name.startsWith("io.karmada.")) continue;
      if (!name.endsWith("List")) assert.ok(s.description, `${name} has a description`);
      for (const [f, p] of Object.entries<Json>(s.properties)) assert.ok(p.description, `${name}.${f} has a description`);
    }
  }
});

test("a built-in kind's schema describes apiVersion, kind and metadata and keeps every other field", () => {
  const dep = schemaOf(CORE.deployment);
  assert.equal(dep["x-kubernetes-preserve-unknown-fields"], true);
  assert.deepEqual(Object.keys(dep.properties), ["apiVersion", "kind", "metadata"]);
  assert.ok(doc(CORE.deployment).components.schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].properties.labels.description);
});

test("/openapi.json holds every group-version's paths and schemas", () => {
  const all = openApiDocument("0.1.0") as Json;
  for (const t of RESOURCE_TYPES) assert.ok(all.components.schemas[kindSchemaName(t)], t.kind);
  assert.ok(all.paths["/apis/policy.karmada.io/v1alpha1/namespaces/{namespace}/propagationpolicies/{name}"].patch);
  assert.ok(all.paths["/api/v1/namespaces/{namespace}/configmaps"].post);
  assert.ok(all.paths["/apis/work.karmada.io/v1alpha2/resourcebindings"].get, "bindings across namespaces");
});
