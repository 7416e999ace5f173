import { test } from "node:test";
import assert from "node:assert/strict";
import { CORDON_TAINT, applyTaints, parseTaints } from "./taints.js";

test("kubectl taint arguments", () => {
  const cases: Array<[string[], unknown]> = [
    [["dedicated=gpu:NoSchedule"], { add: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }], remove: [] }],
    [["example.io/maintenance:NoExecute"], { add: [{ key: "example.io/maintenance", effect: "NoExecute" }], remove: [] }],
    [["dedicated:NoSchedule-", "other-"], { add: [], remove: [{ key: "dedicated", effect: "NoSchedule" }, { key: "other" }] }],
    [["a=b:PreferNoSchedule", "c:NoExecute-"], { add: [{ key: "a", value: "b", effect: "PreferNoSchedule" }], remove: [{ key: "c", effect: "NoExecute" }] }],
  ];
  for (const [args, want] of cases) assert.deepEqual(parseTaints(args), want, args.join(" "));
});

test("malformed taints are refused naming what is wrong", () => {
  const cases: Array<[string[], RegExp]> = [
    [["dedicated=gpu"], /want key=value:Effect/],
    [["dedicated=gpu:Sometimes"], /invalid taint effect "Sometimes"/],
    [["bad key:NoSchedule"], /invalid taint key "bad key"/],
    [["k=bad value:NoSchedule"], /invalid taint value "bad value"/],
    [["k:Never-"], /invalid taint effect "Never"/],
    [["a:NoSchedule", "a=b:NoSchedule"], /given twice/],
    [[], /no taint given/],
  ];
  for (const [args, want] of cases) assert.throws(() => parseTaints(args), want, args.join(" "));
});

test("applying taints: key and effect are the identity; a new value needs --overwrite; removing a missing one is an error", () => {
  const cur = [{ key: "a", value: "1", effect: "NoSchedule" }, { key: "a", effect: "NoExecute", timeAdded: "2026-01-01T00:00:00Z" }];
  const cases: Array<[string, string[], boolean, unknown]> = [
    ["a new taint is added", ["b:NoSchedule"], false, { taints: [...cur, { key: "b", effect: "NoSchedule" }], changed: true }],
    ["the same taint again changes nothing", ["a=1:NoSchedule"], false, { taints: cur, changed: false }],
    ["another value with --overwrite replaces it", ["a=2:NoSchedule"], true, { taints: [{ key: "a", value: "2", effect: "NoSchedule" }, cur[1]], changed: true }],
    ["key:Effect- removes that effect only", ["a:NoExecute-"], false, { taints: [cur[0]], changed: true }],
    ["key- removes every effect", ["a-"], false, { taints: [], changed: true }],
  ];
  for (const [name, args, overwrite, want] of cases) assert.deepEqual(applyTaints("m1", cur, parseTaints(args), { overwrite }), want, name);
  assert.throws(() => applyTaints("m1", cur, parseTaints(["a=2:NoSchedule"])), /cluster m1 already has the taint a=1:NoSchedule; use --overwrite to make it a=2:NoSchedule/);
  assert.throws(() => applyTaints("m1", cur, parseTaints(["zz-"])), /taint "zz" not found on cluster m1/);
});

test("cordon is karmadactl's unschedulable NoSchedule taint", () => {
  assert.deepEqual(CORDON_TAINT, { key: "cluster.karmada.io/unschedulable", effect: "NoSchedule" });
  assert.deepEqual(applyTaints("m1", [], { add: [CORDON_TAINT], remove: [] }), { taints: [CORDON_TAINT], changed: true });
  assert.deepEqual(applyTaints("m1", [CORDON_TAINT], { add: [CORDON_TAINT], remove: [] }).changed, false);
});
