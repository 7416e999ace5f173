import { test } from "node:test";
import assert from "node:assert/strict";
import type { ClusterAffinity, Placement } from "@flotilla/api";
import { clusterMatches, compileLabelSelector, isValidLabelKey, resolveAffinities } from "./affinity.js";
import { makeCluster } from "./fixtures.js";

const east = makeCluster("member1", { labels: { env: "prod", tier: "web" }, provider: "aws", region: "us-east-1", zones: ["us-east-1a", "us-east-1b"] });
const west = makeCluster("member2", { labels: { env: "dev" }, provider: "gcp", region: "us-west-1", zones: [] });
const legacyZone = makeCluster("member3", { region: "eu" });
legacyZone.spec!.zone = "eu-1a";

const field = (key: string, operator: string, values?: string[]): ClusterAffinity => ({
  fieldSelector: { matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] },
});

const cases: Array<[string, ClusterAffinity, typeof east, boolean]> = [
  ["an empty affinity matches every cluster", {}, east, true],
  ["a listed cluster name matches", { clusterNames: ["member1", "member2"] }, east, true],
  ["an unlisted cluster name does not match", { clusterNames: ["member2"] }, east, false],
  ["an empty name list means no name constraint", { clusterNames: [] }, east, true],
  ["exclude wins over clusterNames", { clusterNames: ["member1"], exclude: ["member1"] }, east, false],
  ["exclude alone rejects only the excluded cluster", { exclude: ["member2"] }, east, true],
  ["matchLabels must all match", { labelSelector: { matchLabels: { env: "prod", tier: "web" } } }, east, true],
  ["a differing label value fails", { labelSelector: { matchLabels: { env: "prod" } } }, west, false],
  ["an empty label selector matches everything", { labelSelector: {} }, west, true],
  ["a NotIn expression passes when the label is absent", { labelSelector: { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["web"] }] } }, west, true],
  ["an In expression without values is malformed and matches nothing", { labelSelector: { matchExpressions: [{ key: "env", operator: "In", values: [] }] } }, east, false],
  ["an unknown label operator is malformed and matches nothing", { labelSelector: { matchExpressions: [{ key: "env", operator: "Gt", values: ["1"] }] } }, east, false],
  ["an invalid label key is malformed and matches nothing", { labelSelector: { matchLabels: { "bad key": "x" } } }, east, false],
  ["label selector and names are ANDed", { labelSelector: { matchLabels: { env: "prod" } }, clusterNames: ["member2"] }, east, false],
  ["provider In matches spec.provider", field("provider", "In", ["aws"]), east, true],
  ["provider NotIn rejects the listed provider", field("provider", "NotIn", ["aws"]), east, false],
  ["region Exists needs a region", field("region", "Exists"), east, true],
  ["region DoesNotExist passes when spec.region is empty", field("region", "DoesNotExist"), makeCluster("bare"), true],
  ["region In fails when spec.region is empty", field("region", "In", ["us-east-1"]), makeCluster("bare"), false],
  ["region NotIn passes when spec.region is empty", field("region", "NotIn", ["us-east-1"]), makeCluster("bare"), true],
  ["a Gt on a non-numeric region does not match", field("region", "Gt", ["1"]), east, false],
  ["zone In needs an overlap with spec.zones", field("zone", "In", ["us-east-1b", "x"]), east, true],
  ["zone In fails on an empty zone list", field("zone", "In", ["us-east-1a"]), west, false],
  ["zone NotIn rejects any overlap", field("zone", "NotIn", ["us-east-1a"]), east, false],
  ["zone NotIn passes on an empty zone list", field("zone", "NotIn", ["us-east-1a"]), west, true],
  ["zone Exists needs a non-empty list", field("zone", "Exists"), west, false],
  ["zone DoesNotExist needs an empty list", field("zone", "DoesNotExist"), west, true],
  ["zone with another operator fails", field("zone", "Gt", ["1"]), east, false],
  ["a legacy single zone counts as the zone list", field("zone", "In", ["eu-1a"]), legacyZone, true],
  ["any other field key matches nothing", field("name", "In", ["member1"]), east, false],
  ["an In field expression without values is malformed", field("provider", "In", []), east, false],
  ["field expressions are ANDed", { fieldSelector: { matchExpressions: [{ key: "provider", operator: "In", values: ["aws"] }, { key: "region", operator: "In", values: ["eu"] }] } }, east, false],
];
for (const [name, affinity, cluster, want] of cases) {
  test(name, () => assert.equal(clusterMatches(cluster, affinity), want));
}

const keys: Array<[string, string, boolean]> = [
  ["a simple key is valid", "app", true],
  ["a prefixed key is valid", "cluster.karmada.io/name", true],
  ["an empty key is invalid", "", false],
  ["an upper-case prefix is invalid", "Example.com/x", false],
  ["a name over 63 characters is invalid", "a".repeat(64), false],
];
for (const [name, key, want] of keys) {
  test(name, () => assert.equal(isValidLabelKey(key), want));
}

test("a label selector compiles matchLabels before matchExpressions", () => {
  assert.deepEqual(compileLabelSelector({ matchLabels: { a: "1" }, matchExpressions: [{ key: "b", operator: "Exists" }] }), [
    { key: "a", operator: "In", values: ["1"] },
    { key: "b", operator: "Exists", values: [] },
  ]);
});

const placement: Placement = {
  clusterAffinities: [
    { affinityName: "primary", clusterNames: ["member1"], overflowAffinities: [{ affinityName: "burst", clusterNames: ["member2"] }, { affinityName: "cloud", clusterNames: ["member3"] }] },
    { affinityName: "backup", clusterNames: ["member2"] },
  ],
};

test("a single clusterAffinity resolves to one tier", () => {
  const tiers = resolveAffinities({ clusterAffinity: { clusterNames: ["x"] } }, undefined, true);
  assert.deepEqual(tiers.map((t) => t.order), [0]);
});

test("the observed term resolves with its overflow terms for a workload", () => {
  const tiers = resolveAffinities(placement, "primary", true);
  assert.deepEqual(tiers.map((t) => t.order), [0, 1, 2]);
  assert.equal(tiers[1].matches(west), true);
});

test("overflow terms are ignored for a non-workload", () => {
  assert.deepEqual(resolveAffinities(placement, "primary", false).map((t) => t.order), [0]);
});

test("an unknown term name resolves to no affinity", () => {
  assert.deepEqual(resolveAffinities(placement, "nope", true), []);
});

test("no affinity at all resolves to no tiers", () => {
  assert.deepEqual(resolveAffinities({}, undefined, true), []);
});
