import { test } from "node:test";
import assert from "node:assert/strict";
import { binding, placements } from "../fixtures.test-support.js";
import { requirementsKey, wantsEstimates } from "./estimates.js";

const cases: Array<[string, ReturnType<typeof binding>, boolean]> = [
  ["dynamic weights depend on capacity", binding("a", { replicas: 3, placement: placements.dynamic() }), true],
  ["Aggregated depends on capacity", binding("a", { replicas: 3, placement: placements.aggregated() }), true],
  ["static weights do not", binding("a", { replicas: 3 }), false],
  ["Duplicated without spread constraints does not", binding("a", { replicas: 3, placement: placements.duplicated() }), false],
  [
    "Duplicated with spread constraints does (selection sorts by capacity)",
    binding("a", { replicas: 3, placement: { ...placements.duplicated(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 1, maxGroups: 2 }] } }),
    true,
  ],
  ["a non-workload never does", binding("a", { placement: placements.dynamic() }), false],
];
for (const [name, b, want] of cases) test(`estimates: ${name}`, () => assert.equal(wantsEstimates(b), want));

test("bindings with the same replica requirements share one estimate", () => {
  assert.equal(requirementsKey(binding("a", { cpu: "100m" })), requirementsKey(binding("b", { cpu: "100m" })));
  assert.notEqual(requirementsKey(binding("a", { cpu: "100m" })), requirementsKey(binding("b", { cpu: "200m" })));
});
