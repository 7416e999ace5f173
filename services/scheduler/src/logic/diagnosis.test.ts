import { test } from "node:test";
import assert from "node:assert/strict";
import { schedule } from "@flotilla/scheduling";
import { binding, cluster, notReadyNoSchedule, placements } from "../fixtures.test-support.js";
import { buildDiagnosis } from "./diagnosis.js";

const opts = { trigger: "replicasChanged", time: "2026-03-01T10:00:00Z", clustersTotal: 3, maxFeasible: 25 };

test("rejected clusters are grouped under the plugin and reason that rejected them", () => {
  const rb = binding("nginx", { replicas: 3 });
  const clusters = [cluster("member1", { taints: [notReadyNoSchedule] }), cluster("member2"), cluster("member3")];
  const d = buildDiagnosis(schedule({ binding: rb, clusters }), opts);
  assert.deepEqual(d.rejected, [
    { plugin: "ClusterAffinity", reason: "cluster(s) did not match the placement cluster affinity constraint", clusters: ["member3"] },
    { plugin: "TaintToleration", reason: "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}", clusters: ["member1"] },
  ]);
  assert.deepEqual(d.feasible?.map((f) => [f.name, f.selected, f.replicas]), [["member2", true, 3]]);
  assert.equal(d.result, "Success");
  assert.equal(d.clustersTotal, 3);
});

test("feasible clusters beyond the limit are counted, best first kept", () => {
  const clusters = Array.from({ length: 10 }, (_, i) => cluster(`c${i}`, { pods: 10 + i }));
  const rb = binding("web", { replicas: 4, placement: { ...placements.dynamic(), spreadConstraints: [{ spreadByField: "cluster", minGroups: 1, maxGroups: 2 }] } });
  const d = buildDiagnosis(schedule({ binding: rb, clusters }), { ...opts, clustersTotal: 10, maxFeasible: 3 });
  assert.deepEqual(d.feasible?.map((f) => f.selected), [true, true, false]);
  assert.equal(d.feasible?.length, 3);
  assert.equal(d.feasibleOmitted, 7);
  assert.deepEqual(d.feasible?.map((f) => f.name), ["c9", "c8", "c7"]);
  assert.equal(d.rejected, undefined);
});

test("the clusterAffinities terms tried are listed with why each failed", () => {
  const rb = binding("web", {
    replicas: 2,
    placement: {
      clusterAffinities: [
        { affinityName: "primary", clusterNames: ["gone"] },
        { affinityName: "backup", clusterNames: ["member2"] },
      ],
      replicaScheduling: { replicaSchedulingType: "Duplicated" },
    },
  });
  const d = buildDiagnosis(schedule({ binding: rb, clusters: [cluster("member1"), cluster("member2")] }), opts);
  assert.equal(d.affinityName, "backup");
  assert.deepEqual(d.attempts?.map((a) => [a.affinityName, !!a.error]), [
    ["primary", true],
    ["backup", false],
  ]);
});

test("selected clusters are listed even when they rank below the limit", () => {
  const clusters = Array.from({ length: 6 }, (_, i) => cluster(`c${i}`, { region: i < 3 ? "east" : "west", pods: 100 - i }));
  const rb = binding("web", {
    replicas: 4,
    placement: { ...placements.dynamic(), spreadConstraints: [{ spreadByField: "region", minGroups: 2, maxGroups: 2 }, { spreadByField: "cluster", minGroups: 2, maxGroups: 2 }] },
  });
  const result = schedule({ binding: rb, clusters });
  const d = buildDiagnosis(result, { ...opts, clustersTotal: 6, maxFeasible: 1 });
  const selected = result.scores.filter((s) => s.selected).map((s) => s.name);
  assert.deepEqual(d.feasible?.filter((f) => f.selected).map((f) => f.name), selected);
  assert.equal(d.feasibleOmitted, 6 - d.feasible!.length);
});
