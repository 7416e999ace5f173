// Metadata, names, labels, annotations and label selectors (validate/fields.ts), as validateObject checks them on a PropagationPolicy.
import { test } from "node:test";
import { KARMADA } from "@flotilla/api";
import { checkCase, pp, cpp, type Case } from "./cases.test-support.js";

const P = KARMADA.propagationPolicy;
const cases: Case[] = [
  // ---- label selectors (of a resource selector) ----
  [
    "a label selector operator must be In, NotIn, Exists or DoesNotExist",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchExpressions: [{ key: "app", operator: "Gt", values: ["1"] }] }),
    [["spec.resourceSelectors[0].labelSelector.matchExpressions[0].operator", "FieldValueNotSupported"]],
  ],
  [
    "an In selector expression needs values",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchExpressions: [{ key: "app", operator: "In" }] }),
    [["spec.resourceSelectors[0].labelSelector.matchExpressions[0].values", "FieldValueRequired"]],
  ],
  [
    "an Exists selector expression takes no values",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchExpressions: [{ key: "app", operator: "Exists", values: ["x"] }] }),
    [["spec.resourceSelectors[0].labelSelector.matchExpressions[0].values", "FieldValueForbidden"]],
  ],
  [
    "a selector's matchLabels must be valid labels",
    P,
    pp,
    (o) => (o.spec.resourceSelectors[0].labelSelector = { matchLabels: { "bad key": "x" } }),
    [["spec.resourceSelectors[0].labelSelector.matchLabels[bad key]", "FieldValueInvalid"]],
  ],

  // ---- metadata ----
  ["an object needs a name", P, pp, (o) => delete o.metadata.name, [["metadata.name", "FieldValueRequired"]]],
  [
    "a generateName stands in for the name",
    P,
    pp,
    (o) => {
      delete o.metadata.name;
      o.metadata.generateName = "nginx-";
    },
    [],
  ],
  ["a name must be a DNS subdomain", P, pp, (o) => (o.metadata.name = "Nginx_1"), [["metadata.name", "FieldValueInvalid"]]],
  ["a policy name fits in a label value", P, pp, (o) => (o.metadata.name = "a".repeat(64)), [["metadata.name", "FieldValueInvalid"]]],
  ["a namespaced kind needs a namespace", P, pp, (o) => delete o.metadata.namespace, [["metadata.namespace", "FieldValueRequired"]]],
  ["a cluster-scoped kind may not have a namespace", KARMADA.clusterPropagationPolicy, cpp, (o) => (o.metadata.namespace = "default"), [["metadata.namespace", "FieldValueForbidden"]]],
  ["a namespace must be a DNS label", P, pp, (o) => (o.metadata.namespace = "a.b"), [["metadata.namespace", "FieldValueInvalid"]]],
  ["a label key must be a qualified name", P, pp, (o) => (o.metadata.labels = { "bad key": "x" }), [["metadata.labels[bad key]", "FieldValueInvalid"]]],
  ["a label key prefix must be a DNS subdomain", P, pp, (o) => (o.metadata.labels = { "Example.com/app": "x" }), [["metadata.labels[Example.com/app]", "FieldValueInvalid"]]],
  ["a label value must be a valid label value", P, pp, (o) => (o.metadata.labels = { app: "-x" }), [["metadata.labels[app]", "FieldValueInvalid"]]],
  ["an annotation key must be a qualified name", P, pp, (o) => (o.metadata.annotations = { "a/b/c": "x" }), [["metadata.annotations[a/b/c]", "FieldValueInvalid"]]],
  ["annotations may not exceed 256 KiB in total", P, pp, (o) => (o.metadata.annotations = { big: "x".repeat(256 * 1024) }), [["metadata.annotations", "FieldValueTooLong"]]],
  ["a finalizer must be a qualified name", P, pp, (o) => (o.metadata.finalizers = ["bad finalizer"]), [["metadata.finalizers[0]", "FieldValueInvalid"]]],
  ["an owner reference needs a uid", P, pp, (o) => (o.metadata.ownerReferences = [{ apiVersion: "v1", kind: "Namespace", name: "default" }]), [["metadata.ownerReferences[0].uid", "FieldValueRequired"]]],
];

for (const c of cases) test(c[0], () => checkCase(c));
