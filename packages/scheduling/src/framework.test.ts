import { test } from "node:test";
import assert from "node:assert/strict";
import { divided, makeBinding, makeCluster } from "./fixtures.js";
import { buildContext, buildFramework, enabledPluginNames, runFilters, runScores } from "./framework.js";
import { inTreeRegistry } from "./registry.js";
import { fit, unfit, type FilterPlugin, type Registry, type ScorePlugin } from "./types.js";

const all = ["APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterEviction", "ClusterLocality"];

const enabled: Array<[string, string, string[], string[]]> = [
  ["a star enables every plugin in registry order", "*", all, []],
  ["an empty string means a star", "", all, []],
  ["a minus disables one plugin", "*,-ClusterLocality", all.slice(0, 5), []],
  ["a disable wins wherever it appears", "-TaintToleration,*", all.filter((n) => n !== "TaintToleration"), []],
  ["names alone enable only those plugins", "ClusterEviction, ClusterAffinity", ["ClusterAffinity", "ClusterEviction"], []],
  ["unknown names are reported", "*,-Nope,Other", all, ["Other", "Nope"]],
];
for (const [name, spec, names, unknown] of enabled) {
  test(name, () => assert.deepEqual(enabledPluginNames(inTreeRegistry, spec), { names, unknown }));
}

test("the framework splits plugins into filters and scorers", () => {
  const fw = buildFramework(inTreeRegistry, "*");
  assert.deepEqual(fw.filters.map((p) => p.name), all.slice(0, 5));
  assert.deepEqual(fw.scorers.map((p) => p.name), ["ClusterAffinity", "ClusterLocality"]);
  assert.equal(buildFramework(inTreeRegistry, "*"), fw);
});

const binding = makeBinding({
  replicas: 2,
  placement: { clusterAffinity: { exclude: ["bad"] } },
  clusters: { good: 2 },
});

test("filters keep every objection per cluster and the first filter's reasons for the fit error", () => {
  const clusters = [
    makeCluster("good"),
    makeCluster("bad", { taints: [{ key: "k", effect: "NoSchedule" }] }),
    makeCluster("gone", { deleting: true }),
  ];
  const out = runFilters(buildFramework(), buildContext(binding, undefined), clusters);
  assert.deepEqual(out.feasible.map((c) => c.metadata.name), ["good"]);
  assert.deepEqual(out.diagnosis, {
    bad: [
      { plugin: "TaintToleration", reason: "cluster(s) had untolerated taint {k:NoSchedule}" },
      { plugin: "ClusterAffinity", reason: "cluster(s) did not match the placement cluster affinity constraint" },
    ],
    gone: [{ plugin: "Scheduler", reason: "cluster is deleting" }],
  });
  assert.deepEqual(out.fitReasons, [["cluster(s) had untolerated taint {k:NoSchedule}"]]);
  assert.equal(out.total, 3);
});

test("a disabled filter no longer objects", () => {
  const out = runFilters(buildFramework(inTreeRegistry, "*,-ClusterAffinity"), buildContext(binding, undefined), [makeCluster("bad")]);
  assert.deepEqual(out.feasible.map((c) => c.metadata.name), ["bad"]);
});

test("timings are collected per plugin when asked for", () => {
  const timings = new Map<string, number>();
  runFilters(buildFramework(), buildContext(binding, undefined), [makeCluster("good")], timings);
  // ClusterEviction and SpreadConstraint skip themselves: no eviction tasks, no spread constraints.
  assert.deepEqual([...timings.keys()], ["APIEnablement", "TaintToleration", "ClusterAffinity"]);
});

const doubler: ScorePlugin = { name: "Doubler", score: (_i, c) => (c.metadata.name === "a" ? 10 : 20) };
const flattener: ScorePlugin & FilterPlugin = {
  name: "Flattener",
  filter: (i) => (i.cluster.metadata.name === "x" ? unfit("no x") : fit),
  score: () => 50,
  normalize: (s) => s.map((x) => ({ ...x, score: x.score / 5 })),
};
const custom: Registry = { Doubler: doubler, Flattener: flattener };

test("scores are normalized, weighted and summed per cluster", () => {
  const fw = buildFramework(custom, "*", { Doubler: 2 });
  const out = runScores(fw, buildContext(makeBinding({ replicas: 1, placement: { replicaScheduling: divided.dynamic() } }), undefined), [makeCluster("a"), makeCluster("b")]);
  assert.deepEqual(out.total, [30, 50]);
  assert.deepEqual(out.byPlugin, [{ Doubler: 20, Flattener: 10 }, { Doubler: 40, Flattener: 10 }]);
});
