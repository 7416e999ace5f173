import { test } from "node:test";
import assert from "node:assert/strict";
import type { Placement } from "@flotilla/api";
import { buildContext, filterInput } from "./framework.js";
import { makeBinding, makeCluster, type ClusterOptions } from "./fixtures.js";
import { SpreadConstraint } from "./spread-constraint.js";
import type { Verdict } from "./types.js";

const by = (...fields: string[]): Placement => ({ spreadConstraints: fields.map((spreadByField) => ({ spreadByField, minGroups: 1 })) });

const cases: Array<[string, Placement, ClusterOptions, Verdict]> = [
  ["no spread constraints let every cluster pass", {}, {}, { code: "fit" }],
  ["a cluster constraint needs nothing from the cluster", by("cluster"), {}, { code: "fit" }],
  ["a region constraint needs spec.region", by("region"), {}, { code: "unfit", reasons: ["cluster(s) did not have region property"] }],
  ["a region constraint passes with a region", by("region"), { region: "r1" }, { code: "fit" }],
  ["a provider constraint needs spec.provider", by("provider"), { region: "r1" }, { code: "unfit", reasons: ["cluster(s) did not have provider property"] }],
  ["a zone constraint needs a non-empty zone list", by("zone"), { zones: [] }, { code: "unfit", reasons: ["cluster(s) did not have zones property"] }],
  ["a zone constraint passes with zones", by("zone"), { zones: ["z1"] }, { code: "fit" }],
  ["the first missing property is the one reported", by("cluster", "provider", "region"), {}, { code: "unfit", reasons: ["cluster(s) did not have provider property"] }],
];
for (const [name, placement, opts, want] of cases) {
  test(name, () => {
    const ctx = buildContext(makeBinding({ replicas: 2, placement }), undefined);
    assert.deepEqual(SpreadConstraint.filter(filterInput(ctx, makeCluster("member1", opts))), want);
  });
}
