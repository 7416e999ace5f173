import { test } from "node:test";
import assert from "node:assert/strict";
import type { Taint, Toleration } from "@flotilla/api";
import { buildContext, filterInput } from "./framework.js";
import { makeBinding, makeCluster } from "./fixtures.js";
import { TaintToleration, taintToString, toleratesTaint } from "./taint-toleration.js";
import type { Verdict } from "./types.js";

const notReady: Taint = { key: "cluster.karmada.io/not-ready", effect: "NoSchedule" };
const dedicated: Taint = { key: "dedicated", value: "gpu", effect: "NoExecute" };
const prefer: Taint = { key: "soft", effect: "PreferNoSchedule" };

function verdict(taints: Taint[], tolerations: Toleration[] | undefined, current?: Record<string, number>): Verdict {
  const binding = makeBinding({ replicas: 1, placement: { ...(tolerations ? { clusterTolerations: tolerations } : {}) }, clusters: current });
  return TaintToleration.filter(filterInput(buildContext(binding, undefined), makeCluster("member1", { taints })));
}

const cases: Array<[string, Taint[], Toleration[] | undefined, Record<string, number> | undefined, Verdict]> = [
  ["a cluster without taints fits", [], undefined, undefined, { code: "fit" }],
  [
    "an untolerated NoSchedule taint without a value is reported as key:Effect",
    [notReady],
    undefined,
    undefined,
    { code: "unfit", reasons: ["cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"] },
  ],
  [
    "an untolerated NoExecute taint with a value is reported as key=value:Effect",
    [dedicated],
    undefined,
    undefined,
    { code: "unfit", reasons: ["cluster(s) had untolerated taint {dedicated=gpu:NoExecute}"] },
  ],
  ["a PreferNoSchedule taint is ignored", [prefer], undefined, undefined, { code: "fit" }],
  ["an Exists toleration on the key tolerates it", [notReady], [{ key: "cluster.karmada.io/not-ready", operator: "Exists" }], undefined, { code: "fit" }],
  ["an Equal toleration needs the same value", [dedicated], [{ key: "dedicated", operator: "Equal", value: "cpu" }], undefined, { code: "unfit", reasons: ["cluster(s) had untolerated taint {dedicated=gpu:NoExecute}"] }],
  ["an empty operator means Equal", [dedicated], [{ key: "dedicated", value: "gpu" }], undefined, { code: "fit" }],
  ["a toleration for another effect does not tolerate", [notReady], [{ key: "cluster.karmada.io/not-ready", operator: "Exists", effect: "NoExecute" }], undefined, { code: "unfit", reasons: ["cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"] }],
  ["an empty key with Exists tolerates every taint", [notReady, dedicated], [{ operator: "Exists" }], undefined, { code: "fit" }],
  [
    "the first untolerated taint is the one reported",
    [dedicated, notReady],
    [{ key: "dedicated", operator: "Exists" }],
    undefined,
    { code: "unfit", reasons: ["cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"] },
  ],
  ["a cluster already in spec.clusters passes despite its taints", [notReady, dedicated], undefined, { member1: 2 }, { code: "fit" }],
];
for (const [name, taints, tolerations, current, want] of cases) {
  test(name, () => assert.deepEqual(verdict(taints, tolerations, current), want));
}

const strings: Array<[string, Taint, string]> = [
  ["a taint string has key, value and effect", { key: "k", value: "v", effect: "NoSchedule" }, "k=v:NoSchedule"],
  ["a taint string without a value drops the equals sign", { key: "k", effect: "NoExecute" }, "k:NoExecute"],
  ["a taint string without an effect keeps a trailing colon after a value", { key: "k", value: "v" }, "k=v:"],
  ["a taint string with only a key is the key", { key: "k" }, "k"],
];
for (const [name, taint, want] of strings) {
  test(name, () => assert.equal(taintToString(taint), want));
}

test("an unknown operator tolerates nothing", () => {
  assert.equal(toleratesTaint({ key: "k", operator: "Lt", value: "1" }, { key: "k", value: "1", effect: "NoSchedule" }), false);
});
