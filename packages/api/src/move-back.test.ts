import { test } from "node:test";
import assert from "node:assert/strict";
import { MoveBackAnnotation, moveBackOf, parseMoveBack, placementOf, placementText } from "./move-back.js";
import { validatePropagationPolicy } from "./validate.js";

const F = `metadata.annotations[${MoveBackAnnotation}]`;

test("the move-back annotation: valid values and the field each error names", () => {
  const cases: [string, string, { stabilizationSeconds: number; maxConcurrent: number } | [string, string][]][] = [
    ["both set", '{"stabilizationSeconds":600,"maxConcurrent":2}', { stabilizationSeconds: 600, maxConcurrent: 2 }],
    ["maxConcurrent defaults to 1", '{"stabilizationSeconds":0}', { stabilizationSeconds: 0, maxConcurrent: 1 }],
    ["not JSON", "600", [[F, "FieldValueTypeInvalid"]]],
    ["garbage", "{stabilization", [[F, "FieldValueInvalid"]]],
    ["an array", "[1]", [[F, "FieldValueTypeInvalid"]]],
    ["window missing", '{"maxConcurrent":1}', [[`${F}.stabilizationSeconds`, "FieldValueRequired"]]],
    ["window a string", '{"stabilizationSeconds":"10m"}', [[`${F}.stabilizationSeconds`, "FieldValueTypeInvalid"]]],
    ["window negative", '{"stabilizationSeconds":-1}', [[`${F}.stabilizationSeconds`, "FieldValueInvalid"]]],
    ["window over a week", '{"stabilizationSeconds":604801}', [[`${F}.stabilizationSeconds`, "FieldValueInvalid"]]],
    ["window fractional", '{"stabilizationSeconds":1.5}', [[`${F}.stabilizationSeconds`, "FieldValueTypeInvalid"]]],
    ["maxConcurrent 0", '{"stabilizationSeconds":1,"maxConcurrent":0}', [[`${F}.maxConcurrent`, "FieldValueInvalid"]]],
    ["an unknown field", '{"stabilizationSeconds":1,"window":3}', [[`${F}.window`, "FieldValueUnknown"]]],
  ];
  for (const [name, value, want] of cases) {
    const r = parseMoveBack(value);
    if (Array.isArray(want)) {
      assert.deepEqual(r.errors.map((e) => [e.field, e.reason]), want, name);
      assert.equal(r.config, undefined, name);
    } else assert.deepEqual(r.config, want, name);
  }
});

test("a policy with an invalid move-back annotation is refused naming it; a valid one passes", () => {
  const pp = (value: string) => ({
    apiVersion: "policy.karmada.io/v1alpha1",
    kind: "PropagationPolicy",
    metadata: { name: "p", namespace: "default", annotations: { [MoveBackAnnotation]: value } },
    spec: { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }], placement: {} },
  });
  assert.deepEqual(validatePropagationPolicy(pp('{"stabilizationSeconds":60}') as never), []);
  assert.deepEqual(validatePropagationPolicy(pp('{"stabilizationSeconds":-5}') as never).map((e) => e.field), [`${F}.stabilizationSeconds`]);
  assert.equal(moveBackOf({ [MoveBackAnnotation]: '{"stabilizationSeconds":60}' })?.stabilizationSeconds, 60);
  assert.equal(moveBackOf({ [MoveBackAnnotation]: "nope" }), undefined);
  assert.equal(moveBackOf(undefined), undefined);
});

test("placements as annotations: one text per placement, read back; anything else is undefined", () => {
  assert.equal(placementText([{ name: "member2", replicas: 2 }, { name: "member1", replicas: 1 }]), '[{"name":"member1","replicas":1},{"name":"member2","replicas":2}]');
  assert.deepEqual(placementOf(placementText([{ name: "member1" }])), [{ name: "member1", replicas: 0 }]);
  for (const bad of [undefined, "", "{}", "[1]", '[{"replicas":1}]', '[{"name":"a","replicas":"1"}]']) assert.equal(placementOf(bad), undefined, String(bad));
});
