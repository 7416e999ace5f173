import { test } from "node:test";
import assert from "node:assert/strict";
import { APIEnablement, apiEnablement } from "./api-enablement.js";
import { buildContext, filterInput } from "./framework.js";
import { makeBinding, makeCluster, type ClusterOptions } from "./fixtures.js";
import type { Verdict } from "./types.js";

const missing: Verdict = { code: "unfit", reasons: ["cluster(s) did not have the API resource"] };

const cases: Array<[string, ClusterOptions, string, Record<string, number> | undefined, Verdict]> = [
  ["a listed API fits", { apis: ["apps/v1/Deployment"] }, "Deployment", undefined, { code: "fit" }],
  ["an API missing from a complete list is disabled and fails", { apis: ["v1/ConfigMap"] }, "Deployment", undefined, missing],
  ["an API missing from an incomplete list is unknown and fails", { apis: ["v1/ConfigMap"], completeAPIs: false }, "Deployment", undefined, missing],
  ["the same kind in another group version does not count", { apis: ["apps/v1beta1/Deployment"] }, "Deployment", undefined, missing],
  ["a cluster already scheduled to passes even without the API", { apis: [] }, "Deployment", { member1: 1 }, { code: "fit" }],
];
for (const [name, opts, kind, current, want] of cases) {
  test(name, () => {
    const binding = makeBinding({ replicas: 1, kind, clusters: current });
    assert.deepEqual(APIEnablement.filter(filterInput(buildContext(binding, undefined), makeCluster("member1", opts))), want);
  });
}

const states: Array<[string, ClusterOptions, string]> = [
  ["a listed API is Enabled", { apis: ["apps/v1/Deployment"] }, "Enabled"],
  ["an unlisted API with a complete list is Disabled", { apis: [] }, "Disabled"],
  ["an unlisted API with an incomplete list is Unknown", { apis: [], completeAPIs: false }, "Unknown"],
];
for (const [name, opts, want] of states) {
  test(name, () => assert.equal(apiEnablement(makeCluster("c", opts), "apps/v1", "Deployment"), want));
}
