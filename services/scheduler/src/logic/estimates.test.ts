import { test } from "node:test";
import assert from "node:assert/strict";
import { binding, placements } from "../fixtures.test-support.js";
import { requirementsKey, usableEstimates, wantsEstimates, type EstimatorAnswer } from "./estimates.js";

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

const answer: EstimatorAnswer = {
  replicas: new Map([["fresh", 5], ["old", 7], ["none", -1], ["untimed", 4]]),
  takenAt: new Map([["fresh", 10_000], ["old", 2_000], ["none", 10_000]]),
};
const usable: Array<[string, ((c: string) => number) | undefined, Record<string, number>]> = [
  ["without the ledger every answer stands", undefined, { fresh: 5, old: 7, none: -1, untimed: 4 }],
  ["an answer taken after what the ledger let go of on its cluster stands", () => 9_000, { fresh: 5, old: -1, none: -1, untimed: -1 }],
  ["an answer taken exactly when the ledger let go stands", () => 10_000, { fresh: 5, old: -1, none: -1, untimed: -1 }],
  ["an answer taken before what the ledger let go of may miss it and counts as no answer", () => 10_001, { fresh: -1, old: -1, none: -1, untimed: -1 }],
  ["each cluster is judged by what was let go of on it", (c) => (c === "old" ? 1_000 : 0), { fresh: 5, old: 7, none: -1, untimed: -1 }],
];
for (const [name, through, want] of usable) {
  test(`estimates: ${name}`, () => assert.deepEqual(Object.fromEntries(usableEstimates(answer, through)!), want));
}
test("estimates: no answer is no answer", () => assert.equal(usableEstimates(undefined, () => 0), undefined));
