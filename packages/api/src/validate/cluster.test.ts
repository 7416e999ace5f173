// Cluster (validate/cluster.ts): name, spec, taints and resource models.
import { test } from "node:test";
import assert from "node:assert/strict";
import { InvalidError, KARMADA, applyDefaults, defaultResourceModels, validateObject } from "@flotilla/api";
import { checkCase, type Case, type Json } from "./cases.test-support.js";

const cluster = (): Json => ({
  apiVersion: "cluster.karmada.io/v1alpha1",
  kind: "Cluster",
  metadata: { name: "member1" },
  spec: { syncMode: "Push", apiEndpoint: "https://10.0.0.1:6443" },
});
const MAXQ = "9223372036854775807";
/** member1 with three standardized grades: cpu [0,1) [1,2) [2,∞), memory [0,4Gi) [4Gi,16Gi) [16Gi,∞). */
const modelledWith = (names: string[][], edit: (m: Json[]) => void = () => {}): Json => {
  const bounds: Record<string, string[]> = { cpu: ["0", "1", "2", MAXQ], memory: ["0", "4Gi", "16Gi", MAXQ] };
  const m = names.map((ns, grade) => ({ grade, ranges: ns.map((n) => ({ name: n, min: bounds[n]![grade], max: bounds[n]![grade + 1] })) }));
  edit(m);
  return { ...cluster(), spec: { ...cluster().spec, resourceModels: m } };
};
const modelled = (): Json => modelledWith([["cpu", "memory"], ["cpu", "memory"], ["cpu", "memory"]]);
const models = (o: Json): Json[] => o.spec.resourceModels;

const cases: Case[] = [
  // ---- the valid starting point ----
  ["a plain cluster is valid", KARMADA.cluster, cluster, () => {}, []],

  // ---- clusters ----
  ["a cluster name is a DNS label", KARMADA.cluster, cluster, (o) => (o.metadata.name = "member.1"), [["metadata.name", "FieldValueInvalid"]]],
  ["a cluster name leaves room for the execution namespace prefix", KARMADA.cluster, cluster, (o) => (o.metadata.name = "a".repeat(49)), [["metadata.name", "FieldValueInvalid"]]],
  ["the sync mode is Push or Pull", KARMADA.cluster, cluster, (o) => (o.spec.syncMode = "Sideways"), [["spec.syncMode", "FieldValueNotSupported"]]],
  ["an empty sync mode is accepted", KARMADA.cluster, cluster, (o) => delete o.spec.syncMode, []],
  ["the API endpoint must be a URL", KARMADA.cluster, cluster, (o) => (o.spec.apiEndpoint = "not a url"), [["spec.apiEndpoint", "FieldValueInvalid"]]],
  ["the API endpoint may not carry a query", KARMADA.cluster, cluster, (o) => (o.spec.apiEndpoint = "https://10.0.0.1:6443?x=1"), [["spec.apiEndpoint", "FieldValueInvalid"]]],
  ["the proxy URL is http, https or socks5", KARMADA.cluster, cluster, (o) => (o.spec.proxyURL = "ftp://proxy"), [["spec.proxyURL", "FieldValueInvalid"]]],
  ["a secret reference needs a namespace", KARMADA.cluster, cluster, (o) => (o.spec.secretRef = { name: "member1" }), [["spec.secretRef.namespace", "FieldValueRequired"]]],
  ["a taint effect must be NoSchedule, PreferNoSchedule or NoExecute", KARMADA.cluster, cluster, (o) => (o.spec.taints = [{ key: "k", effect: "Evict" }]), [["spec.taints[0].effect", "FieldValueNotSupported"]]],
  ["a taint needs a key", KARMADA.cluster, cluster, (o) => (o.spec.taints = [{ effect: "NoSchedule" }]), [["spec.taints[0].key", "FieldValueRequired"]]],
  ["a taint needs an effect", KARMADA.cluster, cluster, (o) => (o.spec.taints = [{ key: "k" }]), [["spec.taints[0].effect", "FieldValueRequired"]]],
  [
    "taints are unique by key and effect",
    KARMADA.cluster,
    cluster,
    (o) => (o.spec.taints = [{ key: "k", effect: "NoSchedule" }, { key: "k", value: "v", effect: "NoSchedule" }]),
    [["spec.taints[1]", "FieldValueDuplicate"]],
  ],

  // ---- cluster resource models (as the gateway stores them: standardized, in grade order) ----
  ["standardized resource models are valid", KARMADA.cluster, modelled, () => {}, []],
  ["a model range names cpu, memory, storage or ephemeral-storage", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges[1].name = "pods"), [["spec.resourceModels[0].ranges[1].name", "FieldValueNotSupported"]]],
  ["a model range needs a name", KARMADA.cluster, modelled, (o) => ((models(o)[0].ranges[0].name = ""), (models(o)[1].ranges[0].name = ""), (models(o)[2].ranges[0].name = "")), [["spec.resourceModels[0].ranges[0].name", "FieldValueRequired"], ["spec.resourceModels[1].ranges[0].name", "FieldValueRequired"], ["spec.resourceModels[2].ranges[0].name", "FieldValueRequired"]]],
  ["a model names each resource once", KARMADA.cluster, () => modelledWith([["cpu", "memory"], ["cpu", "memory"], ["cpu", "memory"]], (m) => (m.forEach((g: Json) => (g.ranges[1].name = "cpu")))), () => {}, [["spec.resourceModels[0].ranges[1].name", "FieldValueDuplicate"], ["spec.resourceModels[1].ranges[1].name", "FieldValueDuplicate"], ["spec.resourceModels[2].ranges[1].name", "FieldValueDuplicate"]]],
  ["grades are distinct", KARMADA.cluster, modelled, (o) => (models(o)[1].grade = 0), [["spec.resourceModels[1].grade", "FieldValueDuplicate"]]],
  ["grades ascend", KARMADA.cluster, modelled, (o) => (models(o)[2].grade = 0), [["spec.resourceModels[2].grade", "FieldValueInvalid"]]],
  ["a grade is not negative", KARMADA.cluster, modelled, (o) => (models(o)[0].grade = -1), [["spec.resourceModels[0].grade", "FieldValueInvalid"]]],
  ["a model's max is greater than its min", KARMADA.cluster, modelled, (o) => ((models(o)[1].ranges[0].max = "1"), (models(o)[2].ranges[0].min = "1")), [["spec.resourceModels[1].ranges[0].max", "FieldValueInvalid"]]],
  ["the first grade's minimums are 0", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges[1].min = "1Gi"), [["spec.resourceModels[0].ranges[1].min", "FieldValueInvalid"]]],
  ["a minimum of 0m is 0", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges[0].min = "0m"), []],
  ["grades are contiguous: a gap", KARMADA.cluster, modelled, (o) => (models(o)[1].ranges[0].min = "1500m"), [["spec.resourceModels[1].ranges[0].min", "FieldValueInvalid"]]],
  ["grades are contiguous: an overlap", KARMADA.cluster, modelled, (o) => (models(o)[2].ranges[1].min = "8Gi"), [["spec.resourceModels[2].ranges[1].min", "FieldValueInvalid"]]],
  ["a bound equal in another unit is contiguous (16Gi is 17179869184)", KARMADA.cluster, modelled, (o) => (models(o)[2].ranges[1].min = "17179869184"), []],
  ["the last grade's maximums are MaxInt64", KARMADA.cluster, modelled, (o) => (models(o)[2].ranges[0].max = "1000"), [["spec.resourceModels[2].ranges[0].max", "FieldValueInvalid"]]],
  ["every grade has the same number of resources", KARMADA.cluster, modelled, (o) => models(o)[1].ranges.pop(), [["spec.resourceModels[1].ranges", "FieldValueInvalid"], ["spec.resourceModels[2].ranges", "FieldValueInvalid"]]],
  ["every grade lists the resources in the same order", KARMADA.cluster, modelled, (o) => models(o)[1].ranges.reverse(), [["spec.resourceModels[1].ranges[0].name", "FieldValueInvalid"], ["spec.resourceModels[1].ranges[1].name", "FieldValueInvalid"], ["spec.resourceModels[2].ranges[0].name", "FieldValueInvalid"], ["spec.resourceModels[2].ranges[1].name", "FieldValueInvalid"]]],
  ["a grade has at least one range", KARMADA.cluster, modelled, (o) => (models(o)[0].ranges = []), [["spec.resourceModels[0].ranges", "FieldValueRequired"], ["spec.resourceModels[1].ranges", "FieldValueInvalid"]]],
  ["a bound is a quantity", KARMADA.cluster, modelled, (o) => (models(o)[1].ranges[1].max = "lots"), [["spec.resourceModels[1].ranges[1].max", "FieldValueInvalid"]]],
  ["a bound is required", KARMADA.cluster, modelled, (o) => delete models(o)[1].ranges[0].min, [["spec.resourceModels[1].ranges[0].min", "FieldValueRequired"]]],
];

for (const c of cases) test(c[0], () => checkCase(c));

test("upstream's default resource models pass validation", () => {
  const o = { ...cluster(), spec: { ...cluster().spec, resourceModels: defaultResourceModels() } };
  assert.doesNotThrow(() => validateObject(KARMADA.cluster, o));
});

test("resource models posted out of order are standardized before validation, which names their problems in grade order", () => {
  const posted = modelled();
  models(posted).reverse();
  models(posted)[0].ranges[0].min = "3"; // grade 2's cpu min: not grade 1's max
  models(posted)[2].ranges[1].min = "1Gi"; // grade 0's memory min: standardized to 0
  assert.throws(
    () => validateObject(KARMADA.cluster, applyDefaults(posted, { now: new Date(), uuid: () => "u" })),
    (e: unknown) => e instanceof InvalidError && JSON.stringify(e.causes.map((c) => c.field)) === JSON.stringify(["spec.resourceModels[2].ranges[0].min"]),
  );
});
